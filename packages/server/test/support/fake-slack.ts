import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Slack Web API (https://api.slack.com/web) on a loopback port: `POST /api/<method>` with arguments
 * form-encoded or as JSON, the token in `Authorization: Bearer` or a `token` argument, and Slack's
 * answers: HTTP 200 with `{ok: true, …}` or `{ok: false, error}`, HTTP 429 with Retry-After when rate
 * limited. Speaks auth.test, oauth.v2.access, apps.manifest.create, and for the thread runtime
 * chat.postMessage, reactions.add, conversations.replies and the external file upload.
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
}

export interface FakeSlack {
  /** The Web API base, as SVC_SLACK_API_URL takes it. */
  apiUrl: string;
  calls: SlackCall[];
  /** A bot token that auth.test knows; returns the bot. */
  addBot(overrides?: Partial<FakeBot>): FakeBot;
  /** Makes `code` redeemable once with oauth.v2.access for this app. */
  addInstall(install: FakeInstall): void;
  /** The next call of `method` answers HTTP 429 with this Retry-After. */
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  /** The next call of `method` answers this HTTP status (a 5xx outage). */
  failNext(method: string, status: number): void;
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
  const rateLimited = new Map<string, number>();
  const failing = new Map<string, number>();
  const calls: SlackCall[] = [];
  const manifests = fakeManifests();
  const threads = createThreads(() => `http://127.0.0.1:${(http.address() as AddressInfo).port}`);

  const http: Server = createServer(async (req, res) => {
    const answer = (status: number, body: object, headers: Record<string, string> = {}) =>
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers }).end(JSON.stringify(body));
    const pathname = new URL(req.url ?? "/", "http://slack.test").pathname;
    // files.getUploadURLExternal's upload_url: the file's raw bytes, no token (the URL is the credential).
    if (pathname.startsWith("/upload/")) return answer(threads.receiveUpload(pathname.slice("/upload/".length), await readBytes(req)) ? 200 : 404, {});
    const method = pathname.replace(/^\/api\//, "");
    const args = await readArgs(req);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const token = bearer ?? args["token"];
    calls.push({ method, token, args });
    if (req.method !== "POST" && req.method !== "GET") return answer(405, { ok: false, error: "method_not_supported" });
    const retryAfter = rateLimited.get(method);
    if (retryAfter !== undefined) {
      rateLimited.delete(method);
      return answer(429, { ok: false, error: "ratelimited" }, { "retry-after": String(retryAfter) });
    }
    const status = failing.get(method);
    if (status !== undefined) {
      failing.delete(method);
      return res.writeHead(status, { "content-type": "text/html" }).end("<html>upstream error</html>");
    }
    if (method === "auth.test") return answer(200, authTest(token));
    if (method === "oauth.v2.access") return answer(200, oauthAccess(req, args));
    if (method === "apps.manifest.create") return answer(200, manifests.create(token, args));
    const threadAnswer = threads.answer(method, token === undefined ? undefined : bots.get(token), args);
    if (threadAnswer) return answer(200, threadAnswer);
    return answer(404, { ok: false, error: "unknown_method" });
  });

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
    rateLimitNext: (method, seconds) => void rateLimited.set(method, seconds),
    failNext: (method, status) => void failing.set(method, status),
    revoke: (token) => void revoked.add(token),
    manifests,
    thread: threads.state,
    reset() {
      calls.length = 0;
      rateLimited.clear();
      failing.clear();
      threads.reset();
    },
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
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
  const threadMessages = (channel: string, ts: string) =>
    [
      ...written.filter((m) => m.channel === channel && m.thread_ts === ts).map((m) => ({ type: "message", user: m.user, text: m.text, ts: m.ts, thread_ts: ts })),
      ...state.posted.filter((m) => m.channel === channel && (m.thread_ts === ts || m.ts === ts)).map((m) => ({ type: "message", user: m.user, bot_id: "B0BOT", text: m.text, ts: m.ts, thread_ts: ts })),
    ].sort((a, b) => (a.ts === ts ? -1 : b.ts === ts ? 1 : Number(a.ts) - Number(b.ts)));
  const methods: Record<string, (bot: FakeBot, args: Record<string, string>) => object> = {
    "chat.postMessage"(bot, args) {
      if (!args["channel"]) return { ok: false, error: "channel_not_found" };
      if (!args["text"] && !args["blocks"]) return { ok: false, error: "no_text" };
      const ts = `${1800000000 + ++tsCounter}.000100`;
      const blocks = args["blocks"] ? (JSON.parse(args["blocks"]) as unknown) : undefined;
      state.posted.push({ channel: args["channel"], ts, thread_ts: args["thread_ts"], text: args["text"] ?? "", blocks, user: bot.botUserId });
      return { ok: true, channel: args["channel"], ts, message: { type: "message", user: bot.botUserId, bot_id: bot.botId, text: args["text"] ?? "", ts } };
    },
    "conversations.replies"(_bot, args) {
      if (!args["channel"]) return { ok: false, error: "channel_not_found" };
      if (!args["ts"]) return { ok: false, error: "thread_not_found" };
      const all = threadMessages(args["channel"], args["ts"]);
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
    "files.completeUploadExternal"(_bot, args) {
      let listed: Array<{ id?: unknown }>;
      try {
        listed = JSON.parse(args["files"] ?? "") as Array<{ id?: unknown }>;
      } catch {
        return { ok: false, error: "invalid_arguments" };
      }
      const files = listed.map((entry) => state.files.find((file) => file.id === entry.id));
      if (files.some((file) => !file || file.bytes === undefined || file.bytes.length !== file.length)) return { ok: false, error: "file_not_found" };
      for (const file of files) Object.assign(file!, { channel: args["channel_id"], thread_ts: args["thread_ts"] });
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
