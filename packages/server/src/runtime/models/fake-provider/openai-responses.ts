import { argumentPieces, FAKE_CREATED_AT, fakeOpaque, pad, textPieces } from "./chunks.js";
import { OPENAI_ERRORS } from "./openai-chat.js";
import type { ResolvedTurn, WireEvent, WireFormat } from "./types.js";

type Item = Record<string, unknown>;
/** One output item: the events that stream it (without sequence numbers) and its final form. */
interface ItemStream {
  done: Item;
  events: Array<Record<string, unknown>>;
}

/** OpenAI Responses (`POST /v1/responses`): reasoning summary, message and function_call items. */
export const openaiResponses: WireFormat = {
  stream(turn) {
    const items = outputItems(turn);
    const inProgress = response(turn, "in_progress", []);
    const raw: Array<Record<string, unknown>> = [
      { type: "response.created", response: inProgress },
      { type: "response.in_progress", response: inProgress },
      ...items.flatMap((item) => item.events),
    ];
    if (turn.streamError) {
      raw.push({ type: "error", code: turn.streamError.type ?? "server_error", message: turn.streamError.message, param: null });
    } else {
      const status = finalStatus(turn);
      raw.push({ type: status === "completed" ? "response.completed" : "response.incomplete", response: response(turn, status, items.map((item) => item.done)) });
    }
    return raw.map((data, index): WireEvent => ({ event: String(data["type"]), data: { ...data, sequence_number: index } }));
  },

  json(turn) {
    return response(turn, finalStatus(turn), outputItems(turn).map((item) => item.done));
  },

  errorBody(status, message) {
    const [type, code] = OPENAI_ERRORS[status] ?? (status >= 500 ? ["server_error", null] : ["invalid_request_error", null]);
    return { error: { message, type, param: null, code } };
  },
};

function outputItems(turn: ResolvedTurn): ItemStream[] {
  const items: ItemStream[] = [];
  const id = pad(turn.sequence);
  if (turn.reasoning !== "") items.push(reasoningItem(turn, `rs_fake${id}`, items.length));
  if (turn.text !== "") items.push(messageItem(turn, `msg_fake${id}`, items.length));
  turn.toolCalls.forEach((call, index) => {
    items.push(functionCallItem(`fc_fake${id}_${index}`, call, items.length));
  });
  return items;
}

function reasoningItem(turn: ResolvedTurn, id: string, outputIndex: number): ItemStream {
  const encrypted = turn.includeEncryptedReasoning ? { encrypted_content: fakeOpaque("fake-encrypted:", turn.reasoning) } : {};
  const base = { id, type: "reasoning", ...encrypted };
  const where = { item_id: id, output_index: outputIndex, summary_index: 0 };
  const summary = { type: "summary_text", text: turn.reasoning };
  return {
    done: { ...base, summary: [summary] },
    events: [
      { type: "response.output_item.added", output_index: outputIndex, item: { ...base, summary: [] } },
      { type: "response.reasoning_summary_part.added", ...where, part: { type: "summary_text", text: "" } },
      ...textPieces(turn.reasoning).map((delta) => ({ type: "response.reasoning_summary_text.delta", ...where, delta })),
      { type: "response.reasoning_summary_text.done", ...where, text: turn.reasoning },
      { type: "response.reasoning_summary_part.done", ...where, part: summary },
      { type: "response.output_item.done", output_index: outputIndex, item: { ...base, summary: [summary] } },
    ],
  };
}

function messageItem(turn: ResolvedTurn, id: string, outputIndex: number): ItemStream {
  const refusal = turn.stopReason === "refusal";
  const where = { item_id: id, output_index: outputIndex, content_index: 0 };
  const part = refusal ? { type: "refusal", refusal: turn.text } : { type: "output_text", text: turn.text, annotations: [], logprobs: [] };
  const empty = refusal ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [], logprobs: [] };
  const base = { id, type: "message", role: "assistant" };
  const deltas = textPieces(turn.text).map((delta) =>
    refusal ? { type: "response.refusal.delta", ...where, delta } : { type: "response.output_text.delta", ...where, delta, logprobs: [] },
  );
  const doneEvent = refusal ? { type: "response.refusal.done", ...where, refusal: turn.text } : { type: "response.output_text.done", ...where, text: turn.text, logprobs: [] };
  const done = { ...base, status: "completed", content: [part] };
  return {
    done,
    events: [
      { type: "response.output_item.added", output_index: outputIndex, item: { ...base, status: "in_progress", content: [] } },
      { type: "response.content_part.added", ...where, part: empty },
      ...deltas,
      doneEvent,
      { type: "response.content_part.done", ...where, part },
      { type: "response.output_item.done", output_index: outputIndex, item: done },
    ],
  };
}

function functionCallItem(id: string, call: ResolvedTurn["toolCalls"][number], outputIndex: number): ItemStream {
  const base = { id, type: "function_call", call_id: call.id, name: call.name };
  const done = { ...base, status: "completed", arguments: call.arguments };
  return {
    done,
    events: [
      { type: "response.output_item.added", output_index: outputIndex, item: { ...base, status: "in_progress", arguments: "" } },
      ...argumentPieces(call.arguments).map((delta) => ({ type: "response.function_call_arguments.delta", item_id: id, output_index: outputIndex, delta })),
      { type: "response.function_call_arguments.done", item_id: id, output_index: outputIndex, arguments: call.arguments },
      { type: "response.output_item.done", output_index: outputIndex, item: done },
    ],
  };
}

function finalStatus(turn: ResolvedTurn): "completed" | "incomplete" {
  return turn.stopReason === "max_tokens" || turn.stopReason === "content_filter" ? "incomplete" : "completed";
}

function response(turn: ResolvedTurn, status: "in_progress" | "completed" | "incomplete", output: Item[]) {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens } = turn.usage;
  const incomplete = status === "incomplete" ? { reason: turn.stopReason === "max_tokens" ? "max_output_tokens" : "content_filter" } : null;
  return {
    id: `resp_fake${pad(turn.sequence)}`,
    object: "response",
    created_at: FAKE_CREATED_AT,
    status,
    error: null,
    incomplete_details: incomplete,
    model: turn.model,
    output,
    parallel_tool_calls: true,
    store: false,
    tool_choice: "auto",
    text: { format: { type: "text" } },
    usage:
      status === "in_progress"
        ? null
        : {
            input_tokens: inputTokens,
            input_tokens_details: { cached_tokens: cacheReadTokens, ...(cacheWriteTokens > 0 ? { cache_write_tokens: cacheWriteTokens } : {}) },
            output_tokens: outputTokens,
            output_tokens_details: { reasoning_tokens: reasoningTokens },
            total_tokens: inputTokens + outputTokens,
          },
  };
}
