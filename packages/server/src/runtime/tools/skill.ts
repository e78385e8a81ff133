import { and, eq } from "drizzle-orm";
import { toolCalls } from "../../db/schema/index.js";
import type { ArtifactsService, PreparedBlocks } from "../../modules/artifacts/service.js";
import type { RevisionRow } from "../../modules/skills/service.js";
import { encodeId } from "../../platform/ids.js";
import type { AgentDefinition, SkillDefinition } from "../definition.js";
import type { StepDeps } from "../model-step.js";
import { lockAgent } from "../store/journal.js";
import { expireInstalls, installsOfCall, settledWaitingCalls, startInstalls, waitingCall, withMachineNames, type InstallWithMachine } from "../store/skill-installs.js";
import { completeToolCall, type ToolCallRow, type ToolOutcome } from "../store/tool-calls.js";
import type { AgentMachines } from "./machine-tools.js";
import { OVERFLOW_BYTES, previewOf, saveAsArtifact } from "./overflow.js";

/*
 * The built-in `skill` tool: the SKILL.md of the revision the agent's config pinned, with the skill's file
 * list, and the skill's files installed on each attached machine (reference: tools/skills, "Attach it to
 * an agent"; reference design-brief.md §7 `skill_offer`/`skill_report`). It runs in a tool step because a long result
 * is saved as an artifact (blob store), which never happens inside a transaction.
 *
 * With machines attached, the step records one install per machine and leaves the call `waiting`: it holds
 * neither a transaction nor a worker slot while daemons download and unpack. The daemons' reports (modules/
 * daemon) and, at the deadline, maintenance end the installs; whichever ends the last one completes the
 * call with `completeSkillCall`, as a process report completes run_command.
 */

const TEXT = new Set(["text", "structured_data"] as const);
/** How long a call waits for its machines by default (`SVC_SKILL_INSTALL_TIMEOUT_SECONDS`). */
export const DEFAULT_INSTALL_SECONDS = 30;

type SkillDeps = Pick<StepDeps, "db" | "signals" | "skills" | "artifacts" | "skillInstallSeconds" | "machines">;
/** What completing a call needs, also outside the worker (daemon reports, maintenance). */
export interface SkillCompletionDeps {
  db: StepDeps["db"];
  skills: StepDeps["skills"];
  artifacts: Pick<ArtifactsService, "prepareContentBlocks" | "recordArtifacts">;
  /** The machines' names for the result; without the machines module there are no installs to name. */
  machines: Pick<AgentMachines, "names"> | undefined;
}
type Result = { outcome: ToolOutcome; prepared: PreparedBlocks };

/**
 * Runs a claimed `skill` call: its result, or `waiting` when machines were asked to install the files
 * (the call then completes later, through `completeSkillCall`).
 */
export async function runSkillTool(deps: SkillDeps, step: { agentId: string; lockId: string }, call: ToolCallRow, definition: AgentDefinition): Promise<Result | "waiting"> {
  const name = (call.input as { name?: unknown }).name;
  const pinned = definition.skills.find((s) => s.name === name);
  if (!pinned) {
    const attached = definition.skills.map((s) => s.name).join(", ") || "none";
    return failed(deps, `No skill named ${JSON.stringify(name)} is attached to this agent. Attached skills: ${attached}.`);
  }
  const revision = await deps.skills.readRevision(pinned.revisionId);
  if (!revision) return failed(deps, `The skill "${pinned.name}" was deleted after this agent's config was made; it cannot be loaded.`);
  const installs = await offerToMachines(deps, step, call, pinned, revision);
  if (installs === "waiting") return "waiting";
  return { outcome: "succeeded", prepared: await skillResult(deps, pinned.name, revision, installs) };
}

/** One short transaction: the installs, and the call `waiting` when any machine was asked. */
async function offerToMachines(deps: SkillDeps, step: { agentId: string; lockId: string }, call: ToolCallRow, pinned: SkillDefinition, revision: RevisionRow): Promise<InstallWithMachine[] | "waiting"> {
  return deps.db.tx(async (tx) => {
    const agent = await lockAgent(tx, step.agentId);
    if (!agent) return [];
    const [running] = await tx.select().from(toolCalls).where(and(eq(toolCalls.id, call.id), eq(toolCalls.runtimeLockId, step.lockId), eq(toolCalls.state, "running")));
    // Canceled or reaped meanwhile: nothing is asked of the machines, and recording the result will do nothing either.
    if (!running) return [];
    const skill = { skillId: revision.skillId, revisionId: revision.id, name: pinned.name, digest: revision.archiveDigest };
    const targets = deps.machines ? await deps.machines.attached(tx, agent) : [];
    const installs = await startInstalls(tx, deps.signals, agent, running, skill, deps.skillInstallSeconds ?? DEFAULT_INSTALL_SECONDS, targets);
    return installs.some((i) => i.state === "pending") ? "waiting" : installs;
  });
}

/**
 * Completes a waiting `skill` call once none of its installs is pending: the result is made outside any
 * transaction (it may become an artifact), then recorded only if the call still waits. Called after each
 * report and by the deadline sweep; when two finish at once, the second finds the call completed.
 */
export async function completeSkillCall(deps: SkillCompletionDeps, toolCallId: string): Promise<boolean> {
  const call = await waitingCall(deps.db.read, toolCallId);
  if (!call) return false;
  const rows = await installsOfCall(deps.db.read, toolCallId);
  if (rows.length === 0 || rows.some((i) => i.state === "pending")) return false;
  const names = deps.machines ? await deps.machines.names(deps.db.read, [...new Set(rows.map((row) => row.machineId))]) : new Map<string, string>();
  const installs = withMachineNames(rows, names);
  const revision = await deps.skills.readRevision(installs[0]!.revisionId);
  const result: Result = revision
    ? { outcome: "succeeded", prepared: await skillResult(deps, installs[0]!.skillName, revision, installs) }
    : await failed(deps, `The skill "${installs[0]!.skillName}" was deleted while it was being installed; it cannot be loaded.`);
  return deps.db.tx(async (tx) => {
    const agent = await lockAgent(tx, call.agentId);
    const current = agent ? await waitingCall(tx, toolCallId) : undefined;
    if (!agent || !current) return false;
    await deps.artifacts.recordArtifacts(tx, result.prepared, { orgId: agent.orgId, projectId: agent.projectId, agentId: agent.id });
    await tx.commitWith(() => completeToolCall(tx, agent, current, result.outcome, result.prepared.blocks, { wake: "skill_installed" }));
    return true;
  });
}

const SWEEP_BATCH = 100;

/**
 * Maintenance: installs past their deadline end `timeout`, and every call left with no pending install
 * completes, so no `skill` call waits longer than its deadline plus a maintenance interval.
 */
export async function sweepSkillInstalls(deps: SkillCompletionDeps): Promise<number> {
  const expired = await expireInstalls(deps.db.write, SWEEP_BATCH);
  const settled = await settledWaitingCalls(deps.db.read, SWEEP_BATCH);
  for (const toolCallId of new Set([...expired, ...settled])) await completeSkillCall(deps, toolCallId);
  return expired.length + settled.length;
}

/** SKILL.md with the file list and where the files went, and the installs as structured data. */
async function skillResult(deps: Pick<SkillCompletionDeps, "artifacts">, name: string, revision: RevisionRow, installs: InstallWithMachine[]): Promise<PreparedBlocks> {
  const text = skillText(name, revision, installs);
  const installations = { type: "structured_data" as const, value: { skill: name, revision: revision.revision, installations: installs.map(installView) } };
  const size = Buffer.byteLength(text, "utf8");
  if (size <= OVERFLOW_BYTES) return deps.artifacts.prepareContentBlocks([{ type: "text", text }, installations], TEXT);
  // The whole text as a text/markdown artifact, and a marker with its path and a preview in its place.
  const { stored, ref } = await saveAsArtifact(deps.artifacts, text, "text/markdown", `${name}-SKILL.md`);
  const marker = { path: ref.path, preview: previewOf(text), size_bytes: size, content_type: ref.content_type, truncated: true };
  const rest = await deps.artifacts.prepareContentBlocks([{ type: "structured_data", value: marker }, installations], TEXT);
  return { artifacts: stored.artifacts, blocks: [rest.blocks[0]!, ...stored.blocks, rest.blocks[1]!] };
}

function installView(install: InstallWithMachine) {
  return {
    machine_id: encodeId("machine", install.machineId),
    machine_name: install.machineName,
    state: install.state,
    ...(install.installPath ? { path: install.installPath } : {}),
    ...(install.error ? { error: install.error } : {}),
  };
}

function skillText(name: string, revision: RevisionRow, installs: InstallWithMachine[]): string {
  const files = revision.files.map((f) => `- ${f.path} (${f.size} bytes)`).join("\n");
  return `# Skill ${name} (revision ${revision.revision})\n\n${revision.skillMd}\n\n## Files of this skill\n\n${files}\n\n${machinesSection(installs)}\n`;
}

function machinesSection(installs: InstallWithMachine[]): string {
  if (installs.length === 0) {
    return "No machine is attached to this agent, so the skill's files were not installed anywhere. Follow the instructions above with the tools you have.";
  }
  const lines = installs.map((i) => {
    const machine = `${i.machineName} (${encodeId("machine", i.machineId)})`;
    return i.state === "ready" ? `- ${machine}: ready, the files are in ${i.installPath}` : `- ${machine}: ${i.state}${i.error ? `: ${i.error}` : ""}`;
  });
  return (
    "## Installed on your machines\n\n" +
    `${lines.join("\n")}\n\n` +
    "Paths in the instructions are relative to the skill's folder: on a machine where the install is ready, use the folder shown."
  );
}

async function failed(deps: Pick<SkillCompletionDeps, "artifacts">, message: string): Promise<Result> {
  return { outcome: "failed", prepared: await deps.artifacts.prepareContentBlocks([{ type: "text", text: message }], TEXT) };
}
