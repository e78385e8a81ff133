import type { SharedV3ProviderMetadata as ProviderMetadata } from "@ai-sdk/provider";
import { toReplay } from "./messages.js";
import { ModelError, type JsonObject, type ModelDelta, type ModelResultPart } from "./types.js";

type Slot =
  | { type: "text" | "reasoning"; text: string; metadata: ProviderMetadata; blockIndex?: number; open: boolean }
  | { type: "tool_call"; id: string; name: string; blockIndex: number; open: boolean; done?: { input: JsonObject; metadata?: ProviderMetadata } };

/**
 * Turns the provider's stream parts into svc deltas (with block indices in wire order) and, at the same time,
 * the ordered result parts. Text and thinking blocks start on their first non-empty delta, so the empty
 * text some chat servers send before tool calls produces no block.
 */
export class StreamCollector {
  private readonly slots: Slot[] = [];
  private readonly byId = new Map<string, Slot>();
  private nextBlock = 0;

  constructor(private readonly emit: (delta: ModelDelta) => void) {}

  contentStart(type: "text" | "reasoning", id: string, metadata: ProviderMetadata | undefined): void {
    const slot: Slot = { type, text: "", metadata: {}, open: false };
    mergeMetadata(slot.metadata, metadata);
    this.slots.push(slot);
    this.byId.set(`${type}:${id}`, slot);
  }

  contentDelta(type: "text" | "reasoning", id: string, delta: string, metadata: ProviderMetadata | undefined): void {
    let slot = this.byId.get(`${type}:${id}`);
    if (slot === undefined) {
      this.contentStart(type, id, undefined);
      slot = this.byId.get(`${type}:${id}`);
    }
    if (slot === undefined || slot.type === "tool_call") return;
    mergeMetadata(slot.metadata, metadata);
    if (delta === "") return;
    if (slot.blockIndex === undefined) {
      slot.blockIndex = this.nextBlock++;
      slot.open = true;
      this.emit({ kind: "block_start", blockIndex: slot.blockIndex, block: { kind: type === "text" ? "text" : "thinking" } });
    }
    slot.text += delta;
    this.emit({ kind: type === "text" ? "text_delta" : "thinking_delta", blockIndex: slot.blockIndex, delta });
  }

  contentEnd(type: "text" | "reasoning", id: string, metadata: ProviderMetadata | undefined): void {
    const slot = this.byId.get(`${type}:${id}`);
    if (slot === undefined || slot.type === "tool_call") return;
    mergeMetadata(slot.metadata, metadata);
    this.stop(slot);
  }

  toolInputStart(id: string, name: string): void {
    if (this.byId.has(`tool:${id}`)) return;
    const slot: Slot = { type: "tool_call", id, name, blockIndex: this.nextBlock++, open: true };
    this.slots.push(slot);
    this.byId.set(`tool:${id}`, slot);
    this.emit({ kind: "tool_call_start", blockIndex: slot.blockIndex, toolCallId: id, toolName: name });
  }

  toolInputDelta(id: string, delta: string): void {
    const slot = this.byId.get(`tool:${id}`);
    if (slot === undefined || slot.type !== "tool_call" || !slot.open || delta === "") return;
    this.emit({ kind: "tool_arguments_delta", blockIndex: slot.blockIndex, toolCallId: id, delta });
  }

  toolInputEnd(id: string): void {
    const slot = this.byId.get(`tool:${id}`);
    if (slot !== undefined) this.stop(slot);
  }

  /**
   * A complete call, its input as the provider sent it (JSON text; empty means no arguments). Input that
   * is not a JSON object is a malformed answer; a call to a tool that was not offered is recorded as it
   * is, for the loop to answer with an error result.
   */
  toolCall(call: { toolCallId: string; toolName: string; input: string; providerMetadata?: ProviderMetadata }): void {
    const input = parseInput(call.input);
    if (!isJsonObject(input)) {
      throw new ModelError({ kind: "invalid_response", message: `the model called ${call.toolName} with input that is not a JSON object`, retryable: true });
    }
    if (!this.byId.has(`tool:${call.toolCallId}`)) {
      this.toolInputStart(call.toolCallId, call.toolName);
      this.toolInputDelta(call.toolCallId, JSON.stringify(input));
    }
    const slot = this.byId.get(`tool:${call.toolCallId}`);
    if (slot === undefined || slot.type !== "tool_call") return;
    this.stop(slot);
    slot.done = { input, ...(call.providerMetadata === undefined ? {} : { metadata: call.providerMetadata }) };
  }

  /** Stops whatever is still open and returns the parts in wire order. */
  finish(): ModelResultPart[] {
    for (const slot of this.slots) this.stop(slot);
    const parts: ModelResultPart[] = [];
    for (const slot of this.slots) {
      if (slot.type === "tool_call") {
        if (slot.done === undefined) continue;
        const replay = toReplay(slot.done.metadata);
        parts.push({ type: "tool_call", providerCallId: slot.id, name: slot.name, input: slot.done.input, ...(replay ? { providerReplay: replay } : {}) });
        continue;
      }
      const replay = toReplay(slot.metadata);
      if (slot.text === "" && (slot.type === "text" || replay === undefined)) continue;
      parts.push({ type: slot.type, text: slot.text, ...(replay ? { providerReplay: replay } : {}) });
    }
    return parts;
  }

  private stop(slot: Slot): void {
    if (!slot.open || slot.blockIndex === undefined) return;
    slot.open = false;
    this.emit({ kind: "block_stop", blockIndex: slot.blockIndex });
  }
}

function mergeMetadata(target: ProviderMetadata, source: ProviderMetadata | undefined): void {
  if (source === undefined) return;
  for (const [provider, values] of Object.entries(source)) {
    target[provider] = { ...target[provider], ...values };
  }
}

function parseInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
