import type { RestAnswer } from "../rest.js";

/** GitHub's REST headers (GitHub docs: "Getting started with the REST API"); a request without a User-Agent is refused. */
export const GITHUB_HEADERS = { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "svc" };

/**
 * GitHub's reason for refusing a request, for the model to read: its `message` and each of its
 * validation `errors` (strings, or objects with a `message` or `field` and `code`), checked member by member.
 */
export function refusalReason(answer: RestAnswer): string {
  const body = typeof answer.body === "object" && answer.body !== null ? (answer.body as Record<string, unknown>) : {};
  const parts: string[] = [];
  if (typeof body["message"] === "string") parts.push(body["message"]);
  for (const error of Array.isArray(body["errors"]) ? body["errors"].slice(0, 5) : []) {
    if (typeof error === "string") parts.push(error);
    else if (typeof error === "object" && error !== null) {
      const e = error as Record<string, unknown>;
      const text = [e["field"], typeof e["message"] === "string" ? e["message"] : e["code"]].filter((v) => typeof v === "string").join(" ");
      if (text) parts.push(text);
    }
  }
  return parts.length > 0 ? parts.join(": ").slice(0, 1000) : `HTTP ${answer.status}`;
}
