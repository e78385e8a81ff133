import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";
import type { S3BlobConfig } from "../../config.js";
import { AppError } from "../errors.js";
import type { BlobStore } from "./index.js";
import { assertBlobKey } from "./keys.js";

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
  // Keys hold only URL-safe characters (keys.ts), so they go into the path as they are.
  const urlOf = (key: string) =>
    config.forcePathStyle
      ? `${endpoint.origin}/${config.bucket}/${assertBlobKey(key)}`
      : `${endpoint.protocol}//${config.bucket}.${endpoint.host}/${assertBlobKey(key)}`;

  async function send(method: "PUT" | "GET" | "DELETE", key: string, body?: { bytes: Buffer; contentType: string }): Promise<Response> {
    const headers: Record<string, string> = { "x-amz-content-sha256": body ? sha256Hex(body.bytes) : EMPTY_SHA256 };
    if (body) headers["content-type"] = body.contentType;
    const url = urlOf(key);
    try {
      return await client.fetch(url, { method, headers, body: body?.bytes, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw unavailable(`S3 ${method} ${key} failed: ${String(err)}`, err);
    }
  }

  return {
    async put(key, bytes, contentType) {
      const response = await send("PUT", key, { bytes, contentType });
      if (!response.ok) throw await failure("PUT", key, response);
      await response.body?.cancel();
    },

    async get(key) {
      const response = await send("GET", key);
      if (response.ok) return Buffer.from(await response.arrayBuffer());
      if (response.status === 404) {
        const code = errorCode(await response.text());
        if (code === "NoSuchKey") return null;
        throw unavailable(`S3 GET ${key}: 404 ${code ?? "without an error code"}`);
      }
      throw await failure("GET", key, response);
    },

    async delete(key) {
      const response = await send("DELETE", key);
      // S3 answers 204 whether or not the object existed; some compatible stores answer 404 for a missing one.
      if (!response.ok && response.status !== 404) throw await failure("DELETE", key, response);
      await response.body?.cancel();
    },
  };
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
