import type { SvcClient } from "./client.js";
import { SvcError } from "./errors.js";
import { parseSse } from "./sse.js";
import { sleep } from "./sleep.js";

/** One frame of an agent's event stream (spec, Events: Stream frames); `sequence` is set on saved events. */
export interface StreamFrame {
  event: string;
  sequence: number | undefined;
  data: unknown;
}

export interface Backoff {
  /** The first reconnect's delay; each failed attempt in a row doubles it. Default 500 ms. */
  initialMs?: number;
  /** The longest delay between attempts. Default 30 s. */
  maxMs?: number;
  /** Failed connection attempts in a row before giving up with the last error. Default 10. */
  maxAttempts?: number;
}

export interface Reconnect {
  attempt: number;
  delayMs: number;
  /** The sequence the next connection resumes after. */
  lastSequence: number;
  reason: string;
}

export interface FollowOptions {
  orgId: string;
  projectId: string;
  agentId: string;
  /** Start after this saved sequence (0, the default, replays the whole timeline). */
  afterSequence?: number;
  /** Also receive `model_output_delta` previews. */
  streamDeltas?: boolean;
  /** Ends the stream: the loop then finishes without an error. */
  signal?: AbortSignal;
  backoff?: Backoff;
  /** Told before each reconnect (after a drop, an `error` frame or a failed attempt). */
  onReconnect?: (reconnect: Reconnect) => void;
}

/** Statuses worth another attempt; any other failure (401, 403, 404, a bad query) ends the stream with its error. */
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Follows an agent's timeline live. Drops, `error` frames and failed attempts reconnect after a bounded
 * exponential backoff, resuming with `Last-Event-ID` set to the last saved sequence seen, so every saved
 * event arrives once and in order (previews are not replayed, spec Events rule 6).
 */
export async function* followEvents(client: SvcClient, options: FollowOptions): AsyncGenerator<StreamFrame, void, undefined> {
  const { initialMs = 500, maxMs = 30_000, maxAttempts = 10 } = options.backoff ?? {};
  const position = { lastSequence: options.afterSequence ?? 0 };
  let failures = 0;
  for (;;) {
    const outcome = yield* connection(client, options, position);
    if (options.signal?.aborted) return;
    if (outcome.error instanceof SvcError && !RETRYABLE.has(outcome.error.status)) throw outcome.error;
    // A connection that delivered frames, or stayed up a while, ends a run of failures; one that ended
    // at once adds to it, so a server that keeps ending streams is given up on like one that refuses them.
    failures = outcome.progressed ? 1 : failures + 1;
    if (failures >= maxAttempts && !outcome.progressed) throw outcome.error ?? new Error(`the event stream kept ending: ${outcome.reason}`);
    const delayMs = Math.min(maxMs, initialMs * 2 ** (failures - 1));
    options.onReconnect?.({ attempt: failures + 1, delayMs, lastSequence: position.lastSequence, reason: outcome.reason });
    try {
      await sleep(delayMs, options.signal);
    } catch {
      return;
    }
  }
}

interface Outcome {
  reason: string;
  progressed: boolean;
  error?: unknown;
}

/** One connection's frames; returns why it ended rather than throwing, so the loop above decides. */
async function* connection(client: SvcClient, options: FollowOptions, position: { lastSequence: number }): AsyncGenerator<StreamFrame, Outcome, undefined> {
  const opened = Date.now();
  let frames = 0;
  const progressed = () => frames > 0 || Date.now() - opened >= (options.backoff?.maxMs ?? 30_000);
  try {
    for await (const message of parseSse(await connect(client, options, position.lastSequence))) {
      if (message.event === "error") return { reason: `the server sent an error frame: ${message.data}`, progressed: progressed() };
      frames += 1;
      const sequence = message.id === undefined ? undefined : Number(message.id);
      if (sequence !== undefined && Number.isSafeInteger(sequence)) position.lastSequence = sequence;
      yield { event: message.event, sequence, data: parseData(message.data) };
    }
    return { reason: "the stream ended", progressed: progressed() };
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err), progressed: progressed(), error: err };
  }
}

async function connect(client: SvcClient, options: FollowOptions, lastSequence: number): Promise<ReadableStream<Uint8Array>> {
  const path = `/api/v1/orgs/${enc(options.orgId)}/projects/${enc(options.projectId)}/agents/${enc(options.agentId)}/events/stream`;
  const query = options.streamDeltas ? "?stream_deltas=true" : "";
  const headers: Record<string, string> = { accept: "text/event-stream", "last-event-id": String(lastSequence) };
  if (client.token) headers["authorization"] = `Bearer ${client.token}`;
  const init: RequestInit = { headers };
  if (options.signal) init.signal = options.signal;
  const response = await client.fetch(`${client.baseUrl}${path}${query}`, init);
  if (!response.ok || !response.body) {
    const text = await response.text();
    throw SvcError.from(response.status, parseData(text));
  }
  return response.body;
}

const enc = encodeURIComponent;

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
