import type { PreparedBlocks } from "../../modules/artifacts/service.js";
import type { RevisionRow } from "../../modules/skills/service.js";
import type { AgentDefinition, SkillDefinition } from "../definition.js";
import type { ToolOutcome } from "../store/tool-calls.js";
import type { StepDeps } from "../model-step.js";
import { OVERFLOW_BYTES, previewOf, saveAsArtifact } from "./overflow.js";

/*
 * The built-in `skill` tool: the SKILL.md of the revision the agent's config pinned, with the skill's file
 * list. It runs in a tool step because a long result is saved as an artifact (blob store), which never
 * happens inside a transaction.
 */

const TEXT = new Set(["text", "structured_data"] as const);

const MACHINES_NOTE =
  "The skill's other files are not installed anywhere yet: installing them onto the agent's machines comes with " +
  "svc's machines, which are not available yet. Follow the instructions above with the tools you have.";

export async function runSkillTool(
  deps: Pick<StepDeps, "skills" | "artifacts">,
  definition: AgentDefinition,
  input: unknown,
): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  const name = (input as { name?: unknown }).name;
  const pinned = definition.skills.find((s) => s.name === name);
  if (!pinned) {
    const attached = definition.skills.map((s) => s.name).join(", ") || "none";
    return failed(deps, `No skill named ${JSON.stringify(name)} is attached to this agent. Attached skills: ${attached}.`);
  }
  const revision = await deps.skills.readRevision(pinned.revisionId);
  if (!revision) return failed(deps, `The skill "${pinned.name}" was deleted after this agent's config was made; it cannot be loaded.`);
  const text = skillText(pinned, revision);
  const size = Buffer.byteLength(text, "utf8");
  if (size <= OVERFLOW_BYTES) return { outcome: "succeeded", prepared: await deps.artifacts.prepareContentBlocks([{ type: "text", text }], TEXT) };
  return { outcome: "succeeded", prepared: await overflow(deps, pinned.name, text, size) };
}

function skillText(skill: SkillDefinition, revision: RevisionRow): string {
  const files = revision.files.map((f) => `- ${f.path} (${f.size} bytes)`).join("\n");
  return `# Skill ${skill.name} (revision ${revision.revision})\n\n${revision.skillMd}\n\n## Files of this skill\n\n${files}\n\n${MACHINES_NOTE}\n`;
}

/** The whole text as a text/markdown artifact, and a marker with its path and a preview in its place. */
async function overflow(deps: Pick<StepDeps, "artifacts">, name: string, text: string, size: number): Promise<PreparedBlocks> {
  const { stored, ref } = await saveAsArtifact(deps.artifacts, text, "text/markdown", `${name}-SKILL.md`);
  const marker = { path: ref.path, preview: previewOf(text), size_bytes: size, content_type: ref.content_type, truncated: true };
  return { artifacts: stored.artifacts, blocks: [{ type: "structured_data", value: marker }, ...stored.blocks] };
}

async function failed(deps: Pick<StepDeps, "artifacts">, message: string): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  return { outcome: "failed", prepared: await deps.artifacts.prepareContentBlocks([{ type: "text", text: message }], TEXT) };
}
