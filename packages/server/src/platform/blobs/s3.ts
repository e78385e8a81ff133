import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";
import type { S3BlobConfig } from "../../config.js";
import { AppError } from "../errors.js";
import type { BlobEntry, BlobStore } from "./index.js";
import { assertBlobKey, isBlobKey } from "./keys.js";

const EMPTY_SHA256 = sha256Hex(Buffer.alloc(0));
/** Long enough for a 10 MiB artifact over a slow link; a hung store must not hold a request forever. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * Blobs as objects of an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…), over plain HTTP with AWS
 * Signature Version 4 (aws4fetch signs; Node's fetch sends). Every request signs its payload's SHA-256
 * rather than `UNSIGNED-PAYLOAD`, so a proxy cannot alter the bytes unnoticed.
 */
export function createS3BlobStore(config: S3BlobConfig, options: { timeoutMs?: number } = {}): BlobStore {
  const client = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    service: "s3",
    region: config.region,
    // aws4fetch retries 5xx and 429 ten times by default; svc keeps retries visible, never inside a client.
    retries: 0,
  });
  const endpoint = new URL(config.endpoint);
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const bucketUrl = config.forcePathStyle ? `${endpoint.origin}/${config.bucket}` : `${endpoint.protocol}//${config.bucket}.${endpoint.host}`;
  // Keys hold only URL-safe characters (keys.ts), so they go into the path as they are.
  const objectUrl = (key: string) => `${bucketUrl}/${assertBlobKey(key)}`;
  // ListObjectsV2 addresses the bucket itself: `/<bucket>?…` path-style, `/?…` virtual-hosted.
  const listUrl = (query: string) => `${bucketUrl}${config.forcePathStyle ? "" : "/"}?${query}`;

  /** `what` names the object or listing in error messages. */
  async function send(method: "PUT" | "GET" | "DELETE", url: string, what: string, body?: { bytes: Buffer; contentType: string }): Promise<Response> {
    const headers: Record<string, string> = { "x-amz-content-sha256": body ? sha256Hex(body.bytes) : EMPTY_SHA256 };
    if (body) headers["content-type"] = body.contentType;
    try {
      return await client.fetch(url, { method, headers, body: body?.bytes, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw unavailable(`S3 ${method} ${what} failed: ${String(err)}`, err);
    }
  }

  /** One ListObjectsV2 page of the keys starting with `keyPrefix`, after `startAfter`. */
  async function listPage(keyPrefix: string, startAfter: string | undefined, maxKeys: number): Promise<ListPage> {
    const what = `list ${keyPrefix}`;
    const response = await send("GET", listUrl(listQuery(keyPrefix, startAfter, maxKeys)), what);
    if (!response.ok) throw await failure("GET", what, response);
    return parseListObjectsV2(await response.text());
  }

  return {
    async put(key, bytes, contentType) {
      const response = await send("PUT", objectUrl(key), key, { bytes, contentType });
      if (!response.ok) throw await failure("PUT", key, response);
      await response.body?.cancel();
    },

    async get(key) {
      const response = await send("GET", objectUrl(key), key);
      if (response.ok) return Buffer.from(await response.arrayBuffer());
      if (response.status === 404) {
        const code = errorCode(await response.text());
        if (code === "NoSuchKey") return null;
        throw unavailable(`S3 GET ${key}: 404 ${code ?? "without an error code"}`);
      }
      throw await failure("GET", key, response);
    },

    async delete(key) {
      const response = await send("DELETE", objectUrl(key), key);
      // S3 answers 204 whether or not the object existed; some compatible stores answer 404 for a missing one.
      if (!response.ok && response.status !== 404) throw await failure("DELETE", key, response);
      await response.body?.cancel();
    },

    async list(prefix, after, limit) {
      // As in the file store, `prefix` names a directory: `p` lists `p/…`, never `p-1/…` or `pq`.
      const keyPrefix = `${assertBlobKey(prefix)}/`;
      const out: BlobEntry[] = [];
      let cursor = after;
      while (out.length < limit) {
        const page = await listPage(keyPrefix, cursor, limit - out.length);
        for (const { key, modifiedAt } of page.objects) {
          // Keys svc cannot have written are not its to sweep, and an object without a readable time
          // cannot be judged old. `> cursor` holds against a store that ignores `start-after`.
          if (isBlobKey(key) && !Number.isNaN(modifiedAt.getTime()) && (cursor === undefined || key > cursor)) out.push({ key, modifiedAt });
        }
        // Skipped keys leave the batch short: read on, unless the listing ended or stopped moving forward.
        const last = page.objects.at(-1)?.key;
        if (!page.truncated || last === undefined || (cursor !== undefined && last <= cursor)) break;
        cursor = last;
      }
      return out;
    },
  };
}

/** A ListObjectsV2 page: its objects in the store's order, keys decoded but not checked. */
export interface ListPage {
  objects: BlobEntry[];
  truncated: boolean;
}

function listQuery(keyPrefix: string, startAfter: string | undefined, maxKeys: number): string {
  const params: [string, string][] = [["list-type", "2"], ["prefix", keyPrefix]];
  if (startAfter !== undefined) params.push(["start-after", startAfter]);
  params.push(["max-keys", String(maxKeys)]);
  // Not URLSearchParams: it writes a space (possible in a key svc skips, then pages past) as `+`, while
  // the signature covers `%20`.
  return params.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&");
}

const CONTENTS = /<Contents>([\s\S]*?)<\/Contents>/g;
const KEY = /<Key>([^<]*)<\/Key>/;
const LAST_MODIFIED = /<LastModified>([^<]*)<\/LastModified>/;
const IS_TRUNCATED = /<IsTruncated>\s*true\s*<\/IsTruncated>/;

/**
 * Reads a ListObjectsV2 `<ListBucketResult>`. An object whose `<LastModified>` is missing or unreadable
 * gets an invalid Date rather than being dropped, so that the caller still sees its key to page past it.
 */
export function parseListObjectsV2(xml: string): ListPage {
  const objects: BlobEntry[] = [];
  for (const [, item = ""] of xml.matchAll(CONTENTS)) {
    const key = KEY.exec(item)?.[1];
    if (key === undefined) continue;
    objects.push({ key: decodeXmlText(key), modifiedAt: new Date(LAST_MODIFIED.exec(item)?.[1] ?? Number.NaN) });
  }
  return { objects, truncated: IS_TRUNCATED.test(xml) };
}

const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/g;
const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** One pass, so `&amp;lt;` stays the text `&lt;`. */
function decodeXmlText(text: string): string {
  return text.replace(ENTITY, (entity, name: string | undefined, decimal: string | undefined, hex: string | undefined) => {
    if (name !== undefined) return NAMED_ENTITIES[name] ?? entity;
    const codePoint = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? "", 16);
    // Left as written when it names no character (out of range, or a lone UTF-16 surrogate that could
    // not be sent back as `start-after`); the `&` then fails the key rules and the key is skipped.
    const isCharacter = codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    return isCharacter ? String.fromCodePoint(codePoint) : entity;
  });
}

function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The `<Code>` of an S3 error document. */
function errorCode(xml: string): string | undefined {
  return /<Code>([^<]{1,128})<\/Code>/.exec(xml)?.[1];
}

async function failure(method: string, key: string, response: Response): Promise<AppError> {
  const code = errorCode(await response.text().catch(() => ""));
  return unavailable(`S3 ${method} ${key}: ${response.status} ${code ?? response.statusText}`);
}

/** The store's trouble is the operator's, not the client's: 503, with the detail in the logged cause. */
function unavailable(detail: string, cause?: unknown): AppError {
  return new AppError("service_unavailable", "file storage is unavailable; try again later", {}, new Error(detail, { cause }));
}
