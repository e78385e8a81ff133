import { encodeId, newUuid } from "../platform/ids.js";
import type { ModelDelta, ModelResult } from "./models/types.js";
import { MAX_SIGNAL_PAYLOAD, type AgentSignals } from "./signals.js";

type PublicDelta =
  | { kind: "block_start"; block_index: number; block: { kind: "text" } | { kind: "thinking" } | { kind: "tool_use"; tool_call_id: string; tool_name: string } }
  | { kind: "text_delta" | "thinking_delta" | "tool_arguments_delta"; block_index: number; delta: string }
  | { kind: "block_stop"; block_index: number }
  | { kind: "message_stop"; stop: { reason: string; usage: Record<string, number> } }
  | { kind: "error"; error: { message: string } };

type TextualDelta = Extract<PublicDelta, { delta: string }>;
const isTextual = (event: PublicDelta): event is TextualDelta => "delta" in event;

const FLUSH_MS = 50;
/** Deltas waiting to be published beyond this are merged harder; previews may be lossy, never the record. */
const BUFFER_LIMIT = 256;
/** Even escaped to six bytes apiece (JSON's \uXXXX), this many characters fit a notification's payload. */
const MAX_ERROR_CHARS = Math.floor(MAX_SIGNAL_PAYLOAD / 8);

/**
 * Publishes a model call's live preview as `model_output_delta` envelopes (reference design-brief.md §3.4 step 7).
 * Deltas are batched every 50 ms; consecutive text pieces of one block merge into one frame with
 * `coalesced_count`. Tool-use blocks get the tool call id the durable record will use: it is minted
 * here, per provider call id, and handed to the recorder.
 */
export class DeltaPublisher {
  readonly toolCallIds = new Map<string, string>();
  private pending: Array<{ event: PublicDelta; count: number }> = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly signals: AgentSignals,
    private readonly agentId: string,
    private readonly envelope: { turnId: string; contextId: string; sourceSequence: number },
  ) {}

  push(delta: ModelDelta): void {
    this.add(this.toPublic(delta));
  }

  /** The call's end, with its usage and what it cost (runtime/cost.ts). */
  stop(result: ModelResult, costMicroUsd: number): void {
    const usage = {
      input_tokens_total: result.usage.inputTokens,
      uncached_input_tokens: Math.max(0, result.usage.inputTokens - result.usage.cacheReadTokens - result.usage.cacheWriteTokens),
      output_tokens_total: result.usage.outputTokens,
      reasoning_output_tokens: result.usage.reasoningTokens,
      cache_read_input_tokens: result.usage.cacheReadTokens,
      cache_write_input_tokens: result.usage.cacheWriteTokens,
      cost_micro_usd: costMicroUsd,
    };
    this.add({ kind: "message_stop", stop: { reason: result.stopReason, usage } });
  }

  /** The call failed; a long message is cut so that its envelope fits one notification. */
  fail(message: string): void {
    const fitting = message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message;
    this.add({ kind: "error", error: { message: fitting } });
  }

  /** Publishes what is pending in the background (best effort: failures are dropped). */
  publishPending(): void {
    this.send();
  }

  private toPublic(delta: ModelDelta): PublicDelta {
    switch (delta.kind) {
      case "block_start":
        return { kind: "block_start", block_index: delta.blockIndex, block: delta.block };
      case "tool_call_start": {
        let id = this.toolCallIds.get(delta.toolCallId);
        if (!id) this.toolCallIds.set(delta.toolCallId, (id = newUuid()));
        return { kind: "block_start", block_index: delta.blockIndex, block: { kind: "tool_use", tool_call_id: encodeId("toolCall", id), tool_name: delta.toolName } };
      }
      case "tool_arguments_delta":
        return { kind: "tool_arguments_delta", block_index: delta.blockIndex, delta: delta.delta };
      case "block_stop":
        return { kind: "block_stop", block_index: delta.blockIndex };
      default:
        return { kind: delta.kind, block_index: delta.blockIndex, delta: delta.delta };
    }
  }

  private add(event: PublicDelta): void {
    const last = this.pending.at(-1);
    const previous = last && isTextual(last.event) ? last.event : undefined;
    if (
      previous &&
      isTextual(event) &&
      previous.kind === event.kind &&
      previous.block_index === event.block_index &&
      (this.pending.length >= BUFFER_LIMIT || previous.delta.length + event.delta.length < MAX_SIGNAL_PAYLOAD / 2)
    ) {
      last!.event = { ...previous, delta: previous.delta + event.delta };
      last!.count += 1;
    } else {
      this.pending.push({ event, count: 1 });
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.send();
    }, FLUSH_MS);
  }

  /**
   * Takes what is pending without publishing it: the recorder sends these in its own statement, so the
   * last previews cost no round trip and reach subscribers with the commit, just before the output event.
   */
  private drain(): unknown[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    return batch.map(({ event, count }) => this.envelopeOf(event, count));
  }

  /**
   * `drain`, resolved once every batch sent before has been published. A batch still on its way when the
   * recorder commits would reach followers after the output it previews, which makes it stale: they drop
   * it, and the preview they showed ends short (seen on a loaded machine).
   */
  async drainAfterSent(): Promise<unknown[]> {
    const batch = this.drain();
    await this.sending;
    return batch;
  }

  private send(): void {
    const envelopes = this.drain();
    if (envelopes.length === 0) return;
    this.sending = this.sending.then(async () => {
      for (const envelope of envelopes) await this.signals.publishDelta(this.agentId, envelope).catch(() => undefined);
    });
  }

  private envelopeOf(event: PublicDelta, count: number) {
    this.seq += 1;
    return {
      turn_id: this.envelope.turnId,
      model_call_context_id: this.envelope.contextId,
      seq: this.seq,
      source_seq_start: Math.max(1, this.envelope.sourceSequence),
      source_seq_end: Math.max(1, this.envelope.sourceSequence),
      coalesced_count: count,
      event,
    };
  }
}
