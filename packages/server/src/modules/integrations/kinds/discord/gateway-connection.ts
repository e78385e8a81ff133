import WebSocket from "ws";
import { assertOutboundAllowed, guardedLookup, type OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { StoredSession } from "./gateway-store.js";

/** Gateway opcodes (Discord docs: "Gateway Opcodes"). */
const OP = { dispatch: 0, heartbeat: 1, identify: 2, resume: 6, reconnect: 7, invalidSession: 9, hello: 10, heartbeatAck: 11 } as const;
/** GUILDS, GUILD_MESSAGES and MESSAGE_CONTENT: thread lifecycle, messages in servers, and their text (reference docs: integrations/discord). */
export const GATEWAY_INTENTS = (1 << 0) | (1 << 9) | (1 << 15);
/** Close codes after which connecting again cannot help (Discord docs: "Gateway Close Event Codes"). */
const FATAL_CLOSE_CODES = new Set([4004, 4010, 4011, 4012, 4013, 4014]);
/** Close codes after which the session cannot be resumed, only identified anew. */
const FRESH_SESSION_CLOSE_CODES = new Set([4007, 4009]);
/** svc's own close code for a drop it wants resumed: anything but 1000/1001 keeps the session alive at Discord. */
export const RESUMABLE_CLOSE = 4000;
const HANDSHAKE_TIMEOUT_MS = 15_000;
/** Discord's Gateway payloads are at most 4096 bytes sent; received dispatches can be larger, never megabytes. */
const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
/** HELLO must come promptly; a server that says nothing is dropped. */
const HELLO_TIMEOUT_MS = 30_000;

export interface GatewayHandlers {
  /** A new session (READY), to save so the next connection can resume it. */
  onReady(session: { sessionId: string; resumeGatewayUrl: string; seq: number | null }): Promise<void>;
  /** A MESSAGE_CREATE dispatch and its sequence number; awaited, in order, before the next dispatch. */
  onMessage(seq: number, message: Record<string, unknown>): Promise<void>;
}

/** How a connection ended: `fatal` is a reason not to connect again; `fresh` means the stored session is void. */
export interface GatewayOutcome {
  fatal?: string;
  fresh: boolean;
  /** The session became ready (READY or RESUMED): the backoff starts over. */
  ready: boolean;
}

/**
 * One Gateway connection (Discord docs: "Gateway", "Connections"): HELLO, then RESUME when a session is
 * stored or IDENTIFY with the message-content intent; heartbeats every heartbeat_interval, the first
 * after a random fraction of it; a missed ACK, a RECONNECT or an INVALID_SESSION closes the socket.
 * Dispatches are handled one at a time, in sequence order. Resolves when the socket closes, for any
 * reason; `signal` closes it (with `closeCode`, 1000 to end the session or RESUMABLE_CLOSE to keep it).
 */
export async function runGatewayConnection(options: {
  url: string;
  token: string;
  session: StoredSession;
  policy: OutboundPolicy;
  handlers: GatewayHandlers;
  signal: AbortSignal;
  closeCode: () => number;
}): Promise<GatewayOutcome> {
  const url = new URL(options.url);
  url.searchParams.set("v", "10");
  url.searchParams.set("encoding", "json");
  // The guard speaks http(s); a WebSocket URL is checked as the HTTP request its handshake is.
  await assertOutboundAllowed(url.href.replace(/^ws(s?):/, "http$1:"), options.policy);
  const socket = new WebSocket(url, { lookup: guardedLookup(options.policy) as never, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: MAX_PAYLOAD_BYTES });
  return new Promise<GatewayOutcome>((resolve) => {
    const outcome: GatewayOutcome = { fresh: false, ready: false };
    let seq = options.session.seq;
    let heartbeat: NodeJS.Timeout | undefined;
    let acked = true;
    let queue = Promise.resolve();
    const send = (op: number, d: unknown) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify({ op, d }));
    const close = (code: number) => socket.readyState <= WebSocket.OPEN && socket.close(code);
    const beat = () => {
      if (!acked) return close(RESUMABLE_CLOSE);
      acked = false;
      send(OP.heartbeat, seq);
    };
    const helloTimer = setTimeout(() => close(RESUMABLE_CLOSE), HELLO_TIMEOUT_MS);
    const onAbort = () => close(options.closeCode());
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) onAbort();

    socket.on("message", (data) => {
      let frame: { op?: unknown; d?: unknown; s?: unknown; t?: unknown };
      try {
        frame = JSON.parse(String(data)) as typeof frame;
      } catch {
        return close(RESUMABLE_CLOSE);
      }
      if (typeof frame.s === "number") seq = frame.s;
      switch (frame.op) {
        case OP.hello: {
          clearTimeout(helloTimer);
          const interval = Number((frame.d as { heartbeat_interval?: unknown } | null)?.heartbeat_interval);
          if (!Number.isFinite(interval) || interval < 100) return close(RESUMABLE_CLOSE);
          heartbeat = setTimeout(function next() {
            beat();
            heartbeat = setTimeout(next, interval);
          }, interval * Math.random());
          return void (options.session.sessionId !== null && options.session.seq !== null
            ? send(OP.resume, { token: options.token, session_id: options.session.sessionId, seq: options.session.seq })
            : send(OP.identify, { token: options.token, intents: GATEWAY_INTENTS, properties: { os: process.platform, browser: "svc", device: "svc" } }));
        }
        case OP.heartbeat:
          return void send(OP.heartbeat, seq);
        case OP.heartbeatAck:
          acked = true;
          return;
        case OP.reconnect:
          return void close(RESUMABLE_CLOSE);
        case OP.invalidSession:
          if (frame.d !== true) outcome.fresh = true;
          return void close(RESUMABLE_CLOSE);
        case OP.dispatch:
          queue = queue.then(() => dispatch(frame.t, frame.s, frame.d)).catch(() => void close(RESUMABLE_CLOSE));
          return;
        default:
          return;
      }
    });

    async function dispatch(type: unknown, s: unknown, d: unknown): Promise<void> {
      const payload = typeof d === "object" && d !== null ? (d as Record<string, unknown>) : {};
      if (type === "READY") {
        const sessionId = payload["session_id"];
        const resumeGatewayUrl = payload["resume_gateway_url"];
        if (typeof sessionId !== "string" || typeof resumeGatewayUrl !== "string") throw new Error("READY without a session");
        outcome.ready = true;
        await options.handlers.onReady({ sessionId, resumeGatewayUrl, seq: typeof s === "number" ? s : null });
      } else if (type === "RESUMED") {
        outcome.ready = true;
      } else if (type === "MESSAGE_CREATE" && typeof s === "number" && typeof payload["id"] === "string") {
        await options.handlers.onMessage(s, payload);
      }
    }

    socket.on("error", () => undefined); // The close event follows and ends the connection.
    socket.on("close", (code) => {
      clearTimeout(helloTimer);
      clearTimeout(heartbeat);
      options.signal.removeEventListener("abort", onAbort);
      if (FATAL_CLOSE_CODES.has(code)) outcome.fatal = `Discord closed the Gateway with code ${code}`;
      if (FRESH_SESSION_CLOSE_CODES.has(code)) outcome.fresh = true;
      // Let the dispatch in flight finish, so its receipt and sequence are stored before a resume.
      void queue.finally(() => resolve(outcome));
    });
  });
}
