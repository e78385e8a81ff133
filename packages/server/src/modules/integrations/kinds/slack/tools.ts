import { randomUUID } from "node:crypto";
import type { IntegrationToolExecutor, ToolAnswer, ToolArtifact, ToolContext } from "../../kind.js";
import { filesToSend, type AttachmentArgs } from "../attachments.js";
import { MAX_ATTACHMENTS } from "./catalog.js";
import { escapeMrkdwn, postingRules } from "./mrkdwn.js";
import { createPacer, type Paced } from "./pacing.js";
import { postOnce, type PostOnce, type Thread } from "./post-once.js";
import { isRecord, stringMember, type SlackAnswer, type SlackWebApi } from "./web-api.js";

/**
 * The `slack_thread` tools (reference docs: integrations/slack, "Thread tools and subscriptions"): `read`
 * pages through the assigned thread with conversations.replies; `post_message` posts in it, text and
 * artifacts as one message (docs/integrations.md, "Slack"). The thread is always the assigned one: the
 * arguments name no channel. Every request of a call shares one budget for waiting out Slack's rate
 * limits (pacing.ts); a post whose answer is lost is read back before it is sent again (post-once.ts).
 */

const DEFAULT_READ_LIMIT = 20;

export function createSlackTools(api: SlackWebApi): IntegrationToolExecutor {
  return {
    async execute(operation, args, context) {
      const thread = threadOf(context.conversation);
      if (!thread) return { ok: false, message: "the assigned conversation is not a Slack thread" };
      if (context.credential.kind !== "slack_app_credentials") return { ok: false, message: "the integration's credential is not a slack_app_credentials secret" };
      const slack: Slack = { api, token: context.credential.access_token, thread, paced: createPacer(context.signal) };
      if (operation === "read") return read(slack, args as { cursor?: string; limit?: number });
      if (operation === "post_message") return postMessage(slack, args as { text: string } & AttachmentArgs, context);
      return { ok: false, message: `slack_thread has no operation ${operation}` };
    },
  };
}

/** What every request of one call uses: the client, the bot token, the assigned thread and the call's rate-limit budget. */
interface Slack {
  api: SlackWebApi;
  token: string;
  thread: Thread;
  paced: Paced;
}

function threadOf(conversation: Record<string, unknown>): Thread | undefined {
  const channel = conversation["channel_id"];
  const ts = conversation["thread_ts"];
  return typeof channel === "string" && typeof ts === "string" ? { channel, ts } : undefined;
}

const refused = (method: string, answer: Extract<SlackAnswer, { ok: false }>): ToolAnswer => ({ ok: false, message: `Slack refused ${method}: ${answer.error}` });

async function read(slack: Slack, args: { cursor?: string; limit?: number }): Promise<ToolAnswer> {
  const request: Record<string, string> = { channel: slack.thread.channel, ts: slack.thread.ts, limit: String(args.limit ?? DEFAULT_READ_LIMIT) };
  if (args.cursor !== undefined) request["cursor"] = args.cursor;
  const answer = await slack.paced(() => slack.api.call("conversations.replies", request, slack.token));
  if (!answer.ok) return refused("conversations.replies", answer);
  const messages = Array.isArray(answer["messages"]) ? answer["messages"].filter(isRecord).map(messageOf) : [];
  const metadata = isRecord(answer["response_metadata"]) ? answer["response_metadata"] : {};
  const next = answer["has_more"] === true ? stringMember(metadata, "next_cursor") : undefined;
  return { ok: true, value: { messages, ...(next ? { next_cursor: next } : {}) } };
}

/** Only the members an agent reads, each checked: Slack's answer is not trusted whole. */
function messageOf(message: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ts: stringMember(message, "ts") ?? "", text: typeof message["text"] === "string" ? message["text"] : "" };
  for (const member of ["user", "bot_id"]) {
    const value = stringMember(message, member);
    if (value) out[member] = value;
  }
  if (Array.isArray(message["files"])) {
    out["files"] = message["files"].filter(isRecord).map((file) => ({ id: stringMember(file, "id") ?? "", name: stringMember(file, "name") ?? "" }));
  }
  return out;
}

/**
 * One post, one message: text alone goes out with chat.postMessage carrying svc's marker in its metadata;
 * with files (artifacts, memory files), they are uploaded first and shared into the thread by files.completeUploadExternal
 * with the text as their initial_comment, so a failed upload never leaves the text posted alone.
 */
async function postMessage(slack: Slack, args: { text: string } & AttachmentArgs, context: ToolContext): Promise<ToolAnswer> {
  const files = await filesToSend(context, args, MAX_ATTACHMENTS);
  if ("message" in files) return { ok: false, message: files.message };
  const text = escapeMrkdwn(args.text, postingRules(context.settings));
  const fileIds: string[] = [];
  for (const file of files) {
    const uploaded = await upload(slack, file);
    if (!uploaded.ok) return uploaded;
    fileIds.push(uploaded.value["file_id"] as string);
  }
  const { api, token, thread, paced } = slack;
  const post: Pick<PostOnce, "send" | "isOurs"> = fileIds.length === 0 ? textPost(slack, text) : filesPost(slack, text, fileIds);
  const posted = await postOnce({ api, token, thread, paced, ...post });
  if (!posted.ok) return refused(fileIds.length === 0 ? "chat.postMessage" : "files.completeUploadExternal", posted);
  // files.completeUploadExternal answers the files, not the message it shared them with: its ts is known only when read back.
  const ts = stringMember(posted, "ts");
  return { ok: true, value: { ...(ts ? { ts } : {}), channel_id: thread.channel, thread_ts: thread.ts, file_ids: fileIds } };
}

/** The metadata event svc marks its posts with (Slack: "Using message metadata"); the payload's post_id is new per call. */
const POST_EVENT = "svc_post";

function textPost(slack: Slack, text: string): Pick<PostOnce, "send" | "isOurs"> {
  const postId = randomUUID();
  const metadata = JSON.stringify({ event_type: POST_EVENT, event_payload: { post_id: postId } });
  return {
    send: () => slack.api.call("chat.postMessage", { channel: slack.thread.channel, thread_ts: slack.thread.ts, text, metadata }, slack.token),
    isOurs: (message) => {
      const marker = isRecord(message["metadata"]) ? message["metadata"] : {};
      return marker["event_type"] === POST_EVENT && isRecord(marker["event_payload"]) && marker["event_payload"]["post_id"] === postId;
    },
  };
}

/** Files svc uploaded are shared nowhere else, so their ids mark the message (files.completeUploadExternal takes no metadata). */
function filesPost(slack: Slack, text: string, fileIds: string[]): Pick<PostOnce, "send" | "isOurs"> {
  const files = JSON.stringify(fileIds.map((id) => ({ id })));
  return {
    send: () => slack.api.call("files.completeUploadExternal", { files, channel_id: slack.thread.channel, thread_ts: slack.thread.ts, initial_comment: text }, slack.token),
    isOurs: (message) => Array.isArray(message["files"]) && message["files"].some((file) => isRecord(file) && typeof file["id"] === "string" && fileIds.includes(file["id"])),
  };
}

/** One file to Slack's external upload: a slot from files.getUploadURLExternal, then the bytes to its upload_url. Shared nowhere yet. */
async function upload(slack: Slack, file: ToolArtifact): Promise<ToolAnswer> {
  const slot = await slack.paced(() => slack.api.call("files.getUploadURLExternal", { filename: file.filename, length: String(file.bytes.length) }, slack.token));
  if (!slot.ok) return refused("files.getUploadURLExternal", slot);
  const uploadUrl = stringMember(slot, "upload_url");
  const fileId = stringMember(slot, "file_id");
  if (!uploadUrl || !fileId) return { ok: false, message: "Slack's files.getUploadURLExternal answer has no upload_url or file_id; nothing was posted" };
  await slack.paced(() => slack.api.upload(uploadUrl, file));
  return { ok: true, value: { file_id: fileId } };
}
