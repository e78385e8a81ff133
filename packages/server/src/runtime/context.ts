import { and, asc, desc, eq, gt, inArray, lte } from "drizzle-orm";
import { agentEvents, agentInputs, contextCheckpoints, modelOutputs, toolCallResults, toolCalls } from "../db/schema/index.js";
import type { AppDb } from "../platform/db/index.js";
import { decodeId } from "../platform/ids.js";
import type { ModelBinding } from "./definition.js";
import type { AssistantContentPart, JsonObject, ModelMessage, ProviderReplay, ToolResultPart, UserContentPart } from "./models/types.js";

/*
 * The conversation a model call sees (reference design-brief.md §3.4 step 4): the latest checkpoint's summary, then
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

/** Every agent's first event: the config it was launched with (agents/service.ts, `launchInTx`), which renders nothing. */
export const LAUNCH_CONFIG_SEQUENCE = 1;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** The rows of a conversation up to `watermark`, without their media: see `ConversationLog.readRows`. */
export interface ConversationRows {
  checkpoint: { summary: string; through: number } | null;
  facts: TimelineFacts;
  watermark: number;
}

/** The timeline's facts a conversation is built from, for events in (after, watermark]. */
export interface TimelineFacts {
  events: Array<typeof agentEvents.$inferSelect>;
  inputs: InputRow[];
  outputs: OutputRow[];
  calls: CallRow[];
  results: ResultRow[];
}

async function readTimeline(db: AppDb, agentId: string, after: number, watermark: number): Promise<TimelineFacts> {
  const events = await db
    .select()
    .from(agentEvents)
    .where(and(eq(agentEvents.agentId, agentId), gt(agentEvents.sequence, after), lte(agentEvents.sequence, watermark)))
    .orderBy(asc(agentEvents.sequence));
  const ids = (pick: (e: (typeof events)[number]) => string | null) => events.map(pick).filter((v): v is string => v !== null);
  const inputIds = ids((e) => e.agentInputId);
  const outputIds = ids((e) => e.modelOutputId);
  const resultIds = ids((e) => e.toolCallId);
  return {
    events,
    inputs: inputIds.length ? await db.select().from(agentInputs).where(inArray(agentInputs.id, inputIds)) : [],
    outputs: outputIds.length ? await db.select().from(modelOutputs).where(inArray(modelOutputs.id, outputIds)) : [],
    calls: outputIds.length ? await db.select().from(toolCalls).where(inArray(toolCalls.modelOutputId, outputIds)) : [],
    // A result counts once its event is on the timeline (a cancel writes results and events together).
    results: resultIds.length ? await db.select().from(toolCallResults).where(inArray(toolCallResults.toolCallId, resultIds)) : [],
  };
}

type OutputFacts = Pick<OutputRow, "id" | "contentBlocks" | "providerReplay" | "replayScope">;
type CallFacts = Pick<CallRow, "id" | "providerCallId" | "name" | "input">;
type Entry =
  | { sequence: number; kind: "input"; item: TimelineItem | null }
  | { sequence: number; kind: "output"; output: OutputFacts; calls: CallFacts[]; rendered?: { key: string; item: TimelineItem } };

/**
 * An agent's conversation as immutable facts through sequence `through`: the latest checkpoint, input
 * messages (rendered once, media included) and outputs with their calls, plus the results recorded so
 * far. Outputs are rendered per call, since replay data depends on the model and results come later.
 */
export class ConversationLog {
  private entries: Entry[] = [];
  private readonly results = new Map<string, ResultRow>();
  /** The rendered items of the first `entries` entries, which can no longer change, for replay `scope`. */
  private settled: { scope: string; entries: number; items: TimelineItem[] } = { scope: "", entries: 0, items: [] };

  private constructor(
    readonly agentId: string,
    private readonly checkpoint: { summary: string; through: number } | null,
    public through: number,
  ) {}

  /** The log of an agent whose timeline holds only its launch config, which the model is not shown. */
  static afterLaunch(agentId: string): ConversationLog {
    return new ConversationLog(agentId, null, LAUNCH_CONFIG_SEQUENCE);
  }

  /** Reads the conversation up to `watermark` from the database: the latest checkpoint, then what follows it. */
  static async load(db: AppDb, agentId: string, watermark: number, media: MediaLoader): Promise<ConversationLog> {
    return ConversationLog.fromRows(agentId, await ConversationLog.readRows(db, agentId, watermark), media);
  }

  /** The rows `load` reads, without the media they name (a claim reads these in its transaction; bytes wait for the step). */
  static async readRows(db: AppDb, agentId: string, watermark: number): Promise<ConversationRows> {
    const [checkpoint] = await db
      .select({ summary: contextCheckpoints.summary, through: contextCheckpoints.summarizedThroughEventSequence })
      .from(agentEvents)
      .innerJoin(contextCheckpoints, eq(contextCheckpoints.id, agentEvents.contextCheckpointId))
      .where(and(eq(agentEvents.agentId, agentId), eq(agentEvents.eventKind, "context_checkpoint"), lte(agentEvents.sequence, watermark)))
      .orderBy(desc(agentEvents.sequence))
      .limit(1);
    return { checkpoint: checkpoint ?? null, facts: await readTimeline(db, agentId, checkpoint?.through ?? 0, watermark), watermark };
  }

  /** The log of rows read by `readRows`, its inputs' media loaded. */
  static async fromRows(agentId: string, rows: ConversationRows, media: MediaLoader): Promise<ConversationLog> {
    const log = new ConversationLog(agentId, rows.checkpoint, rows.checkpoint?.through ?? 0);
    await log.apply(rows.facts, rows.watermark, media);
    return log;
  }

  /**
   * Brings the log up to `watermark` with the events it has not seen; false when those include a newer
   * checkpoint, after which the log must be loaded anew.
   */
  async catchUp(db: AppDb, watermark: number, media: MediaLoader): Promise<boolean> {
    if (this.through === watermark) return true;
    const facts = await this.readAfter(db, watermark);
    if (!facts) return false;
    await this.apply(facts, watermark, media);
    return true;
  }

  /** The rows `catchUp` reads; null when they include a newer checkpoint. */
  async readAfter(db: AppDb, watermark: number): Promise<TimelineFacts | null> {
    const facts = await readTimeline(db, this.agentId, this.through, watermark);
    return facts.events.some((e) => e.eventKind === "context_checkpoint") ? null : facts;
  }

  /** Rows `readAfter` read up to `watermark`, applied when the log is still where it was then. */
  async applyAfter(facts: TimelineFacts, through: number, watermark: number, media: MediaLoader): Promise<void> {
    if (this.through === through) await this.apply(facts, watermark, media);
  }

  /** Inputs the claim admitted at `sequence`s right after `through`; nothing when the log has a gap before them (a later catch-up reads them). */
  async appendInputs(inputs: Array<{ sequence: number; contentBlocks: unknown[] }>, media: MediaLoader): Promise<void> {
    if (inputs.length === 0 || inputs[0]!.sequence !== this.through + 1) return;
    const added: Entry[] = [];
    for (const input of inputs) {
      const message = await inputMessage({ inputKind: "content", contentBlocks: input.contentBlocks }, input.sequence, (id) => media(this.agentId, id));
      added.push({ sequence: input.sequence, kind: "input", item: message ? item(input.sequence, input.sequence, [message]) : null });
    }
    this.entries.push(...added);
    this.through = inputs.at(-1)!.sequence;
  }

  /** The output the step recorded at `sequence`, when it directly follows what the log holds. */
  appendOutput(sequence: number, output: OutputFacts, calls: CallFacts[]): void {
    if (sequence !== this.through + 1) return;
    this.entries.push({ sequence, kind: "output", output, calls });
    this.through = sequence;
  }

  /**
   * The conversation a call made with `model` sees. Entries that can no longer change (inputs, outputs
   * whose calls all have results) are rendered once per replay scope and kept as a settled prefix, so a
   * step renders only what follows it: the work does not grow with the conversation.
   */
  conversation(model: ModelBinding): Conversation {
    const scope = replayScope(model);
    if (this.settled.scope !== scope) this.settled = { scope, entries: 0, items: [] };
    const settled = this.settled;
    const unsettled: TimelineItem[] = [];
    for (let index = settled.entries; index < this.entries.length; index++) {
      const entry = this.entries[index]!;
      const rendered = this.render(entry, scope);
      if (unsettled.length === 0 && settled.entries === index && this.isFinal(entry)) {
        if (rendered) settled.items.push(rendered);
        settled.entries = index + 1;
      } else if (rendered) {
        unsettled.push(rendered);
      }
    }
    return { checkpoint: this.checkpoint ? { ...this.checkpoint } : null, items: [...settled.items, ...unsettled] };
  }

  private render(entry: Entry, scope: string): TimelineItem | null {
    if (entry.kind === "input") return entry.item;
    const replay = entry.output.replayScope === scope;
    const key = `${replay}:${this.resultCount(entry.calls)}`;
    if (entry.rendered?.key !== key) {
      const messages = outputMessages(entry.output, entry.calls, this.results, replay);
      entry.rendered = { key, item: item(entry.sequence, entry.sequence, messages) };
    }
    return entry.rendered.item;
  }

  /** An input never changes; an output changes only until every one of its calls has a result. */
  private isFinal(entry: Entry): boolean {
    return entry.kind === "input" || this.resultCount(entry.calls) === entry.calls.length;
  }

  private resultCount(calls: CallFacts[]): number {
    let count = 0;
    for (const call of calls) if (this.results.has(call.id)) count++;
    return count;
  }

  private async apply(facts: TimelineFacts, watermark: number, media: MediaLoader): Promise<void> {
    const inputById = new Map(facts.inputs.map((i) => [i.id, i]));
    const outputById = new Map(facts.outputs.map((o) => [o.id, o]));
    // Built aside and added at once: a failed media read leaves the log as it was.
    const added: Entry[] = [];
    for (const event of facts.events) {
      if (event.agentInputId) {
        const message = await inputMessage(inputById.get(event.agentInputId)!, event.sequence, (id) => media(this.agentId, id));
        added.push({ sequence: event.sequence, kind: "input", item: message ? item(event.sequence, event.sequence, [message]) : null });
      } else if (event.modelOutputId) {
        const output = outputById.get(event.modelOutputId)!;
        added.push({ sequence: event.sequence, kind: "output", output, calls: facts.calls.filter((c) => c.modelOutputId === output.id) });
      }
    }
    for (const result of facts.results) this.results.set(result.toolCallId, result);
    this.entries.push(...added);
    this.through = watermark;
  }
}

function item(sequence: number, group: number, messages: ModelMessage[]): TimelineItem {
  return { sequence, group, messages, tokens: estimateTokens(JSON.stringify(messages)) };
}

type InputRow = typeof agentInputs.$inferSelect;
type Block = { type: string; text?: string; value?: unknown; artifact_id?: string; tool_call_id?: string; name?: string; input?: JsonObject };

async function inputMessage(input: Pick<InputRow, "inputKind" | "contentBlocks">, sequence: number, media: (artifactId: string) => ReturnType<MediaLoader>): Promise<ModelMessage | null> {
  if (input.inputKind === "config_change") {
    return sequence === LAUNCH_CONFIG_SEQUENCE ? null : { role: "user", content: "[svc: the agent's configuration was changed; the new instructions and tools apply from here.]" };
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

function outputMessages(output: OutputFacts, calls: CallFacts[], results: Map<string, ResultRow>, replay: boolean): ModelMessage[] {
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
