import { AppError } from "../../../../platform/errors.js";
import { capResponseBytes } from "../../../../platform/net/capped-fetch.js";
import { createGuardedFetch } from "../../../../platform/net/guarded-fetch.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";

/** Slack's answers are small; a bigger one is not Slack. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
const CALL_TIMEOUT_MS = 15_000;
/** Artifacts go up to svc's artifact size limit; give a large one longer than a method call. */
const UPLOAD_TIMEOUT_MS = 120_000;

/** A Web API answer: `ok` and the method's own members, or `ok: false` with Slack's `error` code. */
export type SlackAnswer = { ok: true; [member: string]: unknown } | { ok: false; error: string; [member: string]: unknown };

export interface SlackWebApi {
  /** Calls `method` with form-encoded arguments, as the bot `token` when given (Slack's Authorization header). */
  call(method: string, args: Record<string, string>, token?: string): Promise<SlackAnswer>;
  /** Sends a file's bytes to an upload_url files.getUploadURLExternal answered (Slack: "Uploading files"). */
  upload(uploadUrl: string, file: { filename: string; contentType: string; bytes: Buffer }): Promise<void>;
}

/**
 * Slack's Web API (`<SVC_SLACK_API_URL>/<method>`), through the SSRF guard. A rate limit (HTTP 429) is
 * `rate_limited` with Slack's Retry-After; no answer, a 5xx or a body that is not Slack's JSON is
 * `upstream_unavailable`. `ok: false` answers are returned for the caller to judge. Never retries by
 * itself: the thread tools wait out a short Retry-After (pacing.ts), other callers make retries durable.
 */
export function createSlackWebApi(deps: { apiUrl: string; policy: OutboundPolicy }): SlackWebApi {
  const fetchCapped = capResponseBytes(createGuardedFetch(deps.policy), MAX_RESPONSE_BYTES);
  return {
    async call(method, args, token) {
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
      if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
      let response: Response;
      let text: string;
      try {
        response = await fetchCapped(`${deps.apiUrl}/${method}`, {
          method: "POST",
          headers,
          body: new URLSearchParams(args).toString(),
          redirect: "manual",
          signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        });
        text = await response.text();
      } catch (err) {
        throw new AppError("upstream_unavailable", `Slack could not be reached (${method}): ${(err as Error).message}`, {}, err);
      }
      if (response.status === 429) {
        const seconds = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
        const retryAfterSeconds = Number.isFinite(seconds) && seconds >= 0 ? seconds : 30;
        throw new AppError("rate_limited", `Slack is rate limiting ${method}; retry after ${retryAfterSeconds} seconds`, { retryAfterSeconds });
      }
      if (response.status < 200 || response.status >= 300) {
        throw new AppError("upstream_unavailable", `Slack answered ${method} with HTTP ${response.status}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (typeof body !== "object" || body === null || typeof (body as { ok?: unknown }).ok !== "boolean") {
        throw new AppError("upstream_unavailable", `Slack's answer to ${method} is not a Web API answer`);
      }
      const answer = body as SlackAnswer;
      if (!answer.ok && typeof answer.error !== "string") return { ...answer, ok: false, error: "unknown_error" };
      return answer;
    },

    async upload(uploadUrl, file) {
      // The URL comes from Slack's answer: it goes through the same SSRF guard as every call.
      let response: Response;
      try {
        response = await fetchCapped(uploadUrl, {
          method: "POST",
          headers: { "content-type": file.contentType },
          body: new Uint8Array(file.bytes),
          redirect: "manual",
          signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
        });
        await response.arrayBuffer();
      } catch (err) {
        throw new AppError("upstream_unavailable", `Slack's file upload could not be reached: ${(err as Error).message}`, {}, err);
      }
      if (response.status === 429) throw new AppError("rate_limited", "Slack is rate limiting file uploads; retry after 30 seconds", { retryAfterSeconds: 30 });
      if (response.status < 200 || response.status >= 300) throw new AppError("upstream_unavailable", `Slack answered the file upload with HTTP ${response.status}`);
    },
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string member of an answer, or undefined: Slack's answers are checked member by member, never trusted whole. */
export function stringMember(answer: Record<string, unknown>, member: string): string | undefined {
  const value = answer[member];
  return typeof value === "string" && value !== "" ? value : undefined;
}
