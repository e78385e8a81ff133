import { AppError } from "../../../../platform/errors.js";
import type { Paced } from "./pacing.js";
import { isRecord, stringMember, type SlackAnswer, type SlackWebApi } from "./web-api.js";

/**
 * Posting in a thread at most once (docs/integrations.md, "Rate limits and lost answers"). A post whose
 * answer is lost (no answer in time, a 5xx, a body that is not Slack's) may or may not have been stored, so
 * before sending it again the thread is read back for the marker svc put on it: the message metadata for
 * chat.postMessage, the file ids for files.completeUploadExternal (which takes no metadata). Found, the post
 * is done; surely absent, it is sent again; unknown (the read failed, or the thread is longer than the read
 * goes), nothing is sent again and the model is told to read the thread first.
 */

/** Sends of one post when answers are lost; each resend follows a read-back that found nothing. */
const MAX_SENDS = 3;
/** The read-back pages through at most this many messages of the thread, oldest first. */
const READBACK_PAGE = 200;
const READBACK_PAGES = 5;

export interface Thread {
  channel: string;
  ts: string;
}

export interface PostOnce {
  api: SlackWebApi;
  token: string;
  thread: Thread;
  paced: Paced;
  /** Sends the post once; a lost answer throws `upstream_unavailable`. */
  send: () => Promise<SlackAnswer>;
  /** Whether a message the read-back found is this post. */
  isOurs: (message: Record<string, unknown>) => boolean;
}

/** Slack's answer to the post, or `{ok: true, ts}` of the message a read-back found. */
export async function postOnce(post: PostOnce): Promise<SlackAnswer> {
  for (let sends = 1; ; sends++) {
    let lost: AppError;
    try {
      return await post.paced(post.send);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== "upstream_unavailable") throw err;
      lost = err;
    }
    const found = await readBack(post, lost);
    if (found !== undefined) return { ok: true, ts: found };
    if (sends === MAX_SENDS) throw lost;
  }
}

/** The ts of the post in the thread, or undefined when the thread surely lacks it; throws when it cannot tell. */
async function readBack(post: PostOnce, lost: AppError): Promise<string | undefined> {
  // A read-back refused for a rate limit keeps its code and delay: the model learns when to look again.
  const unknown = (why: string, cause?: AppError) =>
    new AppError(cause?.code ?? lost.code, `${lost.message}, and ${why}: Slack may have posted the message, so read the thread before posting again`, cause?.details ?? {});
  let cursor: string | undefined;
  for (let page = 0; page < READBACK_PAGES; page++) {
    const args: Record<string, string> = { channel: post.thread.channel, ts: post.thread.ts, limit: String(READBACK_PAGE), include_all_metadata: "true" };
    if (cursor !== undefined) args["cursor"] = cursor;
    let answer: SlackAnswer;
    try {
      answer = await post.paced(() => post.api.call("conversations.replies", args, post.token));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw unknown(`checking the thread failed (${err.message})`, err);
    }
    if (!answer.ok) throw unknown(`Slack refused to list the thread (${answer.error})`);
    const messages = Array.isArray(answer["messages"]) ? answer["messages"].filter(isRecord) : [];
    const ours = messages.find(post.isOurs);
    if (ours) return stringMember(ours, "ts") ?? "";
    const metadata = isRecord(answer["response_metadata"]) ? answer["response_metadata"] : {};
    cursor = answer["has_more"] === true ? stringMember(metadata, "next_cursor") : undefined;
    if (cursor === undefined) return undefined;
  }
  throw unknown(`the thread is longer than ${READBACK_PAGE * READBACK_PAGES} messages`);
}
