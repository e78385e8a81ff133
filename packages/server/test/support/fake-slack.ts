import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Slack Web API (https://api.slack.com/web) on a loopback port: `POST /api/<method>` with arguments
 * form-encoded or as JSON, the token in `Authorization: Bearer` or a `token` argument, and Slack's
 * answers: HTTP 200 with `{ok: true, …}` or `{ok: false, error}`, HTTP 429 with Retry-After when rate
 * limited (and again for every call of that method until the Retry-After has passed, as Slack does).
 * Speaks auth.test, oauth.v2.access, apps.manifest.create, and for the thread runtime chat.postMessage
 * (with message metadata), reactions.add, conversations.replies (metadata with include_all_metadata) and
 * the external file upload (files shared into a thread with their initial_comment as one message).
 */

export interface FakeBot {
  token: string;
  teamId: string;
  teamName: string;
  botUserId: string;
  botId: string;
  appId: string;
}

export interface FakeInstall {
  clientId: string;
  clientSecret: string;
  code: string;
  /** The bot whose token the code buys. */
  bot: FakeBot;
  scope: string;
}

export interface SlackCall {
  method: string;
  token: string | undefined;
  args: Record<string, string>;
  /** The HTTP status answered; 0 when no answer was sent (the connection was dropped). */
  status: number;
}

export interface FailureOptions {
  /** How many calls in a row fail; 1 when not given. */
  times?: number;
  /** The method does its work (a message is stored) before the failure is answered: the caller cannot tell. */
  afterStoring?: boolean;
}

export interface FakeSlack {
  /** The Web API base, as SVC_SLACK_API_URL takes it. */
  apiUrl: string;
  calls: SlackCall[];
  /** A bot token that auth.test knows; returns the bot. */
  addBot(overrides?: Partial<FakeBot>): FakeBot;
  /** Makes `code` redeemable once with oauth.v2.access for this app. */
  addInstall(install: FakeInstall): void;
  /**
   * The next call of `method` answers HTTP 429 with this Retry-After, and so does every call of it until
   * that many seconds have passed (each with the seconds still left): a caller that retries early is refused again.
   */
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  /** The next call(s) of `method` answer this HTTP status (a 5xx outage), by default before doing anything. */
  failNext(method: string, status: number, options?: FailureOptions): void;
  /** The next call of `method` does its work, then the connection closes with no answer (as a timeout looks to the caller). */
  dropNext(method: string): void;
  /** Revokes a token: auth.test answers token_revoked. */
  revoke(token: string): void;
  /** apps.manifest.create: an app configuration token it accepts, and the apps created so far. */
  manifests: FakeManifests;
  /** The thread runtime's side (chat.postMessage, reactions.add): what the bots did. */
  thread: FakeSlackThreads;
  reset(): void;
  close(): Promise<void>;
}

export const ALL_BOT_SCOPES = "app_mentions:read,channels:history,groups:history,im:history,mpim:history,chat:write,reactions:write,files:read,files:write,users:read";

let counter = 0;
const slackId = (prefix: string) => `${prefix}${(++counter).toString(36).toUpperCase().padStart(8, "0")}`;

export async function startFakeSlack(): Promise<FakeSlack> {
  const bots = new Map<string, FakeBot>();
  const revoked = new Set<string>();
  const installs = new Map<string, FakeInstall & { used: boolean }>();
  const rateLimits = new Map<string, RateLimit>();
  const failing = new Map<string, { status: number; left: number; afterStoring: boolean }>();
  const dropping = new Set<string>();
  const calls: SlackCall[] = [];
  const manifests = fakeManifests();
  const threads = createThreads(() => `http://127.0.0.1:${(http.address() as AddressInfo).port}`);

  const http: Server = createServer(async (req, res) => {
    const pathname = new URL(req.url ?? "/", "http://slack.test").pathname;
    // files.getUploadURLExternal's upload_url: the file's raw bytes, no token (the URL is the credential).
    if (pathname.startsWith("/upload/")) {
      const received = threads.receiveUpload(pathname.slice("/upload/".length), await readBytes(req));
      return res.writeHead(received ? 200 : 404, { "content-type": "text/plain" }).end(received ? "OK" : "");
    }
    const method = pathname.replace(/^\/api\//, "");
    const args = await readArgs(req);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const token = bearer ?? args["token"];
    const call: SlackCall = { method, token, args, status: 0 };
    calls.push(call);
    const answer = (status: number, body: object, headers: Record<string, string> = {}) => {
      call.status = status;
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers }).end(JSON.stringify(body));
    };
    if (req.method !== "POST" && req.method !== "GET") return answer(405, { ok: false, error: "method_not_supported" });
    const retryAfter = rateLimitedFor(method);
    if (retryAfter !== undefined) return answer(429, { ok: false, error: "ratelimited" }, { "retry-after": String(retryAfter) });
    const failure = failing.get(method);
    if (failure && --failure.left === 0) failing.delete(method);
    if (failure && !failure.afterStoring) return failWith(failure.status);
    const body = work(method, token, req, args);
    if (failure) return failWith(failure.status);
    if (dropping.delete(method)) return void res.socket?.destroy();
    if (body) return answer(200, body);
    return answer(404, { ok: false, error: "unknown_method" });

    function failWith(status: number) {
      call.status = status;
      res.writeHead(status, { "content-type": "text/html" }).end("<html>upstream error</html>");
    }
  });

  /** What a method answers when it is not failing: undefined for a method the fake does not speak. */
  function work(method: string, token: string | undefined, req: IncomingMessage, args: Record<string, string>): object | undefined {
    if (method === "auth.test") return authTest(token);
    if (method === "oauth.v2.access") return oauthAccess(req, args);
    if (method === "apps.manifest.create") return manifests.create(token, args);
    return threads.answer(method, token === undefined ? undefined : bots.get(token), args);
  }

  /** The seconds left of `method`'s rate limit, starting the window armed by rateLimitNext; undefined when not limited. */
  function rateLimitedFor(method: string): number | undefined {
    const limit = rateLimits.get(method);
    if (!limit) return undefined;
    if (limit.until === undefined) {
      limit.until = Date.now() + limit.seconds * 1000;
      return limit.seconds;
    }
    const left = limit.until - Date.now();
    if (left > 0) return Math.ceil(left / 1000);
    rateLimits.delete(method);
    return undefined;
  }

  function authTest(token: string | undefined): object {
    if (!token) return { ok: false, error: "not_authed" };
    if (revoked.has(token)) return { ok: false, error: "token_revoked" };
    const bot = bots.get(token);
    if (!bot) return { ok: false, error: "invalid_auth" };
    return {
      ok: true,
      url: `https://${bot.teamName.toLowerCase().replace(/\W+/g, "-")}.slack.com/`,
      team: bot.teamName,
      user: "svc-bot",
      team_id: bot.teamId,
      user_id: bot.botUserId,
      bot_id: bot.botId,
      is_enterprise_install: false,
    };
  }

  function oauthAccess(req: IncomingMessage, args: Record<string, string>): object {
    // Client credentials as form arguments, or as HTTP Basic authentication (Slack accepts either).
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const [basicId, basicSecret] = basic ? Buffer.from(basic, "base64").toString("utf8").split(":") : [];
    const clientId = args["client_id"] ?? basicId;
    const clientSecret = args["client_secret"] ?? basicSecret;
    const install = installs.get(args["code"] ?? "");
    if (!install || install.used) return { ok: false, error: "invalid_code" };
    if (install.clientId !== clientId) return { ok: false, error: "invalid_client_id" };
    if (install.clientSecret !== clientSecret) return { ok: false, error: "bad_client_secret" };
    if (!args["redirect_uri"]) return { ok: false, error: "bad_redirect_uri" };
    install.used = true;
    bots.set(install.bot.token, install.bot);
    return {
      ok: true,
      access_token: install.bot.token,
      token_type: "bot",
      scope: install.scope,
      bot_user_id: install.bot.botUserId,
      app_id: install.bot.appId,
      team: { id: install.bot.teamId, name: install.bot.teamName },
      enterprise: null,
      authed_user: { id: slackId("U") },
      is_enterprise_install: false,
    };
  }

  const address = await new Promise<AddressInfo>((resolve) => http.listen(0, "127.0.0.1", () => resolve(http.address() as AddressInfo)));
  return {
    apiUrl: `http://127.0.0.1:${address.port}/api`,
    calls,
    addBot(overrides = {}) {
      const bot: FakeBot = {
        token: `xoxb-${slackId("")}-SENTINEL`,
        teamId: slackId("T"),
        teamName: "Acme Workspace",
        botUserId: slackId("U"),
        botId: slackId("B"),
        appId: slackId("A"),
        ...overrides,
      };
      bots.set(bot.token, bot);
      return bot;
    },
    addInstall(install) {
      installs.set(install.code, { ...install, used: false });
    },
    rateLimitNext: (method, seconds) => void rateLimits.set(method, { seconds, until: undefined }),
    failNext: (method, status, options = {}) => void failing.set(method, { status, left: options.times ?? 1, afterStoring: options.afterStoring ?? false }),
    dropNext: (method) => void dropping.add(method),
    revoke: (token) => void revoked.add(token),
    manifests,
    thread: threads.state,
    reset() {
      calls.length = 0;
      rateLimits.clear();
      failing.clear();
      dropping.clear();
      threads.reset();
    },
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

/** A rate limit armed by rateLimitNext: its window starts (`until`) when the first call is refused. */
interface RateLimit {
  seconds: number;
  until: number | undefined;
}

// ---- apps.manifest.create (Slack: "Create an app from an app manifest"), kept apart from the runtime's methods.

export interface FakeApp {
  appId: string;
  clientId: string;
  clientSecret: string;
  signingSecret: string;
  manifest: Record<string, unknown>;
}

export interface FakeManifests {
  /** An app configuration token (xoxe.xoxp-…) apps.manifest.create accepts. */
  addConfigToken(token: string): void;
  apps: FakeApp[];
  /** The next create answers invalid_manifest with these errors (Slack failing to verify a request URL, say). */
  refuseNext(errors: Array<{ message: string; pointer: string }>): void;
  create(token: string | undefined, args: Record<string, string>): object;
}

function fakeManifests(): FakeManifests {
  const tokens = new Set<string>();
  const apps: FakeApp[] = [];
  let refusal: Array<{ message: string; pointer: string }> | null = null;
  return {
    apps,
    addConfigToken: (token) => void tokens.add(token),
    refuseNext: (errors) => void (refusal = errors),
    create(token, args) {
      if (!token) return { ok: false, error: "not_authed" };
      if (!tokens.has(token)) return { ok: false, error: "invalid_auth" };
      let manifest: Record<string, unknown>;
      try {
        manifest = JSON.parse(args["manifest"] ?? "") as Record<string, unknown>;
      } catch {
        return { ok: false, error: "invalid_arguments" };
      }
      const errors = refusal ?? manifestErrors(manifest);
      refusal = null;
      if (errors.length > 0) return { ok: false, error: "invalid_manifest", errors };
      const app: FakeApp = { appId: slackId("A"), clientId: `${Date.now()}.${++counter}`, clientSecret: `secret-${slackId("")}`, signingSecret: `signing-${slackId("")}`, manifest };
      apps.push(app);
      return {
        ok: true,
        app_id: app.appId,
        credentials: { client_id: app.clientId, client_secret: app.clientSecret, verification_token: `verify-${slackId("")}`, signing_secret: app.signingSecret },
        oauth_authorize_url: `https://slack.com/oauth/v2/authorize?client_id=${app.clientId}`,
      };
    },
  };
}

/** The checks Slack makes that svc's manifest could fail: a name (at most 35 characters, not "Slack"), redirect URLs, bot scopes. */
function manifestErrors(manifest: Record<string, unknown>): Array<{ message: string; pointer: string }> {
  const at = (path: string[]): unknown => path.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined), manifest);
  const errors: Array<{ message: string; pointer: string }> = [];
  const name = at(["display_information", "name"]);
  if (typeof name !== "string" || name.length === 0 || name.length > 35) errors.push({ message: "must be 1 to 35 characters", pointer: "/display_information/name" });
  else if (/slack/i.test(name)) errors.push({ message: "the name cannot contain the word Slack", pointer: "/display_information/name" });
  if (!Array.isArray(at(["oauth_config", "redirect_urls"]))) errors.push({ message: "redirect_urls is required", pointer: "/oauth_config/redirect_urls" });
  if (!Array.isArray(at(["oauth_config", "scopes", "bot"]))) errors.push({ message: "bot scopes are required", pointer: "/oauth_config/scopes/bot" });
  return errors;
}

/** Slack's metadata argument: a JSON object with an event_type and an event_payload object; null when it is not. */
function metadataOf(text: string): PostedMessage["metadata"] | null {
  try {
    const parsed = JSON.parse(text) as { event_type?: unknown; event_payload?: unknown };
    const payload = parsed.event_payload;
    if (typeof parsed.event_type !== "string" || typeof payload !== "object" || payload === null || Array.isArray(payload)) return null;
    return { event_type: parsed.event_type, event_payload: payload as Record<string, unknown> };
  } catch {
    return null;
  }
}

async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function readArgs(req: IncomingMessage): Promise<Record<string, string>> {
  const text = (await readBytes(req)).toString("utf8");
  if (text === "") return {};
  if ((req.headers["content-type"] ?? "").startsWith("application/json")) {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]));
  }
  return Object.fromEntries(new URLSearchParams(text));
}

// ---- The thread runtime's Web API methods: chat.postMessage, chat.update, reactions.add, conversations.replies and the external file upload ----

export interface PostedMessage {
  channel: string;
  ts: string;
  thread_ts: string | undefined;
  text: string;
  blocks: unknown;
  /** The bot user that posted it. */
  user: string;
  /** chat.postMessage's `metadata` (Slack: "Using message metadata"), as given. */
  metadata: { event_type: string; event_payload: Record<string, unknown> } | undefined;
  /** The files a files.completeUploadExternal shared with this message (its initial_comment is the text). */
  files: string[];
}

export interface UploadedFile {
  id: string;
  filename: string;
  length: number;
  bytes: Buffer | undefined;
  /** Set by files.completeUploadExternal: where the file was shared. */
  channel: string | undefined;
  thread_ts: string | undefined;
}

export interface FakeSlackThreads {
  posted: PostedMessage[];
  reactions: Array<{ channel: string; timestamp: string; name: string; user: string }>;
  files: UploadedFile[];
  /** Messages people wrote in a thread (its parent has ts = thread_ts), for conversations.replies beside the bots' own. */
  addMessages(channel: string, threadTs: string, messages: Array<{ ts: string; user: string; text: string }>): void;
  /** chat.update calls that changed a message, in order. */
  updated: Array<{ channel: string; ts: string }>;
}

let tsCounter = 0;

/** The methods a bot token calls; an unknown token is `invalid_auth`, as Slack answers it. */
function createThreads(origin: () => string) {
  const written: Array<{ channel: string; thread_ts: string; ts: string; user: string; text: string }> = [];
  const state: FakeSlackThreads = {
    posted: [],
    reactions: [],
    files: [],
    updated: [],
    addMessages: (channel, threadTs, messages) => void written.push(...messages.map((m) => ({ channel, thread_ts: threadTs, ...m }))),
  };
  /** A thread's messages as conversations.replies lists them: the parent first, then replies by ts. */
  const threadMessages = (channel: string, ts: string, withMetadata: boolean) =>
    [
      ...written.filter((m) => m.channel === channel && m.thread_ts === ts).map((m) => ({ type: "message", user: m.user, text: m.text, ts: m.ts, thread_ts: ts })),
      ...state.posted.filter((m) => m.channel === channel && (m.thread_ts === ts || m.ts === ts)).map((m) => botMessage(m, ts, withMetadata)),
    ].sort((a, b) => (a.ts === ts ? -1 : b.ts === ts ? 1 : Number(a.ts) - Number(b.ts)));
  /** A bot's message as Slack lists it: its files, and its metadata only when include_all_metadata asked for it. */
  const botMessage = (m: PostedMessage, threadTs: string, withMetadata: boolean) => ({
    type: "message",
    user: m.user,
    bot_id: "B0BOT",
    text: m.text,
    ts: m.ts,
    thread_ts: threadTs,
    ...(m.files.length > 0 ? { files: m.files.map((id) => ({ id, name: state.files.find((f) => f.id === id)?.filename ?? "" })) } : {}),
    ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
  });
  const post = (bot: FakeBot, message: Omit<PostedMessage, "ts" | "user">): PostedMessage => {
    const posted = { ...message, ts: `${1800000000 + ++tsCounter}.000100`, user: bot.botUserId };
    state.posted.push(posted);
    return posted;
  };
  const methods: Record<string, (bot: FakeBot, args: Record<string, string>) => object> = {
    "chat.postMessage"(bot, args) {
      if (!args["channel"]) return { ok: false, error: "channel_not_found" };
      if (!args["text"] && !args["blocks"]) return { ok: false, error: "no_text" };
      const metadata = args["metadata"] === undefined ? undefined : metadataOf(args["metadata"]);
      if (metadata === null) return { ok: false, error: "invalid_metadata_format" };
      const blocks = args["blocks"] ? (JSON.parse(args["blocks"]) as unknown) : undefined;
      const { ts } = post(bot, { channel: args["channel"], thread_ts: args["thread_ts"], text: args["text"] ?? "", blocks, metadata, files: [] });
      return { ok: true, channel: args["channel"], ts, message: { type: "message", user: bot.botUserId, bot_id: bot.botId, text: args["text"] ?? "", ts } };
    },
    "conversations.replies"(_bot, args) {
      if (!args["channel"]) return { ok: false, error: "channel_not_found" };
      if (!args["ts"]) return { ok: false, error: "thread_not_found" };
      const all = threadMessages(args["channel"], args["ts"], args["include_all_metadata"] === "true");
      if (all.length === 0) return { ok: false, error: "thread_not_found" };
      // Slack's cursors are opaque; this one is base64 of the next offset.
      const offset = args["cursor"] ? Number(Buffer.from(args["cursor"], "base64").toString("utf8").replace("next_ts:", "")) : 0;
      if (!Number.isInteger(offset) || offset < 0) return { ok: false, error: "invalid_cursor" };
      const limit = Math.min(Number(args["limit"] ?? "1000") || 1000, 1000);
      const page = all.slice(offset, offset + limit);
      const hasMore = offset + limit < all.length;
      const next = hasMore ? Buffer.from(`next_ts:${offset + limit}`).toString("base64") : "";
      return { ok: true, messages: page, has_more: hasMore, response_metadata: { next_cursor: next } };
    },
    "files.getUploadURLExternal"(_bot, args) {
      const length = Number(args["length"]);
      if (!args["filename"] || !Number.isInteger(length) || length < 1) return { ok: false, error: "invalid_arguments" };
      const id = slackId("F");
      state.files.push({ id, filename: args["filename"], length, bytes: undefined, channel: undefined, thread_ts: undefined });
      return { ok: true, upload_url: `${origin()}/upload/${id}`, file_id: id };
    },
    /** With channel_id the files are shared there, in thread_ts when given, as ONE message whose text is initial_comment. */
    "files.completeUploadExternal"(bot, args) {
      let listed: Array<{ id?: unknown }>;
      try {
        listed = JSON.parse(args["files"] ?? "") as Array<{ id?: unknown }>;
      } catch {
        return { ok: false, error: "invalid_arguments" };
      }
      const files = listed.map((entry) => state.files.find((file) => file.id === entry.id));
      if (files.some((file) => !file || file.bytes === undefined || file.bytes.length !== file.length)) return { ok: false, error: "file_not_found" };
      if (args["thread_ts"] && !args["channel_id"]) return { ok: false, error: "invalid_arguments" };
      for (const file of files) Object.assign(file!, { channel: args["channel_id"], thread_ts: args["thread_ts"] });
      const fileIds = files.map((file) => file!.id);
      if (args["channel_id"]) post(bot, { channel: args["channel_id"], thread_ts: args["thread_ts"], text: args["initial_comment"] ?? "", blocks: undefined, metadata: undefined, files: fileIds });
      return { ok: true, files: files.map((file) => ({ id: file!.id, title: file!.filename })) };
    },
    /** Slack lets a bot edit only its own message: another's is cant_update_message. */
    "chat.update"(bot, args) {
      const message = state.posted.find((m) => m.channel === args["channel"] && m.ts === args["ts"]);
      if (!message) return { ok: false, error: "message_not_found" };
      if (message.user !== bot.botUserId) return { ok: false, error: "cant_update_message" };
      message.text = args["text"] ?? "";
      message.blocks = args["blocks"] ? (JSON.parse(args["blocks"]) as unknown) : undefined;
      state.updated.push({ channel: message.channel, ts: message.ts });
      return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
    },
    "reactions.add"(bot, args) {
      const { channel, timestamp, name } = args;
      if (!channel || !timestamp || !name) return { ok: false, error: "invalid_arguments" };
      if (state.reactions.some((r) => r.channel === channel && r.timestamp === timestamp && r.name === name && r.user === bot.botUserId)) {
        return { ok: false, error: "already_reacted" };
      }
      state.reactions.push({ channel, timestamp, name, user: bot.botUserId });
      return { ok: true };
    },
  };
  return {
    state,
    answer(method: string, bot: FakeBot | undefined, args: Record<string, string>): object | undefined {
      const handler = methods[method];
      if (!handler) return undefined;
      return bot ? handler(bot, args) : { ok: false, error: "invalid_auth" };
    },
    /** Bytes for a slot files.getUploadURLExternal made; false for an unknown slot. */
    receiveUpload(fileId: string, bytes: Buffer): boolean {
      const file = state.files.find((f) => f.id === fileId);
      if (!file) return false;
      file.bytes = bytes;
      return true;
    },
    reset() {
      state.posted.length = 0;
      state.reactions.length = 0;
      state.files.length = 0;
      written.length = 0;
      state.updated.length = 0;
    },
  };
}
