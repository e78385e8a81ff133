import type { Tx } from "../../platform/db/index.js";
import type { DelegateDefinition, ToolDefinition } from "../../runtime/definition.js";
import { findProfileNamed } from "../agent-profiles/service.js";
import { describe, isObject, text, unknownKeys } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * The `delegates` section (docs/delegation.md): `{<handle>: {profile: <agent profile name>, description}}`.
 * Each profile must exist in the project when the config is compiled and is pinned by id; a child is
 * launched from that profile's config current at the `delegate` call. Declaring delegates enables the
 * `delegate`, `message_delegate` and `await_delegates` tools (compile.ts), and the `delegate` tool's
 * description and `to` enum list the handles with their descriptions.
 */

export interface DelegateChoice {
  handle: string;
  profile: string;
  description: string;
}

/** Claude Managed Agents' multiagent sessions cap a coordinator's roster; 16 keeps the delegate tool's description short. */
const MAX_DELEGATES = 16;
const HANDLE = /^[a-z][a-z0-9_]{0,31}$/;
const MAX_DESCRIPTION = 1000;

export function readDelegatesSection(issues: ConfigIssues, value: unknown): DelegateChoice[] {
  if (!isObject(value)) {
    issues.add(["delegates"], `must be an object from handles to {profile, description}, such as {researcher: {profile: research, description: "…"}}; got ${describe(value)}`);
    return [];
  }
  const handles = Object.keys(value);
  if (handles.length === 0) issues.add(["delegates"], "must name at least one delegate");
  if (handles.length > MAX_DELEGATES) issues.add(["delegates"], `at most ${MAX_DELEGATES} delegates; got ${handles.length}`);
  const choices: DelegateChoice[] = [];
  for (const handle of handles) {
    const path = ["delegates", handle];
    if (!HANDLE.test(handle)) issues.addAtKey(path, `a handle is a lowercase letter then up to 31 lowercase letters, digits or underscores; got "${handle}"`);
    const entry = value[handle];
    if (!isObject(entry)) {
      issues.add(path, `must be an object with profile and description; got ${describe(entry)}`);
      continue;
    }
    unknownKeys(issues, path, entry, ["profile", "description"]);
    const profile = "profile" in entry ? text(issues, [...path, "profile"], entry["profile"], 64) : undefined;
    if (!("profile" in entry)) issues.add([...path, "profile"], "is required: the name of an agent profile of this project");
    const description = "description" in entry ? text(issues, [...path, "description"], entry["description"], MAX_DESCRIPTION) : undefined;
    if (!("description" in entry)) issues.add([...path, "description"], "is required: when the coordinator should use this delegate");
    if (profile !== undefined && description !== undefined && HANDLE.test(handle)) choices.push({ handle, profile, description });
  }
  return choices;
}

/** Pins each delegate's profile by id; an unknown profile is an issue at its `profile` value. */
export async function resolveDelegates(tx: Tx, projectId: string, choices: readonly DelegateChoice[], issues: ConfigIssues): Promise<DelegateDefinition[]> {
  const delegates: DelegateDefinition[] = [];
  for (const choice of choices) {
    const profile = await findProfileNamed(tx, projectId, choice.profile);
    if (!profile) issues.add(["delegates", choice.handle, "profile"], `no agent profile named "${choice.profile}" in this project`);
    else delegates.push({ handle: choice.handle, profileId: profile.id, profileName: profile.name, description: choice.description });
  }
  return delegates;
}

/** The `delegate` tool as this config's model sees it: its handles listed in the description and enumerated in `to`. */
export function withDelegateRoster(tool: ToolDefinition, delegates: readonly DelegateDefinition[]): ToolDefinition {
  if (tool.name !== "delegate" || tool.type !== "built_in" || delegates.length === 0) return tool;
  const roster = delegates.map((d) => `- ${d.handle}: ${d.description}`).join("\n");
  const schema = tool.inputSchema as { properties: Record<string, Record<string, unknown>> };
  const to = { ...schema.properties["to"], enum: delegates.map((d) => d.handle) };
  return { ...tool, description: `${tool.description}\n\nYour delegates:\n${roster}`, inputSchema: { ...tool.inputSchema, properties: { ...schema.properties, to } } };
}
