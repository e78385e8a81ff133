import { createClient, type components } from "@svc/sdk";
import type { Middleware } from "openapi-fetch";

/*
 * All of the console's API access: the @svc/sdk client (openapi-fetch over the types generated from
 * api/openapi.json). Same origin, cookie session; every unsafe method carries the CSRF cookie's value in
 * X-Svc-Csrf, as the spec's Authentication section asks of browsers.
 */

export type Schemas = components["schemas"];

/** The CSRF cookie is `__Host-svc_csrf` behind HTTPS and `svc_csrf` on plain HTTP. */
const CSRF_COOKIES = ["__Host-svc_csrf", "svc_csrf"];

export function csrfToken(): string {
  const cookies = new Map(
    document.cookie
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part.includes("="))
      .map((part) => [part.slice(0, part.indexOf("=")), decodeURIComponent(part.slice(part.indexOf("=") + 1))] as const),
  );
  for (const name of CSRF_COOKIES) {
    const value = cookies.get(name);
    if (value) return value;
  }
  return "";
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== "GET" && request.method !== "HEAD") request.headers.set("x-svc-csrf", csrfToken());
    return request;
  },
};

export const api = createClient({
  baseUrl: location.origin,
  fetch: (input, init) => globalThis.fetch(input, { ...init, credentials: "same-origin", cache: "no-store" }),
});
api.use(csrf);

/** A refused request, with the error envelope's code and issues when the server sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Schemas["ErrorIssue"][] = [],
  ) {
    super(message);
  }
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The response's data, or an ApiError carrying what the server said. */
export async function call<T>(request: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await request;
  } catch {
    throw new ApiError(0, "offline", "The server could not be reached. Check your connection and try again.");
  }
  if (outcome.response.ok) return outcome.data as T;
  throw toApiError(outcome.response.status, outcome.error);
}

function toApiError(status: number, body: unknown): ApiError {
  const envelope = (typeof body === "object" && body !== null ? body : {}) as { error?: unknown; code?: unknown; issues?: unknown };
  const code = typeof envelope.code === "string" ? envelope.code : "http_" + status;
  const issues = Array.isArray(envelope.issues) ? (envelope.issues as Schemas["ErrorIssue"][]) : [];
  if (code === "csrf_check_failed") return new ApiError(status, code, explainOrigin(String(envelope.error ?? "")), issues);
  const message = typeof envelope.error === "string" ? envelope.error : `The request failed (HTTP ${status}).`;
  return new ApiError(status, code, message, issues);
}

/**
 * The usual cause of a CSRF refusal is an address mismatch: svc only accepts changes from the origin set as
 * SVC_PUBLIC_URL. Saying which address to use helps; "reload" would not.
 */
function explainOrigin(detail: string): string {
  const publicUrl = /open svc at (https?:\/\/[^\s]+)/.exec(detail)?.[1];
  if (publicUrl) {
    return `This page was opened at ${location.origin}, but svc accepts changes only from its public address: open ${publicUrl}${location.pathname}${location.search} instead.`;
  }
  if (detail.includes("does not match")) return `This page was opened at ${location.origin}, but svc accepts changes only from its public address. ${detail}`;
  return "Your session could not be verified. Sign out and sign in again.";
}

/** The address of an agent's live event stream (EventSource cannot go through openapi-fetch). */
export function eventStreamUrl(orgID: string, projectID: string, agentID: string, afterSequence: number): string {
  const path = `/api/v1/orgs/${encodeURIComponent(orgID)}/projects/${encodeURIComponent(projectID)}/agents/${encodeURIComponent(agentID)}/events/stream`;
  return `${path}?stream_deltas=true&after_sequence=${afterSequence}`;
}

/** The address of a project's activity stream: its agents as they change (EventSource, as above). */
export function activityStreamUrl(orgID: string, projectID: string): string {
  return `/api/v1/orgs/${encodeURIComponent(orgID)}/projects/${encodeURIComponent(projectID)}/activity/stream`;
}

/** The caller has no (valid) session: the console shows the sign-in form. */
export function isSignedOut(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

/**
 * The `name` filter of a list for names that contain `text` (the API's case-insensitive glob): its own wildcard
 * characters are dropped rather than read as patterns. Undefined when there is nothing to look for.
 */
export function nameContains(text: string): string | undefined {
  const plain = text.trim().replace(/[*?[\]\\]/g, "");
  return plain ? `*${plain}*` : undefined;
}
