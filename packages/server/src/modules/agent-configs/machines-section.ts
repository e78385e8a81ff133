import type { Tx } from "../../platform/db/index.js";
import type { AppError } from "../../platform/errors.js";
import { decodeId } from "../../platform/ids.js";
import type { MachineSourceDefinition } from "../../runtime/definition.js";
import { machineGrantedTo, type LaunchProblem } from "../machines/bindings.js";
import { grantedPool, sourceLimitProblems } from "../machines/pool-machines.js";
import { findProjectSecret } from "../secrets/store.js";
import { count, describe, has, isObject, text, unknownKeys, type Path } from "./fields.js";
import { ConfigIssues } from "./issues.js";
import { readSource } from "./read-source.js";
import type { SourceFormat } from "./source.js";

/**
 * The `machine_sources` section: the machines an agent holds. A source is either a BYO machine named by its
 * display name (`machine_name`) or a pool granted to the project (`machine_pool_name`), with the agent's
 * working directory and environment overlays; a pool source also sets machine size, how many machines
 * launch makes (`initial_num_machines`, default 1) and may exist (`max_machines`, default 1), and the idle
 * period. Names are checked against the project's grants when the config is compiled, and again at launch.
 */

interface SourceCommon {
  cwd: string;
  envOverlay: Record<string, string | null>;
  /** Variable → secret UUID; the public ids are checked when the config is compiled. */
  secretEnvOverlay: Record<string, string | null>;
  index: number;
}

export type MachineSourceChoice =
  | (SourceCommon & { kind: "machine"; machineName: string })
  | (SourceCommon & {
      kind: "pool";
      poolName: string;
      machineCpu: number | null;
      machineMemoryMb: number | null;
      initialNumMachines: number;
      maxMachines: number;
      deleteAfterIdleMinutes?: number;
    });

const COMMON_KEYS = ["cwd", "env_overlay", "secret_env_overlay"];
const POOL_KEYS = ["machine_cpu", "machine_memory_mb", "initial_num_machines", "max_machines", "delete_after_idle_minutes"];
const SOURCE_KEYS = ["machine_name", "machine_pool_name", ...COMMON_KEYS, ...POOL_KEYS];
/** The reference caps machines per agent low; 16 keeps an agent's `list_machines` readable. */
const MAX_SOURCES = 16;
/** Per pool source: machines made at launch, and held at once. */
const MAX_POOL_MACHINES = 16;
const MAX_ENV = 128;
const MAX_PATH = 4096;
const MAX_VALUE = 32 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SECRET_ID = /^sec_[a-z2-7]{26}$/;

export function readMachineSourcesSection(issues: ConfigIssues, value: unknown): MachineSourceChoice[] {
  if (!Array.isArray(value)) {
    issues.add(["machine_sources"], `must be a list of machine sources such as {machine_name: build-server-1}; got ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_SOURCES) issues.add(["machine_sources"], `at most ${MAX_SOURCES} machine sources; got ${value.length}`);
  const names = new Set<string>();
  const choices: MachineSourceChoice[] = [];
  value.forEach((source: unknown, index) => {
    const choice = readOneSource(issues, ["machine_sources", index], source, index);
    if (!choice) return;
    const [name, key, what] = choice.kind === "machine" ? [`m:${choice.machineName}`, "machine_name", "machine"] : [`p:${choice.poolName}`, "machine_pool_name", "machine pool"];
    if (names.has(name)) issues.add(["machine_sources", index, key], `${what} "${name.slice(2)}" is listed twice`);
    else {
      names.add(name);
      choices.push(choice);
    }
  });
  return choices;
}

function readOneSource(issues: ConfigIssues, path: Path, value: unknown, index: number): MachineSourceChoice | undefined {
  if (!isObject(value)) {
    issues.add(path, `must be an object such as {machine_name: build-server-1, cwd: /srv/repo} or {machine_pool_name: sandbox-pool}; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, SOURCE_KEYS);
  const byo = has(value, "machine_name");
  const pool = has(value, "machine_pool_name");
  if (byo && pool) {
    issues.addAtKey([...path, "machine_pool_name"], "a source is either a machine (machine_name) or a pool (machine_pool_name), not both");
    return undefined;
  }
  if (!byo && !pool) {
    issues.add([...path, "machine_name"], "is required: the display name of a machine granted to this project (or machine_pool_name, a pool granted to it)");
    return undefined;
  }
  if (byo) for (const key of POOL_KEYS) if (has(value, key)) issues.addAtKey([...path, key], `only pool sources (machine_pool_name) take ${key}`);
  const common = {
    cwd: has(value, "cwd") ? text(issues, [...path, "cwd"], value["cwd"], MAX_PATH) : "",
    envOverlay: has(value, "env_overlay") ? readEnvOverlay(issues, [...path, "env_overlay"], value["env_overlay"], false) : {},
    secretEnvOverlay: has(value, "secret_env_overlay") ? readEnvOverlay(issues, [...path, "secret_env_overlay"], value["secret_env_overlay"], true) : {},
    index,
  };
  secretsAlsoPlain(issues, path, common.envOverlay, common.secretEnvOverlay);
  const name = text(issues, [...path, byo ? "machine_name" : "machine_pool_name"], value[byo ? "machine_name" : "machine_pool_name"], 200);
  if (byo) {
    if (issues.count !== before || name === undefined || common.cwd === undefined) return undefined;
    return { kind: "machine", machineName: name, ...common, cwd: common.cwd };
  }
  const optional = (key: string, min: number) => (has(value, key) ? count(issues, [...path, key], value[key], min) : undefined);
  const maxMachines = optional("max_machines", 1) ?? 1;
  const initialNumMachines = optional("initial_num_machines", 0) ?? Math.min(1, maxMachines);
  if (maxMachines > MAX_POOL_MACHINES) issues.add([...path, "max_machines"], `at most ${MAX_POOL_MACHINES} machines per pool source; got ${maxMachines}`);
  const idle = optional("delete_after_idle_minutes", 0);
  if (idle !== undefined && idle > 0 && idle < 5) issues.add([...path, "delete_after_idle_minutes"], `must be 0 (never) or at least 5; got ${idle}`);
  const choice = {
    kind: "pool" as const,
    poolName: name ?? "",
    machineCpu: optional("machine_cpu", 1) ?? null,
    machineMemoryMb: optional("machine_memory_mb", 1) ?? null,
    initialNumMachines,
    maxMachines,
    ...(idle === undefined ? {} : { deleteAfterIdleMinutes: idle }),
    ...common,
    cwd: common.cwd ?? "",
  };
  return issues.count !== before || name === undefined ? undefined : choice;
}

/** A name set both as a variable and as a secret would leave the process one of them at random. */
function secretsAlsoPlain(issues: ConfigIssues, path: Path, env: Record<string, unknown>, secrets: Record<string, unknown>): void {
  const plain = new Set(Object.keys(env).map((n) => n.toUpperCase()));
  for (const name of Object.keys(secrets)) {
    if (plain.has(name.toUpperCase())) issues.addAtKey([...path, "secret_env_overlay", name], "is set in env_overlay too; each name may be set once");
  }
}

/**
 * Names as a shell takes them; `SVC_` is svc's own (case-insensitively); null removes the machine's value.
 * Secret overlays map names to `sec_…` ids, kept public here and checked against the project's secrets later.
 */
function readEnvOverlay(issues: ConfigIssues, path: Path, value: unknown, secret: boolean): Record<string, string | null> {
  if (!isObject(value)) {
    issues.add(path, `must be an object from variable names to ${secret ? "secret ids (sec_…)" : "values"}; got ${describe(value)}`);
    return {};
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_ENV) issues.add(path, `at most ${MAX_ENV} variables; got ${entries.length}`);
  const overlay: Record<string, string | null> = {};
  for (const [name, entry] of entries) {
    if (!ENV_NAME.test(name)) issues.addAtKey([...path, name], "variable names are letters, digits and _, not starting with a digit");
    else if (name.toUpperCase().startsWith("SVC_")) issues.addAtKey([...path, name], "names starting with SVC_ are reserved for svc");
    else if (entry === null) overlay[name] = null;
    else if (secret && (typeof entry !== "string" || !SECRET_ID.test(entry))) issues.add([...path, name], `must be a secret id (sec_…) or null; got ${describe(entry)}`);
    else {
      const checked = text(issues, [...path, name], entry, MAX_VALUE);
      if (checked !== undefined) overlay[name] = checked;
    }
  }
  return overlay;
}

/**
 * Each source as the definition keeps it: a BYO machine must be live and granted to the project, a pool
 * granted to it with the source's size and limits within the grant's; secret overlays must name generic
 * secrets the project owns or was granted. Anything else is an issue at the source.
 */
export async function resolveMachineSources(
  tx: Tx,
  orgId: string,
  projectId: string,
  choices: readonly MachineSourceChoice[],
  issues: ConfigIssues,
): Promise<MachineSourceDefinition[]> {
  const sources: MachineSourceDefinition[] = [];
  for (const choice of choices) {
    const path = ["machine_sources", choice.index];
    const secretEnvOverlay = await secretRefs(tx, orgId, projectId, choice, issues);
    if (choice.kind === "machine") {
      const machine = await machineGrantedTo(tx, orgId, projectId, choice.machineName);
      if (!machine) {
        issues.add([...path, "machine_name"], `no connected machine named "${choice.machineName}" is granted to this project`);
        continue;
      }
      sources.push({ kind: "machine", machineId: machine.id, machineName: choice.machineName, cwd: choice.cwd, envOverlay: choice.envOverlay, secretEnvOverlay });
      continue;
    }
    const granted = await grantedPool(tx, orgId, projectId, choice.poolName);
    if (!granted) {
      issues.add([...path, "machine_pool_name"], `no machine pool named "${choice.poolName}" is granted to this project`);
      continue;
    }
    const { kind: _kind, index: _index, poolName, ...rest } = choice;
    const source = { ...rest, kind: "pool" as const, poolId: granted.pool.id, poolName, secretEnvOverlay };
    const problems = sourceLimitProblems(granted, source);
    for (const problem of problems) issues.add([...path, has(choiceKeys(choice), problem.field) ? problem.field : "machine_pool_name"], problem.message);
    if (problems.length === 0) sources.push(source);
  }
  return sources;
}

/** The fields a pool source set itself, so a limit problem points at the field when the author wrote it. */
function choiceKeys(choice: MachineSourceChoice): Record<string, unknown> {
  if (choice.kind !== "pool") return {};
  return {
    ...(choice.machineCpu === null ? {} : { machine_cpu: 1 }),
    ...(choice.machineMemoryMb === null ? {} : { machine_memory_mb: 1 }),
    max_machines: 1,
    initial_num_machines: 1,
  };
}

async function secretRefs(tx: Tx, orgId: string, projectId: string, choice: MachineSourceChoice, issues: ConfigIssues): Promise<Record<string, string | null>> {
  const refs: Record<string, string | null> = {};
  for (const [name, publicId] of Object.entries(choice.secretEnvOverlay)) {
    if (publicId === null) {
      refs[name] = null;
      continue;
    }
    const secretId = decodeId("secret", publicId);
    const found = secretId ? await findProjectSecret(tx, orgId, projectId, secretId) : undefined;
    const path = ["machine_sources", choice.index, "secret_env_overlay", name];
    if (!found) issues.add(path, `no secret ${publicId} is owned by or granted to this project`);
    else if (found.secret.kind !== "generic") issues.add(path, `must be a generic secret; ${publicId} is ${found.secret.kind}`);
    else refs[name] = secretId!;
  }
  return refs;
}

/** Launch problems (machines.bindMachines) as a 400 whose issues carry the line and column in the config's source. */
export function launchIssues(config: { source: string; sourceFormat: string }, problems: readonly LaunchProblem[]): AppError {
  const located = new ConfigIssues();
  const { parsed } = readSource(config.source, config.sourceFormat as SourceFormat, new ConfigIssues());
  for (const problem of problems) located.add(problem.path, problem.message);
  try {
    located.throwIfAny(config.source, parsed);
  } catch (err) {
    return err as AppError;
  }
  throw new Error("launch problems without issues");
}
