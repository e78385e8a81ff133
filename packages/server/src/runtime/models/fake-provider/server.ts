import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicMessages } from "./anthropic-messages.js";
import { FAKE_CREATED_AT, pad } from "./chunks.js";
import { defaultReply, readConversation } from "./conversation.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";
import type { FakeFormat, FakeReply, RecordedRequest, ResolvedTurn, WireEvent, WireFormat } from "./types.js";

export interface FakeProviderOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Called after each request is answered (or left hanging), e.g. for a CLI log line. */
  onRequest?: (request: RecordedRequest, status: number | "hanging" | "disconnected") => void;
}

export interface FakeProvider {
  /** `http://host:port`; the API base URL for every format is `${url}/v1`. */
  readonly url: string;
  readonly baseUrl: string;
  /** Queues replies; each model request consumes the next one, or answers deterministically when none is left. */
  script(...replies: FakeReply[]): void;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Replies still queued. */
  pending(): number;
  /** Drops queued replies and recorded requests and restarts the id sequence (`…fake0001`). */
  reset(): void;
  close(): Promise<void>;
}

const FORMATS: Array<[suffix: string, format: FakeFormat, wire: WireFormat]> = [
  ["/chat/completions", "openai-chat-completions", openaiChat],
  ["/responses", "openai-responses", openaiResponses],
  ["/messages", "anthropic-messages", anthropicMessages],
];
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * A deterministic model provider on node:http speaking OpenAI Chat Completions, OpenAI Responses and
 * Anthropic Messages, streaming (SSE, when the body says `stream: true`) or as one JSON body. Paths are
 * matched by suffix, so any base path or `endpoint_path` ending in the format's path works.
 */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let sequence = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "server_error", param: null, code: null } }, {});
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const text = await readBody(req);
    const recorded: RecordedRequest = { method: req.method ?? "GET", path, headers: headerRecord(req), body: parseBody(text) };
    requests.push(recorded);
    const requestId = `req_fake${pad(requests.length)}`;
    const ids = { "x-request-id": requestId, "request-id": requestId };
    const match = FORMATS.find(([suffix]) => path.endsWith(suffix));

    if (req.method === "GET" && path.endsWith("/models")) {
      sendJson(res, 200, modelList(recorded.headers["anthropic-version"] !== undefined), ids);
      return options.onRequest?.(recorded, 200);
    }
    if (req.method !== "POST" || match === undefined) {
      sendJson(res, 404, { error: { message: `no fake route for ${req.method} ${path}`, type: "invalid_request_error", param: null, code: "not_found" } }, ids);
      return options.onRequest?.(recorded, 404);
    }
    const [, format, wire] = match;
    recorded.format = format;
    if (typeof recorded.body !== "object" || recorded.body === null) {
      sendJson(res, 400, wire.errorBody(400, "request body is not a JSON object"), ids);
      return options.onRequest?.(recorded, 400);
    }
    const body = recorded.body as Record<string, unknown>;
    const reply = queue.shift() ?? defaultReply(readConversation(format, body));
    sequence += 1;

    if (reply.delayMs) await wait(reply.delayMs, res);
    if (res.destroyed) return options.onRequest?.(recorded, "disconnected");
    if (reply.hang === true || reply.hang === "before_headers") return options.onRequest?.(recorded, "hanging");
    if (reply.error) {
      const { status, message, body: errorBody, headers } = reply.error;
      const payload = errorBody ?? wire.errorBody(status, message ?? `fake provider error ${status}`);
      sendRaw(res, status, typeof payload === "string" ? payload : JSON.stringify(payload), { ...ids, ...headers });
      return options.onRequest?.(recorded, status);
    }
    const turn = resolveTurn(format, sequence, reply, body, text);
    if (body["stream"] !== true) {
      sendJson(res, 200, wire.json(turn), ids);
      return options.onRequest?.(recorded, 200);
    }
    const events = wire.stream(turn);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...ids });
    const stallAt = reply.hang === "mid_stream" ? Math.ceil(events.length / 2) : Number.POSITIVE_INFINITY;
    for (const [index, event] of events.entries()) {
      if (index === stallAt) return options.onRequest?.(recorded, "hanging");
      if (index > 0 && reply.chunkDelayMs) await wait(reply.chunkDelayMs, res);
      if (res.destroyed) return options.onRequest?.(recorded, "disconnected");
      res.write(sseFrame(event));
    }
    res.end();
    options.onRequest?.(recorded, 200);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    script: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      sequence = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function resolveTurn(format: FakeFormat, sequence: number, reply: FakeReply, body: Record<string, unknown>, bodyText: string): ResolvedTurn {
  const text = reply.text ?? "";
  const reasoning = reply.reasoning ?? "";
  const prefix = format === "anthropic-messages" ? "toolu_fake" : "call_fake";
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `${prefix}${pad(sequence)}_${index}`,
    name: call.name,
    arguments: call.rawArguments ?? JSON.stringify(call.input),
  }));
  const produced = text.length + reasoning.length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0);
  const usage = {
    inputTokens: Math.max(1, Math.ceil(bodyText.length / 4)),
    outputTokens: Math.max(1, Math.ceil(produced / 4)),
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: Math.ceil(reasoning.length / 4),
    ...reply.usage,
  };
  const include = Array.isArray(body["include"]) ? (body["include"] as unknown[]) : [];
  const streamOptions = body["stream_options"] as { include_usage?: unknown } | undefined;
  return {
    sequence,
    model: reply.model ?? (typeof body["model"] === "string" ? body["model"] : "fake-model"),
    text,
    reasoning,
    toolCalls,
    stopReason: reply.stopReason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    usage,
    ...(reply.streamError ? { streamError: reply.streamError } : {}),
    includeEncryptedReasoning: include.includes("reasoning.encrypted_content"),
    includeUsageInStream: streamOptions?.include_usage === true,
  };
}

function sseFrame(event: WireEvent): string {
  const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
  return `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${data}\n\n`;
}

function modelList(anthropic: boolean): unknown {
  if (anthropic) {
    const model = { type: "model", id: "fake-model", display_name: "Fake model", created_at: "2026-01-01T00:00:00Z" };
    return { data: [model], has_more: false, first_id: model.id, last_id: model.id };
  }
  return { object: "list", data: [{ id: "fake-model", object: "model", created: FAKE_CREATED_AT, owned_by: "svc" }] };
}

/** Resolves after `ms`, or as soon as the client goes away. */
function wait(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once("close", done);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function headerRecord(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  sendRaw(res, status, JSON.stringify(body), headers);
}

function sendRaw(res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === "content-type");
  res.writeHead(status, { ...(hasType ? {} : { "content-type": "application/json" }), ...headers });
  res.end(body);
}
