import { createHmac, randomBytes } from "node:crypto";

/*
 * Standard Webhooks signing (docs/webhooks.md): a secret is `whsec_` and the base64 of random bytes; the
 * key is those bytes (the base64 decoded), and a signature is `v1,` and the base64 of the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`. Several signatures are sent space-separated.
 */

const PREFIX = "whsec_";
/** The spec asks for 24 to 64 bytes. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
}

export function signatureOf(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The `webhook-signature` header: one signature per secret still signing, the newest first. */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signatureOf(secret, messageId, timestampSeconds, body)).join(" ");
}
