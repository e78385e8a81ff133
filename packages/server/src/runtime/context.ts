import { and, asc, desc, eq, gt, inArray, lte } from "drizzle-orm";
import { agentEvents, agentInputs, contextCheckpoints, modelOutputs, toolCallResults, toolCalls } from "../db/schema/index.js";
import type { AppDb } from "../platform/db/index.js";
import { decodeId } from "../platform/ids.js";
import type { ModelBinding } from "./definition.js";
import type { AssistantContentPart, JsonObject, ModelMessage, ProviderReplay, ToolResultPart, UserContentPart } from "./models/types.js";

/*
 * The conversation a model call sees (design brief §3.4 step 4): the latest checkpoint's summary, then
 * every event after it up to the call's watermark, rendered as messages. Tool results follow the
 * assistant message that asked for them, wherever their events sit on the timeline.
 */

/** An artifact of the agent with its bytes, or null when it is gone. */
export type MediaLoader = (agentId: string, artifactId: string) => Promise<{ row: { contentType: string; filename: string | null }; bytes: Buffer } | null>;

export interface TimelineItem {
  sequence: number;
  /** Rough token count of what the item contributes, for budgets and compaction planning. */
  tokens: number;
  /** Items that must stay together: a tool-use output and its results carry the output's sequence. */
  group: number;
  messages: ModelMessage[];
}

export interface Conversation {
  checkpoint: { summary: string; through: number } | null;
  items: TimelineItem[];
}

/** The scope provider replay data is valid in: the same provider config, model and wire format. */
export function replayScope(model: ModelBinding): string {
  return `${model.modelProviderConfigId}:${model.providerModelSlug}:${model.apiFormat}`;
}

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export async function loadConversation(db: AppDb, agentId: string, watermark: number, model: ModelBinding, media: MediaLoader): Promise<Conversation> {
  const [checkpoint] = await db
    .select({ summary: contextCheckpoints.summary, through: contextCheckpoints.summarizedThroughEventSequence })
    .from(agentEvents)
    .innerJoin(contextCheckpoints, eq(contextCheckpoints.id, agentEvents.contextCheckpointId))
    .where(and(eq(agentEvents.agentId, agentId), eq(agentEvents.eventKind, "context_checkpoint"), lte(agentEvents.sequence, watermark)))
    .orderBy(desc(agentEvents.sequence))
    .limit(1);
  const from = checkpoint?.through ?? 0;
  const events = await db
    .select()
    .from(agentEvents)
    .where(and(eq(agentEvents.agentId, agentId), gt(agentEvents.sequence, from), lte(agentEvents.sequence, watermark)))
    .orderBy(asc(agentEvents.sequence));
  const ids = (pick: (e: (typeof events)[number]) => string | null) => events.map(pick).filter((v): v is string => v !== null);
  const inputIds = ids((e) => e.agentInputId);
  const outputIds = ids((e) => e.modelOutputId);
  const inputs = inputIds.length ? await db.select().from(agentInputs).where(inArray(agentInputs.id, inputIds)) : [];
  const outputs = outputIds.length ? await db.select().from(modelOutputs).where(inArray(modelOutputs.id, outputIds)) : [];
  const calls = outputIds.length ? await db.select().from(toolCalls).where(inArray(toolCalls.modelOutputId, outputIds)) : [];
  const callIds = calls.map((c) => c.id);
  const results = callIds.length ? await db.select().from(toolCallResults).where(inArray(toolCallResults.toolCallId, callIds)) : [];
  const resultSequence = new Map(events.filter((e) => e.toolCallId).map((e) => [e.toolCallId!, e.sequence]));
  const inputById = new Map(inputs.map((i) => [i.id, i]));
  const outputById = new Map(outputs.map((o) => [o.id, o]));
  const resultByCall = new Map(results.filter((r) => resultSequence.has(r.toolCallId)).map((r) => [r.toolCallId, r]));
  const scope = replayScope(model);

  const items: TimelineItem[] = [];
  for (const event of events) {
    if (event.agentInputId) {
      const input = inputById.get(event.agentInputId)!;
      const message = await inputMessage(input, event.sequence, (artifactId) => media(agentId, artifactId));
      if (message) items.push(item(event.sequence, event.sequence, [message]));
    } else if (event.modelOutputId) {
      const output = outputById.get(event.modelOutputId)!;
      const ownCalls = calls.filter((c) => c.modelOutputId === output.id);
      const messages = outputMessages(output, ownCalls, resultByCall, output.replayScope === scope);
      items.push(item(event.sequence, event.sequence, messages));
    }
  }
  return { checkpoint: checkpoint ? { summary: checkpoint.summary, through: checkpoint.through } : null, items };
}

function item(sequence: number, group: number, messages: ModelMessage[]): TimelineItem {
  return { sequence, group, messages, tokens: estimateTokens(JSON.stringify(messages)) };
}

type InputRow = typeof agentInputs.$inferSelect;
type Block = { type: string; text?: string; value?: unknown; artifact_id?: string; tool_call_id?: string; name?: string; input?: JsonObject };

async function inputMessage(input: InputRow, sequence: number, media: (artifactId: string) => ReturnType<MediaLoader>): Promise<ModelMessage | null> {
  if (input.inputKind === "config_change") {
    return sequence === 1 ? null : { role: "user", content: "[svc: the agent's configuration was changed; the new instructions and tools apply from here.]" };
  }
  if (input.inputKind === "control") return { role: "user", content: "[svc: the user stopped the previous request.]" };
  if (input.inputKind !== "content") return null;
  const parts: UserContentPart[] = [];
  for (const block of input.contentBlocks as Block[]) {
    if (block.type === "text") parts.push({ type: "text", text: block.text ?? "" });
    if (block.type === "media_ref" && block.artifact_id) {
      const artifactId = decodeId("artifact", block.artifact_id);
      const file = artifactId ? await media(artifactId) : null;
      if (!file) parts.push({ type: "text", text: `[attachment ${block.artifact_id} is no longer available]` });
      else if (file.row.contentType.startsWith("image/")) parts.push({ type: "image", mediaType: file.row.contentType, source: { data: file.bytes } });
      else if (file.row.contentType.startsWith("text/")) parts.push({ type: "text", text: `[attachment ${file.row.filename ?? block.artifact_id}]\n${file.bytes.toString("utf8")}` });
      else parts.push({ type: "file", mediaType: file.row.contentType, ...(file.row.filename ? { filename: file.row.filename } : {}), source: { data: file.bytes } });
    }
  }
  return { role: "user", content: parts };
}

type OutputRow = typeof modelOutputs.$inferSelect;
type CallRow = typeof toolCalls.$inferSelect;
type ResultRow = typeof toolCallResults.$inferSelect;

function outputMessages(output: OutputRow, calls: CallRow[], results: Map<string, ResultRow>, replay: boolean): ModelMessage[] {
  const blocks = output.contentBlocks as Block[];
  const replays = output.providerReplay as Array<ProviderReplay | null>;
  const parts: AssistantContentPart[] = [];
  blocks.forEach((block, index) => {
    const providerReplay = replay ? (replays[index] ?? undefined) : undefined;
    const extra = providerReplay ? { providerReplay } : {};
    if (block.type === "text") parts.push({ type: "text", text: block.text ?? "", ...extra });
    else if (block.type === "reasoning" && replay) parts.push({ type: "reasoning", text: block.text ?? "", ...extra });
    else if (block.type === "error") parts.push({ type: "text", text: `[svc: this model call failed: ${block.text ?? "unknown error"}]` });
    else if (block.type === "tool_call") {
      const call = calls.find((c) => block.tool_call_id && decodeId("toolCall", block.tool_call_id) === c.id);
      if (call) parts.push({ type: "tool_call", id: call.providerCallId, name: call.name, input: call.input as JsonObject, ...extra });
    }
  });
  if (parts.length === 0) parts.push({ type: "text", text: "" });
  const messages: ModelMessage[] = [{ role: "assistant", content: parts }];
  const toolParts: ToolResultPart[] = calls.map((call) => {
    const result = results.get(call.id);
    return {
      type: "tool_result",
      toolCallId: call.providerCallId,
      name: call.name,
      outcome: (result?.outcome as ToolResultPart["outcome"]) ?? "failed",
      content: result ? resultText(result.contentBlocks as Block[]) : "No result was recorded for this tool call.",
    };
  });
  if (toolParts.length > 0) messages.push({ role: "tool", content: toolParts });
  return messages;
}

function resultText(blocks: Block[]): string {
  return blocks
    .map((block) => {
      if (block.type === "text") return block.text ?? "";
      if (block.type === "structured_data") return JSON.stringify(block.value);
      if (block.type === "media_ref") return `[file ${block.artifact_id}]`;
      return "";
    })
    .join("\n");
}

/** The messages of a conversation: the checkpoint summary first, then every item in order. */
export function conversationMessages(conversation: Conversation): ModelMessage[] {
  const messages: ModelMessage[] = [];
  if (conversation.checkpoint) {
    messages.push({ role: "user", content: `<context_checkpoint>\n${conversation.checkpoint.summary}\n</context_checkpoint>` });
  }
  for (const entry of conversation.items) messages.push(...entry.messages);
  return messages;
}
