import type { IntegrationToolExecutor, ToolAnswer, ToolArtifact, ToolContext } from "../../kind.js";
import { filesToSend, type AttachmentArgs } from "../attachments.js";
import { MAX_ATTACHMENTS } from "./catalog.js";
import { objectMember, scalarMember, type MultipartPart, type RestAnswer, type RestClient } from "../rest.js";

/**
 * The `discord_thread` tools (reference docs: integrations/discord, "Thread tools and subscriptions"):
 * `read` pages back through the assigned thread (`GET /channels/{thread}/messages`), `post_message` posts
 * in it (`POST /channels/{thread}/messages`), with artifacts and memory files as attachments in Discord's multipart upload
 * (Discord docs: "Uploading Files"). The thread is always the one assigned at launch: the arguments name
 * no channel. Discord's 429 reaches the tool runner as `rate_limited` (integrations/rest.ts).
 */

const DEFAULT_READ_LIMIT = 20;
const SNOWFLAKE = /^[0-9]{15,20}$/;

export function createDiscordTools(rest: RestClient): IntegrationToolExecutor {
  return {
    async execute(operation, args, context) {
      const thread = context.conversation["thread_id"];
      if (typeof thread !== "string" || !SNOWFLAKE.test(thread)) return { ok: false, message: "the assigned conversation is not a Discord thread" };
      if (context.credential.kind !== "generic") return { ok: false, message: "the integration's credential is not a generic secret holding the bot token" };
      const headers = { authorization: `Bot ${context.credential.value}` };
      if (operation === "read") return read(rest, headers, thread, args as { before?: string; limit?: number });
      if (operation === "post_message") return postMessage(rest, headers, thread, args as { content: string } & AttachmentArgs, context);
      return { ok: false, message: `discord_thread has no operation ${operation}` };
    },
  };
}

type Headers = Record<string, string>;

async function read(rest: RestClient, headers: Headers, thread: string, args: { before?: string; limit?: number }): Promise<ToolAnswer> {
  const limit = args.limit ?? DEFAULT_READ_LIMIT;
  const query = new URLSearchParams({ limit: String(limit), ...(args.before === undefined ? {} : { before: args.before }) });
  const answer = await rest.call("GET", `/channels/${thread}/messages?${query.toString()}`, headers);
  if (answer.status !== 200 || !Array.isArray(answer.body)) return refused("reading the thread", answer);
  const messages = answer.body.filter(isRecord).map(messageOf);
  // Discord answers newest first: the last message's id is where the next, older page starts.
  const next = messages.length === limit ? messages.at(-1)?.["id"] : undefined;
  return { ok: true, value: { messages, ...(typeof next === "string" && next !== "" ? { next_before: next } : {}) } };
}

/** Only the members an agent reads, each checked: Discord's answer is not trusted whole. */
function messageOf(message: Record<string, unknown>): Record<string, unknown> {
  const author = objectMember(message, "author") ?? {};
  const attachments = Array.isArray(message["attachments"]) ? message["attachments"].filter(isRecord) : [];
  return {
    id: scalarMember(message, "id") ?? "",
    content: typeof message["content"] === "string" ? message["content"] : "",
    author: { id: scalarMember(author, "id") ?? "", username: scalarMember(author, "username") ?? "", bot: author["bot"] === true },
    timestamp: scalarMember(message, "timestamp") ?? "",
    attachments: attachments.map((attachment) => ({ filename: scalarMember(attachment, "filename") ?? "" })),
  };
}

async function postMessage(rest: RestClient, headers: Headers, thread: string, args: { content: string } & AttachmentArgs, context: ToolContext): Promise<ToolAnswer> {
  const files = await filesToSend(context, args, MAX_ATTACHMENTS);
  if ("message" in files) return { ok: false, message: files.message };
  // Agents' text never pings anyone (Discord docs: "Allowed Mentions").
  const message = { content: args.content, allowed_mentions: { parse: [] } };
  const path = `/channels/${thread}/messages`;
  const answer = files.length === 0 ? await rest.call("POST", path, headers, message) : await rest.upload(path, headers, withAttachments(message, files));
  const messageId = scalarMember(answer.body, "id");
  if (answer.status !== 200 || !messageId) return refused("posting the message", answer);
  return { ok: true, value: { message_id: messageId, channel_id: scalarMember(answer.body, "channel_id") ?? thread, thread_id: thread } };
}

/** The multipart parts of a message with files: `payload_json` naming each `files[n]` in `attachments` (Discord docs: "Uploading Files"). */
function withAttachments(message: Record<string, unknown>, files: ToolArtifact[]): MultipartPart[] {
  const names = files.map((file) => safeFilename(file.filename));
  const payload = { ...message, attachments: names.map((filename, id) => ({ id, filename })) };
  return [
    { name: "payload_json", contentType: "application/json", data: Buffer.from(JSON.stringify(payload), "utf8") },
    ...files.map((file, index) => ({ name: `files[${index}]`, filename: names[index]!, contentType: file.contentType, data: file.bytes })),
  ];
}

/** A filename Discord keeps as given: no path separators, quotes or control characters. */
function safeFilename(name: string): string {
  const cleaned = name.replace(/[\u0000-\u001f\u007f/\\"]/g, "_").trim();
  return cleaned === "" ? "file" : cleaned;
}

/** A refusal the model can act on: Discord's status, and its JSON error code and message when it sent them. */
function refused(what: string, answer: RestAnswer): ToolAnswer {
  const code = scalarMember(answer.body, "code");
  const message = scalarMember(answer.body, "message");
  const detail = [code === undefined ? "" : `, code ${code}`, message === undefined ? "" : `: ${message}`].join("");
  return { ok: false, message: `Discord refused ${what} (HTTP ${answer.status}${detail})` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
