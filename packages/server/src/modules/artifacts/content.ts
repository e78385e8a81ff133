import { AppError, type Issue } from "../../platform/errors.js";
import type { InlineMediaBlock, StructuredDataBlock, TextBlock } from "./schemas.js";

/*
 * The spec's limits on submitted content blocks (inputs and tool results), checked before anything is
 * stored. Every breach is a 400 `validation_failed` whose issues point at the offending block: the
 * reference lists 400, not 413, among these operations' responses, and an issue says which block to
 * fix. Only a body above CONTENT_BODY_LIMIT is a 413, refused by the HTTP layer before it is parsed.
 */

const MiB = 1024 * 1024;
export const MAX_MEDIA_BLOCKS = 20;
export const MAX_MEDIA_BYTES = 10 * MiB;
export const MAX_TOTAL_MEDIA_BYTES = 24 * MiB;
/** Text and structured_data blocks together, measured as the UTF-8 length of each block's JSON. */
export const MAX_NON_MEDIA_BYTES = MiB;
/**
 * Nesting depth of a structured_data value (svc's own limit): PostgreSQL's jsonb parser recurses per
 * level, and a value a few hundred thousand levels deep stalls or crashes it.
 */
export const MAX_STRUCTURED_DEPTH = 128;
/** A response names at most this many issues; the first ones are enough to fix a request. */
const MAX_ISSUES = 50;
const ROOT = "/content_blocks";
const NUL_MESSAGE = "must not contain U+0000 (NUL)";

export type BlockType = "text" | "media" | "structured_data";
export type SubmittedBlock = TextBlock | InlineMediaBlock | StructuredDataBlock;

export interface DecodedMedia {
  index: number;
  block: InlineMediaBlock;
  bytes: Buffer;
}

/**
 * Checks blocks that already passed their route's schema against what a schema cannot say: the size
 * limits, strict base64, and U+0000, which PostgreSQL text and jsonb cannot store. Returns the decoded
 * media, in order. Sizes are checked from the base64 length first, so an oversized request is refused
 * before anything is decoded.
 */
export function checkContentBlocks(blocks: readonly SubmittedBlock[], allowed: ReadonlySet<BlockType>): DecodedMedia[] {
  const issues = new Issues();
  let mediaCount = 0;
  let mediaBytes = 0;
  let otherBytes = 0;
  blocks.forEach((block, index) => {
    const at = `${ROOT}/${index}`;
    if (!allowed.has(block.type)) {
      issues.add(`${at}/type`, `${block.type} blocks are not accepted here; use ${[...allowed].join(", ")}`);
      return;
    }
    checkMetadata(block.metadata, `${at}/metadata`, issues);
    if (block.type === "media") {
      mediaCount += 1;
      if (block.filename?.includes("\u0000")) issues.add(`${at}/filename`, NUL_MESSAGE);
      const size = decodedSize(block.data);
      if (size > MAX_MEDIA_BYTES) issues.add(`${at}/data`, `decodes to ${size} bytes; a media block holds at most 10 MiB (${MAX_MEDIA_BYTES} bytes)`);
      mediaBytes += size;
    } else if (block.type === "text") {
      if (block.text.includes("\u0000")) issues.add(`${at}/text`, NUL_MESSAGE);
      otherBytes += jsonSize(block);
    } else if (checkStructured(block.value, `${at}/value`, issues)) {
      otherBytes += jsonSize(block);
    }
  });
  if (mediaCount > MAX_MEDIA_BLOCKS) issues.add(ROOT, `has ${mediaCount} media blocks; at most ${MAX_MEDIA_BLOCKS} are allowed`);
  if (mediaBytes > MAX_TOTAL_MEDIA_BYTES) {
    issues.add(ROOT, `media decode to ${mediaBytes} bytes together; at most 24 MiB (${MAX_TOTAL_MEDIA_BYTES} bytes) are allowed`);
  }
  if (otherBytes > MAX_NON_MEDIA_BYTES) {
    issues.add(ROOT, `text and structured_data blocks take ${otherBytes} bytes of JSON together; at most 1 MiB (${MAX_NON_MEDIA_BYTES} bytes) are allowed`);
  }
  issues.throwIfAny();

  const media: DecodedMedia[] = [];
  blocks.forEach((block, index) => {
    if (block.type !== "media") return;
    const bytes = decodeBase64(block.data);
    if (bytes) media.push({ index, block, bytes });
    else issues.add(`${ROOT}/${index}/data`, "is not valid base64 (RFC 4648 standard alphabet with padding, no whitespace)");
  });
  issues.throwIfAny();
  return media;
}

/** Exact for valid padded base64; for anything else an estimate that is good enough to refuse early. */
function decodedSize(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * Node's decoder skips characters outside the alphabet and accepts missing padding and the URL-safe
 * alphabet; decoding and encoding back must give the input again, which admits only canonical base64.
 */
function decodeBase64(data: string): Buffer | null {
  const bytes = Buffer.from(data, "base64");
  return bytes.length > 0 && bytes.toString("base64") === data ? bytes : null;
}

function jsonSize(block: SubmittedBlock): number {
  return Buffer.byteLength(JSON.stringify(block), "utf8");
}

function checkMetadata(metadata: Record<string, string> | undefined, at: string, issues: Issues): void {
  if (!metadata) return;
  for (const [key, value] of Object.entries(metadata)) {
    if (key.includes("\u0000") || value.includes("\u0000")) issues.add(`${at}/${pointerToken(key)}`, NUL_MESSAGE);
  }
}

/**
 * Walks a structured value without recursion (a deep value must not overflow the stack) for U+0000
 * in strings and keys. False when the value nests too deep, so its size is not measured.
 */
function checkStructured(value: unknown, at: string, issues: Issues): boolean {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: at, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value === "string") {
      if (item.value.includes("\u0000")) issues.add(item.path, NUL_MESSAGE);
      continue;
    }
    if (item.value === null || typeof item.value !== "object") continue;
    if (item.depth >= MAX_STRUCTURED_DEPTH) {
      issues.add(item.path, `nests deeper than ${MAX_STRUCTURED_DEPTH} levels`);
      return false;
    }
    const entries = Array.isArray(item.value) ? item.value.map((v, i) => [String(i), v] as const) : Object.entries(item.value);
    // Pushed in reverse so that children are visited in document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const path = `${item.path}/${pointerToken(key)}`;
      if (key.includes("\u0000")) issues.add(path, `key ${NUL_MESSAGE}`);
      stack.push({ value: child, path, depth: item.depth + 1 });
    }
  }
  return true;
}

/** RFC 6901 escaping of one reference token. */
function pointerToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

class Issues {
  private readonly list: Issue[] = [];

  add(path: string, message: string): void {
    if (this.list.length < MAX_ISSUES) this.list.push({ path, message });
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw new AppError("validation_failed", "request body failed validation", { issues: [...this.list] });
  }
}
