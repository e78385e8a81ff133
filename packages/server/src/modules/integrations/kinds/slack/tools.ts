import type { IntegrationToolExecutor, ToolAnswer, ToolArtifact, ToolContext } from "../../kind.js";
import { stringMember, type SlackAnswer, type SlackWebApi } from "./web-api.js";

/**
 * The `slack_thread` tools (reference docs: integrations/slack, "Thread tools and subscriptions"): `read`
 * pages through the assigned thread with conversations.replies; `post_message` posts in it with
 * chat.postMessage, then uploads artifacts with Slack's external upload flow (files.getUploadURLExternal,
 * the upload, files.completeUploadExternal into the thread). The thread is always the assigned one: the
 * arguments name no channel.
 */

const DEFAULT_READ_LIMIT = 20;

export function createSlackTools(api: SlackWebApi): IntegrationToolExecutor {
  return {
    async execute(operation, args, context) {
      const thread = threadOf(context.conversation);
      if (!thread) return { ok: false, message: "the assigned conversation is not a Slack thread" };
      if (context.credential.kind !== "slack_app_credentials") return { ok: false, message: "the integration's credential is not a slack_app_credentials secret" };
      const token = context.credential.access_token;
      if (operation === "read") return read(api, token, thread, args as { cursor?: string; limit?: number });
      if (operation === "post_message") return postMessage(api, token, thread, args as { text: string; artifact_ids?: string[] }, context);
      return { ok: false, message: `slack_thread has no operation ${operation}` };
    },
  };
}

interface Thread {
  channel: string;
  ts: string;
}

function threadOf(conversation: Record<string, unknown>): Thread | undefined {
  const channel = conversation["channel_id"];
  const ts = conversation["thread_ts"];
  return typeof channel === "string" && typeof ts === "string" ? { channel, ts } : undefined;
}

const refused = (method: string, answer: Extract<SlackAnswer, { ok: false }>): ToolAnswer => ({ ok: false, message: `Slack refused ${method}: ${answer.error}` });

async function read(api: SlackWebApi, token: string, thread: Thread, args: { cursor?: string; limit?: number }): Promise<ToolAnswer> {
  const request: Record<string, string> = { channel: thread.channel, ts: thread.ts, limit: String(args.limit ?? DEFAULT_READ_LIMIT) };
  if (args.cursor !== undefined) request["cursor"] = args.cursor;
  const answer = await api.call("conversations.replies", request, token);
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

async function postMessage(api: SlackWebApi, token: string, thread: Thread, args: { text: string; artifact_ids?: string[] }, context: ToolContext): Promise<ToolAnswer> {
  // Every artifact is checked before anything is posted: a bad id posts nothing.
  const files: ToolArtifact[] = [];
  for (const id of args.artifact_ids ?? []) {
    const artifact = await context.artifact(id);
    if ("missing" in artifact) return { ok: false, message: `${artifact.missing}; nothing was posted` };
    files.push(artifact);
  }
  const posted = await api.call("chat.postMessage", { channel: thread.channel, thread_ts: thread.ts, text: args.text }, token);
  if (!posted.ok) return refused("chat.postMessage", posted);
  const fileIds: string[] = [];
  for (const file of files) {
    const slot = await api.call("files.getUploadURLExternal", { filename: file.filename, length: String(file.bytes.length) }, token);
    if (!slot.ok) return refused("files.getUploadURLExternal", slot);
    const uploadUrl = stringMember(slot, "upload_url");
    const fileId = stringMember(slot, "file_id");
    if (!uploadUrl || !fileId) return { ok: false, message: "Slack's files.getUploadURLExternal answer has no upload_url or file_id" };
    await api.upload(uploadUrl, file);
    fileIds.push(fileId);
  }
  if (fileIds.length > 0) {
    const files = JSON.stringify(fileIds.map((id) => ({ id })));
    const completed = await api.call("files.completeUploadExternal", { files, channel_id: thread.channel, thread_ts: thread.ts }, token);
    if (!completed.ok) return refused("files.completeUploadExternal", completed);
  }
  return { ok: true, value: { ts: stringMember(posted, "ts") ?? "", channel_id: thread.channel, thread_ts: thread.ts, file_ids: fileIds } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
