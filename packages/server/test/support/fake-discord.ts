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
  /** The query string, without its `?`, when there is one. */
  query?: string;
  authorization: string | undefined;
  /** The JSON body a POST sent, or a multipart upload's `payload_json`. */
  body?: Record<string, unknown>;
  /** A multipart upload's file parts. */
  files?: DiscordFile[];
}

/** A file part of a multipart upload (Discord docs: "Uploading Files"): its field name (`files[n]`), filename, type and bytes. */
export interface DiscordFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** A message the fake's REST API created (a thread's starter, a bot's post). */
export interface DiscordPosted {
  channelId: string;
  id: string;
  body: Record<string, unknown>;
  files: DiscordFile[];
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
  dispatchMessage(bot: FakeDiscordBot, content: string, lost?: boolean, fields?: Record<string, unknown>): string;
  /** Ends every socket abruptly (no close frame), as a network drop does. */
  drop(): void;
}

export interface FakeDiscord {
  /** The REST base, as SVC_DISCORD_API_URL takes it. */
  apiUrl: string;
  calls: DiscordCall[];
  gateway: FakeGateway;
  /** Channel ids that are threads (GET /channels answers type 11); threads the REST API started join them. */
  threads: Set<string>;
  /** Each guild's roles, as GET /guilds/{id}/roles answers them. */
  roles: Map<string, Array<{ id: string; name: string; tags?: { bot_id: string } }>>;
  posted: DiscordPosted[];
  /** Each channel's history, newest first, as GET /channels/{id}/messages pages it (`before`, `limit`). */
  history: Map<string, Array<Record<string, unknown>>>;
  /** The next `count` REST calls (with `method`, and a path `path` matches, when given) are refused with Discord's 429 (`retry_after` seconds). */
  rateLimit(count: number, retryAfter: number, method?: string, path?: RegExp): void;
  /** The next successful `method` call on a path `path` matches says its bucket is spent: `X-RateLimit-Remaining: 0`, reset after `resetAfter` seconds. */
  spendBucket(method: string, path: RegExp, resetAfter: number): void;
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
  const threads = new Set<string>();
  const roles: FakeDiscord["roles"] = new Map();
  const posted: DiscordPosted[] = [];
  const history: FakeDiscord["history"] = new Map();
  let limited: { count: number; retryAfter: number; method?: string; path?: RegExp } = { count: 0, retryAfter: 0 };
  let spend: { method: string; path: RegExp; resetAfter: number } | undefined;
  let port = 0;
  const http: Server = createServer(async (req, res) => {
    const answer = (status: number, body?: object, headers: Record<string, string> = {}) =>
      res.writeHead(status, { ...(body ? { "content-type": "application/json" } : {}), ...headers }).end(body ? JSON.stringify(body) : undefined);
    const url = new URL(req.url ?? "/", "http://discord.test");
    const path = decodeURIComponent(url.pathname.replace(/^\/api\/v10/, ""));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { body, files } = requestBody(req.headers["content-type"], Buffer.concat(chunks));
    calls.push({ method: req.method ?? "", path, ...(url.search ? { query: url.search.slice(1) } : {}), authorization: req.headers.authorization, ...(body ? { body } : {}), ...(files.length > 0 ? { files } : {}) });
    const token = /^Bot (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const bot = token && !revoked.has(token) ? bots.get(token) : undefined;
    if (!bot) return answer(401, { message: "401: Unauthorized", code: 0 });
    if (limited.count > 0 && (limited.method === undefined || limited.method === req.method) && (limited.path === undefined || limited.path.test(path))) {
      limited.count -= 1;
      // Discord's 429 (Discord docs: "Rate Limits"): Retry-After and X-RateLimit-* headers, retry_after in the body.
      const after = String(limited.retryAfter);
      return answer(429, { message: "You are being rate limited.", retry_after: limited.retryAfter, global: false }, { "retry-after": after, "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": after, "x-ratelimit-scope": "user" });
    }
    const rest = discordRest(req.method ?? "", path, url.searchParams, { body, files }, { threads, roles, posted, history });
    if (rest) {
      const spent = spend && rest.status < 300 && spend.method === req.method && spend.path.test(path) ? spend : undefined;
      if (spent) spend = undefined;
      // Discord's bucket headers (Discord docs: "Rate Limits"), on every answer; this one's bucket is spent.
      const bucket: Record<string, string> = spent ? { "x-ratelimit-limit": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": String(spent.resetAfter), "x-ratelimit-bucket": "fake" } : {};
      return answer(rest.status, rest.body, bucket);
    }
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
    threads,
    roles,
    posted,
    history,
    rateLimit: (count, retryAfter, method, path) => void (limited = { count, retryAfter, ...(method ? { method } : {}), ...(path ? { path } : {}) }),
    spendBucket: (method, path, resetAfter) => void (spend = { method, path, resetAfter }),
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
      posted.length = 0;
      history.clear();
      limited = { count: 0, retryAfter: 0 };
    },
    close: async () => {
      gateway.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A request's JSON body, or a multipart upload's `payload_json` and file parts (Discord docs: "Uploading Files"). */
function requestBody(contentType: string | undefined, raw: Buffer): { body?: Record<string, unknown>; files: DiscordFile[] } {
  if (raw.length === 0) return { files: [] };
  const boundary = /^multipart\/form-data; *boundary=(.+)$/i.exec(contentType ?? "")?.[1];
  if (!boundary) return { body: JSON.parse(raw.toString("utf8")) as Record<string, unknown>, files: [] };
  let body: Record<string, unknown> | undefined;
  const files: DiscordFile[] = [];
  for (const part of multipartParts(raw, boundary)) {
    if (part.name === "payload_json") body = JSON.parse(part.data.toString("utf8")) as Record<string, unknown>;
    else if (part.filename !== undefined) files.push({ field: part.name, filename: part.filename, contentType: part.contentType, bytes: part.data });
  }
  return { ...(body ? { body } : {}), files };
}

/** RFC 7578's parts: each between `--boundary` lines, headers then a blank line then the bytes. */
function multipartParts(raw: Buffer, boundary: string) {
  const parts: Array<{ name: string; filename?: string; contentType: string; data: Buffer }> = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let start = raw.indexOf(delimiter);
  while (start !== -1) {
    const afterDelimiter = start + delimiter.length;
    if (raw.subarray(afterDelimiter, afterDelimiter + 2).toString() === "--") break;
    const next = raw.indexOf(delimiter, afterDelimiter);
    if (next === -1) throw new Error("the multipart body has no closing boundary");
    const section = raw.subarray(afterDelimiter + 2, next - 2);
    const split = section.indexOf("\r\n\r\n");
    const headers = section.subarray(0, split).toString("utf8");
    parts.push({
      name: /name="([^"]*)"/.exec(headers)?.[1] ?? "",
      ...(/filename="([^"]*)"/.test(headers) ? { filename: /filename="([^"]*)"/.exec(headers)![1]! } : {}),
      contentType: /content-type: *([^\r\n]+)/i.exec(headers)?.[1] ?? "text/plain",
      data: Buffer.from(section.subarray(split + 4)),
    });
    start = next;
  }
  return parts;
}

/** The channel, thread, message, reaction and role routes svc's handlers call, with Discord's answers. */
function discordRest(
  method: string,
  path: string,
  query: URLSearchParams,
  request: { body?: Record<string, unknown>; files: DiscordFile[] },
  state: Pick<FakeDiscord, "threads" | "roles" | "posted" | "history">,
) {
  const { body } = request;
  const channel = /^\/channels\/([0-9]+)$/.exec(path);
  if (method === "GET" && channel) return { status: 200, body: { id: channel[1], type: state.threads.has(channel[1]!) ? 11 : 0, guild_id: GUILD_ID } };
  const thread = /^\/channels\/([0-9]+)\/messages\/([0-9]+)\/threads$/.exec(path);
  if (method === "POST" && thread) {
    // A thread started from a message has the message's id; a second start is Discord's 160004.
    if (state.threads.has(thread[2]!)) return { status: 400, body: { message: "A thread has already been created for this message", code: 160004 } };
    state.threads.add(thread[2]!);
    return { status: 201, body: { id: thread[2], type: 11, parent_id: thread[1], guild_id: GUILD_ID, name: body?.["name"] } };
  }
  const messages = /^\/channels\/([0-9]+)\/messages$/.exec(path);
  if (method === "POST" && messages) {
    const message = { channelId: messages[1]!, id: snowflake(), body: body ?? {}, files: request.files };
    state.posted.push(message);
    const attachments = request.files.map((file) => ({ id: snowflake(), filename: file.filename, size: file.bytes.length, content_type: file.contentType }));
    return { status: 200, body: { id: message.id, channel_id: message.channelId, ...message.body, attachments } };
  }
  if (method === "GET" && messages) {
    // Newest first, older than `before`, at most `limit` (Discord docs: "Get Channel Messages").
    const before = query.get("before");
    const older = (state.history.get(messages[1]!) ?? []).filter((message) => before === null || BigInt(message["id"] as string) < BigInt(before));
    return { status: 200, body: older.slice(0, Number(query.get("limit") ?? 50)) };
  }
  if (method === "PUT" && /^\/channels\/[0-9]+\/messages\/[0-9]+\/reactions\/[^/]+\/@me$/.test(path)) return { status: 204, body: undefined };
  const guildRoles = /^\/guilds\/([0-9]+)\/roles$/.exec(path);
  if (method === "GET" && guildRoles) return { status: 200, body: state.roles.get(guildRoles[1]!) ?? [] };
  return undefined;
}

/** The guild the fake's channels belong to. */
export const GUILD_ID = "223456789012345678";
/** The parent channel the fake's Gateway messages are sent in unless a test names another. */
export const CHANNEL_ID = "123456789012345678";

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
    dispatchMessage(bot, content, lost = false, fields = {}) {
      const session = [...sessions.values()].filter((candidate) => candidate.bot === bot).at(-1);
      if (!session) throw new Error("the bot has no Gateway session");
      const id = snowflake();
      const event = {
        op: 0 as const,
        s: ++session.seq,
        t: "MESSAGE_CREATE",
        d: { id, channel_id: CHANNEL_ID, guild_id: GUILD_ID, content, author: { id: "323456789012345678", username: "human" }, mentions: [], mention_roles: [], type: 0, ...fields },
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
