import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * Discord on a loopback port, as its API reference describes it: REST under `/api/v10` with
 * `Authorization: Bot <token>` (`GET /users/@me`, `GET /applications/@me`; 401 `{message, code: 0}` for
 * an unknown token), and each application's Ed25519 key pair, which signs interaction callbacks the way
 * Discord does: `X-Signature-Ed25519` over `X-Signature-Timestamp` followed by the raw body. `GET
 * /gateway/bot` names a Gateway on the same port that the test drives: HELLO, IDENTIFY (4004 for an
 * unknown token), READY, heartbeats and ACKs, MESSAGE_CREATE dispatches, RESUME with a replay of what
 * the session missed, and drops.
 */

export interface FakeDiscordBot {
  token: string;
  applicationId: string;
  botUserId: string;
  username: string;
  /** The application's public key, 64 hex digits, as the Developer Portal shows it. */
  publicKey: string;
  privateKey: KeyObject;
}

export interface DiscordCall {
  method: string;
  path: string;
  authorization: string | undefined;
}

export interface FakeGateway {
  identifies: Array<{ token: string; intents: number }>;
  resumes: Array<{ token: string; session_id: string; seq: number }>;
  /** The bot's sessions with a socket open now. */
  open(bot: FakeDiscordBot): number;
  /**
   * Sends MESSAGE_CREATE to the bot's session, kept for a resume; `lost` keeps it off the wire, as a
   * connection that drops before delivering it does. Returns the message id.
   */
  dispatchMessage(bot: FakeDiscordBot, content: string, lost?: boolean): string;
  /** Ends every socket abruptly (no close frame), as a network drop does. */
  drop(): void;
}

export interface FakeDiscord {
  /** The REST base, as SVC_DISCORD_API_URL takes it. */
  apiUrl: string;
  calls: DiscordCall[];
  gateway: FakeGateway;
  addBot(overrides?: Partial<Pick<FakeDiscordBot, "username">>): FakeDiscordBot;
  revoke(token: string): void;
  reset(): void;
  close(): Promise<void>;
}

let counter = 0;
/** A snowflake-shaped id: 18 decimal digits. */
export const snowflake = () => String(100_000_000_000_000_000n + BigInt(++counter) * 7919n);

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const bots = new Map<string, FakeDiscordBot>();
  const revoked = new Set<string>();
  const calls: DiscordCall[] = [];
  let port = 0;
  const http: Server = createServer((req, res) => {
    const answer = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const path = new URL(req.url ?? "/", "http://discord.test").pathname.replace(/^\/api\/v10/, "");
    calls.push({ method: req.method ?? "", path, authorization: req.headers.authorization });
    const token = /^Bot (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const bot = token && !revoked.has(token) ? bots.get(token) : undefined;
    if (!bot) return answer(401, { message: "401: Unauthorized", code: 0 });
    if (req.method === "GET" && path === "/users/@me") {
      return answer(200, { id: bot.botUserId, username: bot.username, global_name: null, discriminator: "0", avatar: null, bot: true, verified: true, flags: 0 });
    }
    if (req.method === "GET" && path === "/gateway/bot") {
      return answer(200, { url: `ws://127.0.0.1:${port}/gateway`, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 14400000, max_concurrency: 1 } });
    }
    if (req.method === "GET" && path === "/applications/@me") {
      return answer(200, { id: bot.applicationId, name: bot.username, verify_key: bot.publicKey, bot: { id: bot.botUserId, username: bot.username, bot: true } });
    }
    return answer(404, { message: "404: Not Found", code: 0 });
  });
  const address = await new Promise<AddressInfo>((resolve) => http.listen(0, "127.0.0.1", () => resolve(http.address() as AddressInfo)));
  port = address.port;
  const gateway = startGateway(http, (token) => (revoked.has(token) ? undefined : bots.get(token)), port);
  return {
    apiUrl: `http://127.0.0.1:${address.port}/api/v10`,
    calls,
    gateway: gateway.api,
    addBot(overrides = {}) {
      const { publicKey, privateKey } = generateKeyPairSync("ed25519");
      // The raw key is the last 32 bytes of its SPKI DER encoding.
      const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
      const bot: FakeDiscordBot = {
        token: `discord-${snowflake()}-SENTINEL`,
        applicationId: snowflake(),
        botUserId: snowflake(),
        username: "svc-bot",
        publicKey: raw.toString("hex"),
        privateKey,
        ...overrides,
      };
      bots.set(bot.token, bot);
      return bot;
    },
    revoke: (token) => void revoked.add(token),
    reset() {
      calls.length = 0;
    },
    close: async () => {
      gateway.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

interface GatewaySession {
  id: string;
  bot: FakeDiscordBot;
  seq: number;
  events: Array<{ op: 0; s: number; t: string; d: object }>;
  socket?: WebSocket;
}

/** Discord's Gateway protocol (Discord docs: "Gateway"), on the REST server's port. */
function startGateway(http: Server, botOf: (token: string) => FakeDiscordBot | undefined, port: number) {
  const wss = new WebSocketServer({ server: http });
  const sessions = new Map<string, GatewaySession>();
  const identifies: FakeGateway["identifies"] = [];
  const resumes: FakeGateway["resumes"] = [];
  let sessionCounter = 0;
  wss.on("connection", (socket) => {
    const send = (frame: object) => socket.send(JSON.stringify(frame));
    send({ op: 10, d: { heartbeat_interval: 1000 }, s: null, t: null });
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { op: number; d: Record<string, unknown> | number | null };
      const d = (typeof frame.d === "object" && frame.d !== null ? frame.d : {}) as Record<string, unknown>;
      if (frame.op === 1) return send({ op: 11, d: null, s: null, t: null });
      if (frame.op === 2) {
        const bot = botOf(String(d["token"]));
        identifies.push({ token: String(d["token"]), intents: Number(d["intents"]) });
        if (!bot) return socket.close(4004, "Authentication failed.");
        const session: GatewaySession = { id: `session-${++sessionCounter}`, bot, seq: 1, events: [], socket };
        sessions.set(session.id, session);
        return send({
          op: 0,
          s: 1,
          t: "READY",
          d: { v: 10, user: { id: bot.botUserId, username: bot.username, bot: true }, guilds: [], session_id: session.id, resume_gateway_url: `ws://127.0.0.1:${port}/resume`, application: { id: bot.applicationId, flags: 0 } },
        });
      }
      if (frame.op === 6) {
        resumes.push({ token: String(d["token"]), session_id: String(d["session_id"]), seq: Number(d["seq"]) });
        const session = sessions.get(String(d["session_id"]));
        if (!botOf(String(d["token"]))) return socket.close(4004, "Authentication failed.");
        if (!session || session.bot.token !== d["token"]) return send({ op: 9, d: false, s: null, t: null });
        // One socket per session: a resume takes the session over from the socket it had.
        if (session.socket !== socket) session.socket?.terminate();
        session.socket = socket;
        for (const event of session.events) if (event.s > Number(d["seq"])) send(event);
        return send({ op: 0, s: null, t: "RESUMED", d: {} });
      }
    });
  });
  const api: FakeGateway = {
    identifies,
    resumes,
    open: (bot) => [...sessions.values()].filter((session) => session.bot === bot && session.socket?.readyState === session.socket?.OPEN).length,
    dispatchMessage(bot, content, lost = false) {
      const session = [...sessions.values()].filter((candidate) => candidate.bot === bot).at(-1);
      if (!session) throw new Error("the bot has no Gateway session");
      const id = snowflake();
      const event = {
        op: 0 as const,
        s: ++session.seq,
        t: "MESSAGE_CREATE",
        d: { id, channel_id: "123456789012345678", guild_id: "223456789012345678", content, author: { id: "323456789012345678", username: "human" }, mentions: [], mention_roles: [], type: 0 },
      };
      session.events.push(event);
      if (!lost && session.socket?.readyState === session.socket?.OPEN) session.socket?.send(JSON.stringify(event));
      return id;
    },
    drop() {
      for (const client of wss.clients) client.terminate();
    },
  };
  return {
    api,
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

/** The headers Discord sends with an interaction callback, signed with the application's private key. */
export function signInteraction(bot: Pick<FakeDiscordBot, "privateKey">, body: string, timestamp = String(Math.floor(Date.now() / 1000))): Record<string, string> {
  const signature = sign(null, Buffer.from(timestamp + body), bot.privateKey).toString("hex");
  return { "content-type": "application/json", "x-signature-ed25519": signature, "x-signature-timestamp": timestamp };
}
