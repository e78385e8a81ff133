/**
 * PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses an unpaired UTF-16 surrogate (text
 * silently gets U+FFFD when encoded). Text from third parties (model providers, MCP servers, tools)
 * passes through here before it is stored, so one odd character never fails a whole record; each one
 * becomes U+FFFD, which the stored event then shows.
 */
const UNPAIRED_SURROGATE = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]";
const UNSTORABLE = new RegExp(`\\u0000|${UNPAIRED_SURROGATE}`, "g");
const SURROGATE = new RegExp(UNPAIRED_SURROGATE);

const REPLACEMENT = "\uFFFD";

/** Where the first unpaired surrogate of `text` is, or -1. */
export function unpairedSurrogateAt(text: string): number {
  return text.search(SURROGATE);
}

export function isStorableText(text: string): boolean {
  UNSTORABLE.lastIndex = 0;
  return !UNSTORABLE.test(text);
}

export function storableText(text: string): string {
  return text.replace(UNSTORABLE, REPLACEMENT);
}

/** The same for every string of a JSON-like value, object keys included; other values are kept as they are. */
export function storable<T>(value: T): T {
  if (typeof value === "string") return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storable(item)) as T;
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[storableText(key)] = storable(item);
    return out as T;
  }
  return value;
}
