import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values always serialize to equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** `sha256:` and the hex digest of `text`, the form of every hash svc stores. */
export function sha256Tagged(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/** The tagged digest of the canonical JSON of `value`: a digest that ignores key order. */
export function jsonDigest(value: unknown): string {
  return sha256Tagged(canonicalJson(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = sortKeys(item);
  }
  return out;
}
