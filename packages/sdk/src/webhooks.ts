/*
 * Verifying svc's webhooks (Standard Webhooks; docs/webhooks.md). svc signs `<webhook-id>.<webhook-timestamp>.<body>`
 * with HMAC-SHA256 keyed by the base64-decoded part of the endpoint's `whsec_…` secret, and sends
 * `webhook-signature: v1,<base64>` (several, space-separated, while a rotated secret still signs). Web Crypto
 * only, so this runs in Node 20, Deno, Bun, workers and browsers alike.
 */

/** A verified delivery's body. */
export interface WebhookEvent<T = Record<string, unknown>> {
  type: string;
  /** When the event happened (RFC 3339). */
  timestamp: string;
  data: T;
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300), against replays. */
  toleranceSeconds?: number;
  /** The clock, for tests (Unix seconds). */
  nowSeconds?: number;
}

/** A delivery that is not svc's, or not as sent: answer it with a 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Equal strings, compared without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a delivery and answers its parsed body, or throws `WebhookVerificationError`. Pass the body exactly
 * as received (the raw text or bytes, before any JSON parsing) and the request's headers.
 *
 * ```ts
 * const event = await verifyWebhook(process.env.SVC_WEBHOOK_SECRET!, request.headers, rawBody);
 * ```
 */
export async function verifyWebhook<T = Record<string, unknown>>(
  secret: string,
  headers: HeaderSource,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent<T>> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError("webhook-timestamp is too far from now");

  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64ToBytes(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  } catch {
    throw new WebhookVerificationError("the secret is not a whsec_ secret");
  }
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(`${id}.${timestamp}.${text}`)));
  const expected = bytesToBase64(mac);
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    return version === "v1" && signature !== undefined && sameText(signature, expected);
  });
  if (!matches) throw new WebhookVerificationError("no signature matches the secret");
  try {
    return JSON.parse(text) as WebhookEvent<T>;
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
}
