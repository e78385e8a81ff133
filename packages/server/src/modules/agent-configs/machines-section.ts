import type { Tx } from "../../platform/db/index.js";
import type { MachineSourceDefinition } from "../../runtime/definition.js";
import { machineGrantedTo } from "../machines/bindings.js";
import { describe, has, isObject, text, unknownKeys, type Path } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * The `machine_sources` section: the machines an agent holds, each a BYO machine named by its display name
 * (`machine_name`) with the agent's working directory and environment overlay on it. The machine must be
 * live and granted to the project when the config is compiled, and again when an agent launches.
 * Pool sources (`machine_pool_name`) and secret overlays come with pools.
 */

export interface MachineSourceChoice {
  machineName: string;
  cwd: string;
  envOverlay: Record<string, string | null>;
  index: number;
}

const SOURCE_KEYS = ["machine_name", "cwd", "env_overlay", "secret_env_overlay", "machine_pool_name"];
/** The reference caps machines per agent low; 16 keeps an agent's `list_machines` readable. */
const MAX_SOURCES = 16;
const MAX_ENV = 128;
const MAX_PATH = 4096;
const MAX_VALUE = 32 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function readMachineSourcesSection(issues: ConfigIssues, value: unknown): MachineSourceChoice[] {
  if (!Array.isArray(value)) {
    issues.add(["machine_sources"], `must be a list of machine sources such as {machine_name: build-server-1}; got ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_SOURCES) issues.add(["machine_sources"], `at most ${MAX_SOURCES} machine sources; got ${value.length}`);
  const names = new Set<string>();
  const choices: MachineSourceChoice[] = [];
  value.forEach((source: unknown, index) => {
    const choice = readSource(issues, ["machine_sources", index], source, index);
    if (!choice) return;
    if (names.has(choice.machineName)) issues.add(["machine_sources", index, "machine_name"], `machine "${choice.machineName}" is listed twice`);
    else {
      names.add(choice.machineName);
      choices.push(choice);
    }
  });
  return choices;
}

function readSource(issues: ConfigIssues, path: Path, value: unknown, index: number): MachineSourceChoice | undefined {
  if (!isObject(value)) {
    issues.add(path, `must be an object such as {machine_name: build-server-1, cwd: /srv/repo}; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, SOURCE_KEYS);
  if (has(value, "machine_pool_name")) issues.addAtKey([...path, "machine_pool_name"], "machine pools are not supported in agent configs yet; name a connected machine with machine_name");
  if (has(value, "secret_env_overlay")) issues.addAtKey([...path, "secret_env_overlay"], "secret_env_overlay is not supported yet; set secret_env on the machine");
  if (!has(value, "machine_name")) {
    if (!has(value, "machine_pool_name")) issues.add([...path, "machine_name"], "is required: the display name of a machine granted to this project");
    return undefined;
  }
  const machineName = text(issues, [...path, "machine_name"], value["machine_name"], 200);
  const cwd = has(value, "cwd") ? text(issues, [...path, "cwd"], value["cwd"], MAX_PATH) : "";
  const envOverlay = has(value, "env_overlay") ? readEnvOverlay(issues, [...path, "env_overlay"], value["env_overlay"]) : {};
  if (issues.count !== before || machineName === undefined || cwd === undefined) return undefined;
  return { machineName, cwd, envOverlay, index };
}

/** Names as a shell takes them; `SVC_` is svc's own (case-insensitively); null removes the machine's value. */
function readEnvOverlay(issues: ConfigIssues, path: Path, value: unknown): Record<string, string | null> {
  if (!isObject(value)) {
    issues.add(path, `must be an object from variable names to values; got ${describe(value)}`);
    return {};
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_ENV) issues.add(path, `at most ${MAX_ENV} variables; got ${entries.length}`);
  const overlay: Record<string, string | null> = {};
  for (const [name, entry] of entries) {
    if (!ENV_NAME.test(name)) issues.addAtKey([...path, name], "variable names are letters, digits and _, not starting with a digit");
    else if (name.toUpperCase().startsWith("SVC_")) issues.addAtKey([...path, name], "names starting with SVC_ are reserved for svc");
    else if (entry === null) overlay[name] = null;
    else {
      const checked = text(issues, [...path, name], entry, MAX_VALUE);
      if (checked !== undefined) overlay[name] = checked;
    }
  }
  return overlay;
}

/** Each named machine as the definition keeps it; one that is not live and granted to the project is an issue. */
export async function resolveMachineSources(
  tx: Tx,
  orgId: string,
  projectId: string,
  choices: readonly MachineSourceChoice[],
  issues: ConfigIssues,
): Promise<MachineSourceDefinition[]> {
  const sources: MachineSourceDefinition[] = [];
  for (const choice of choices) {
    const machine = await machineGrantedTo(tx, orgId, projectId, choice.machineName);
    if (!machine) {
      issues.add(["machine_sources", choice.index, "machine_name"], `no connected machine named "${choice.machineName}" is granted to this project`);
      continue;
    }
    sources.push({ kind: "machine", machineId: machine.id, machineName: choice.machineName, cwd: choice.cwd, envOverlay: choice.envOverlay });
  }
  return sources;
}
