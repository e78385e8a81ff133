import { randomBytes } from "node:crypto";
import { AppError } from "../../../platform/errors.js";
import { capResponseBytes } from "../../../platform/net/capped-fetch.js";
import { createGuardedFetch } from "../../../platform/net/guarded-fetch.js";
import type { OutboundPolicy } from "../../../platform/net/outbound.js";
import { createRateGate } from "./rate-gate.js";

/** Provider answers svc reads are small; a bigger one is not the provider. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
const CALL_TIMEOUT_MS = 15_000;
/** An upload carries artifacts up to svc's artifact size limit: give it longer than a call. */
const UPLOAD_TIMEOUT_MS = 120_000;

/** A provider's HTTP answer: its status and its JSON body (undefined when the body is not JSON). */
export interface RestAnswer {
  status: number;
  body: unknown;
  /** The body as text, for an answer that is not JSON (GitHub's diff media type). */
  text?: string;
}

export interface RestClient {
  /** `method` `<base><path>` with these headers and an optional JSON body. */
  call(method: "GET" | "POST" | "PUT", path: string, headers: Record<string, string>, json?: unknown): Promise<RestAnswer>;
  /** `POST <base><path>` with a multipart/form-data body (Discord docs: "Uploading Files"); answered as `call` answers. */
  upload(path: string, headers: Record<string, string>, parts: MultipartPart[]): Promise<RestAnswer>;
}

/** One part of a multipart/form-data body: a field, or a file when it has a filename. */
export interface MultipartPart {
  name: string;
  contentType: string;
  data: Buffer;
  filename?: string;
}

/** A request body as sent: its bytes and their content type. */
interface EncodedBody {
  contentType: string;
  bytes: Buffer;
}

/**
 * A JSON REST API of a provider (Discord's, GitHub's), through the SSRF guard. No answer or a 5xx is
 * `upstream_unavailable`, a 429 (or GitHub's rate-limit 403) is `rate_limited` with the provider's delay,
 * and so is a call on a route the provider said is spent until its reset (rate-gate.ts); other statuses
 * are returned for the kind to judge. Never retries: a caller that wants another try makes it durable.
 */
export function createRestClient(deps: { provider: string; baseUrl: string; policy: OutboundPolicy }): RestClient {
  const fetchCapped = capResponseBytes(createGuardedFetch(deps.policy), MAX_RESPONSE_BYTES);
  const gate = createRateGate();
  const rateLimited = (path: string, retryAfterSeconds: number) =>
    new AppError("rate_limited", `${deps.provider} is rate limiting ${path}; retry after ${retryAfterSeconds} seconds`, { retryAfterSeconds });

  async function send(method: string, path: string, headers: Record<string, string>, body: EncodedBody | undefined, timeoutMs: number): Promise<RestAnswer> {
    const closedFor = gate.closedFor(method, path, headers);
    if (closedFor !== undefined) throw rateLimited(path, closedFor);
    let response: Response;
    let text: string;
    try {
      response = await fetchCapped(`${deps.baseUrl}${path}`, {
        method,
        headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": body.contentType }), ...headers },
        ...(body === undefined ? {} : { body: new Uint8Array(body.bytes) }),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      throw new AppError("upstream_unavailable", `${deps.provider} could not be reached (${method} ${path}): ${(err as Error).message}`, {}, err);
    }
    if (response.status === 429 || isGithubRateLimit(response)) throw rateLimited(path, retryAfterOf(response.headers, parseJson(text)));
    gate.note(method, path, headers, response.headers);
    if (response.status >= 500) throw new AppError("upstream_unavailable", `${deps.provider} answered ${method} ${path} with HTTP ${response.status}`);
    return { status: response.status, body: parseJson(text), text };
  }

  return {
    call(method, path, headers, json) {
      const body = json === undefined ? undefined : { contentType: "application/json", bytes: Buffer.from(JSON.stringify(json), "utf8") };
      return send(method, path, headers, body, CALL_TIMEOUT_MS);
    },
    upload(path, headers, parts) {
      return send("POST", path, headers, multipartBody(parts), UPLOAD_TIMEOUT_MS);
    },
  };
}

/** RFC 7578 multipart/form-data, with a random boundary; a quote or line break in a name is percent-encoded, as browsers do. */
function multipartBody(parts: MultipartPart[]): EncodedBody {
  const boundary = `svc-${randomBytes(16).toString("hex")}`;
  const quoted = (value: string) => `"${value.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}"`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name=${quoted(part.name)}${part.filename === undefined ? "" : `; filename=${quoted(part.filename)}`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${part.contentType}\r\n\r\n`, "utf8"), part.data, Buffer.from("\r\n", "utf8"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, "utf8"));
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.concat(chunks) };
}

/**
 * GitHub also refuses a rate-limited request with 403: its primary limit says `x-ratelimit-remaining: 0`,
 * a secondary limit sends `retry-after` (GitHub docs: "Rate limits for the REST API"). Any other 403 is a
 * permission answer for the caller to judge.
 */
function isGithubRateLimit(response: Response): boolean {
  return response.status === 403 && (response.headers.get("x-ratelimit-remaining") === "0" || response.headers.get("retry-after") !== null);
}

/**
 * Seconds until a 429's limit lifts: Retry-After, else Discord's X-RateLimit-Reset-After or the body's
 * `retry_after` (Discord docs: "Rate Limits"; both are fractional seconds), else the time left until
 * GitHub's X-RateLimit-Reset (Unix seconds, GitHub's clock: "Rate limits for the REST API"), else 30.
 */
function retryAfterOf(headers: Headers, body: unknown): number {
  const resetAt = Number.parseInt(headers.get("x-ratelimit-reset") ?? "", 10);
  const untilReset = Number.isFinite(resetAt) ? Math.max(resetAt - Math.floor(Date.now() / 1000), 1) : undefined;
  const candidates = [headers.get("retry-after"), headers.get("x-ratelimit-reset-after"), scalarNumber(body, "retry_after"), untilReset];
  for (const candidate of candidates) {
    const seconds = typeof candidate === "number" ? candidate : Number.parseFloat(candidate ?? "");
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(Math.ceil(seconds), 3600);
  }
  return 30;
}

function scalarNumber(body: unknown, member: string): number | undefined {
  const value = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[member] : undefined;
  return typeof value === "number" ? value : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-empty string member of a JSON object, or a safe integer one (GitHub's numeric ids) written as a string; else undefined. */
export function scalarMember(body: unknown, member: string): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>)[member];
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** A nested object member, or undefined. */
export function objectMember(body: unknown, member: string): Record<string, unknown> | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>)[member];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
