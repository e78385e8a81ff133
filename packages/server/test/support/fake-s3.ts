import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small S3 server speaking the real wire protocol for one bucket, path-style: PUT, GET and DELETE of
 * objects, ListObjectsV2, S3's XML error documents, and full verification of AWS Signature Version 4 on
 * every request (the signature is recomputed here from the canonical request, query string included,
 * independently of the client's signer).
 */
export interface FakeS3 {
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Set `modifiedAt` to back-date an object, as the orphan sweep only takes old ones. */
  objects: Map<string, StoredObject>;
  requests: RecordedRequest[];
  /** Answers the next request with 500 InternalError, as an overloaded store does. */
  failNext(): void;
  close(): Promise<void>;
}

export interface StoredObject {
  bytes: Buffer;
  contentType: string;
  modifiedAt: Date;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  /** Why the signature was refused, or null when it verified. */
  signatureError: string | null;
}

export async function startFakeS3(options: { bucket?: string; accessKeyId?: string; secretAccessKey?: string; region?: string } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? "svc-test";
  const accessKeyId = options.accessKeyId ?? "AKIDTEST";
  const secretAccessKey = options.secretAccessKey ?? "test-secret-key";
  const region = options.region ?? "us-east-1";
  const objects = new Map<string, StoredObject>();
  const requests: RecordedRequest[] = [];
  let failNext = false;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const target = req.url ?? "/";
      const mark = target.indexOf("?");
      const path = mark < 0 ? target : target.slice(0, mark);
      const query = new URLSearchParams(mark < 0 ? "" : target.slice(mark + 1));
      const signatureError = verifySignature(req, path, query, body, { accessKeyId, secretAccessKey, region });
      requests.push({ method: req.method ?? "", path, query, headers: req.headers, signatureError });
      const error = (status: number, code: string) => {
        res.writeHead(status, { "content-type": "application/xml" });
        res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message><RequestId>fake</RequestId></Error>`);
      };
      if (failNext) {
        failNext = false;
        return error(500, "InternalError");
      }
      if (signatureError) return error(403, signatureError.startsWith("access key") ? "InvalidAccessKeyId" : "SignatureDoesNotMatch");
      if (path === `/${bucket}` || path === `/${bucket}/`) {
        if (req.method !== "GET") return error(405, "MethodNotAllowed");
        if (query.get("list-type") !== "2") return error(501, "NotImplemented");
        const listing = listObjectsV2(bucket, objects, query);
        if (listing === null) return error(400, "InvalidArgument");
        res.writeHead(200, { "content-type": "application/xml" });
        return res.end(listing);
      }
      const prefix = `/${bucket}/`;
      if (!path.startsWith(prefix)) return error(404, "NoSuchBucket");
      const key = decodeURIComponent(path.slice(prefix.length));
      if (req.method === "PUT") {
        objects.set(key, { bytes: body, contentType: req.headers["content-type"] ?? "binary/octet-stream", modifiedAt: new Date() });
        res.writeHead(200, { etag: `"${createHash("md5").update(body).digest("hex")}"` });
        return res.end();
      }
      if (req.method === "GET") {
        const object = objects.get(key);
        if (!object) return error(404, "NoSuchKey");
        res.writeHead(200, { "content-type": object.contentType, "content-length": object.bytes.length });
        return res.end(object.bytes);
      }
      if (req.method === "DELETE") {
        objects.delete(key);
        res.writeHead(204);
        return res.end();
      }
      return error(405, "MethodNotAllowed");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId,
    secretAccessKey,
    region,
    objects,
    requests,
    failNext: () => void (failNext = true),
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** ListObjectsV2 over `objects`; null when `max-keys` is not a count. */
function listObjectsV2(bucket: string, objects: ReadonlyMap<string, StoredObject>, query: URLSearchParams): string | null {
  const prefix = query.get("prefix") ?? "";
  const startAfter = query.get("start-after");
  const maxKeysParam = query.get("max-keys") ?? "1000";
  if (!/^\d{1,9}$/.test(maxKeysParam)) return null;
  // S3 never returns more than 1000 keys a page, whatever is asked.
  const maxKeys = Math.min(Number(maxKeysParam), 1000);
  const matching = [...objects.keys()]
    .filter((key) => key.startsWith(prefix) && (startAfter === null || byteOrder(key, startAfter) > 0))
    .sort(byteOrder);
  const page = matching.slice(0, maxKeys);
  const contents = page.map((key) => {
    const object = objects.get(key)!;
    const etag = `"${createHash("md5").update(object.bytes).digest("hex")}"`;
    return (
      `<Contents><Key>${xmlEscape(key)}</Key><LastModified>${object.modifiedAt.toISOString()}</LastModified>` +
      `<ETag>${xmlEscape(etag)}</ETag><Size>${object.bytes.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`
    );
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
    `<Name>${xmlEscape(bucket)}</Name><Prefix>${xmlEscape(prefix)}</Prefix>`,
    startAfter === null ? "" : `<StartAfter>${xmlEscape(startAfter)}</StartAfter>`,
    `<KeyCount>${page.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${matching.length > page.length}</IsTruncated>`,
    ...contents,
    "</ListBucketResult>",
  ].join("");
}

/** S3 orders keys by their UTF-8 bytes, which differs from JavaScript's UTF-16 order above U+FFFF. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** As S3 writes text: the five markup characters by name, control characters by number. */
function xmlEscape(text: string): string {
  const named: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
  return text.replace(/[&<>"'\u0000-\u001f]/g, (c) => named[c] ?? `&#${c.charCodeAt(0)};`);
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** Recomputes the SigV4 signature of a header-signed request; returns what is wrong, or null. */
function verifySignature(
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
  body: Buffer,
  credentials: { accessKeyId: string; secretAccessKey: string; region: string },
): string | null {
  const match = AUTHORIZATION.exec(req.headers.authorization ?? "");
  if (!match) return "Authorization header is not AWS4-HMAC-SHA256 with Credential, SignedHeaders and Signature";
  const [, keyId, date, region, signedHeaders, signature] = match as unknown as [string, string, string, string, string, string];
  if (keyId !== credentials.accessKeyId) return "access key is unknown";
  if (region !== credentials.region) return `credential scope names region ${region}`;
  const amzDate = req.headers["x-amz-date"];
  if (typeof amzDate !== "string" || !/^\d{8}T\d{6}Z$/.test(amzDate) || !amzDate.startsWith(date)) return "x-amz-date is missing or does not match";
  const payloadHash = req.headers["x-amz-content-sha256"];
  if (payloadHash !== sha256(body)) return "x-amz-content-sha256 is not the SHA-256 of the body";
  const names = signedHeaders.split(";");
  for (const required of ["host", "x-amz-content-sha256", "x-amz-date"]) {
    if (!names.includes(required)) return `${required} is not signed`;
  }
  const canonicalHeaders = names.map((name) => `${name}:${String(req.headers[name] ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  const canonicalRequest = [req.method, path, canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(Buffer.from(canonicalRequest))].join("\n");
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [region, "s3", "aws4_request"]) key = hmac(key, part);
  return hmac(key, stringToSign).toString("hex") === signature ? null : "signature does not match";
}

/** SigV4's canonical query string: names and values URI-encoded, sorted by name, then by value. */
function canonicalQuery(query: URLSearchParams): string {
  return [...query]
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

/** AWS's URI encoding: everything but `A-Z a-z 0-9 - _ . ~` as %XX of its UTF-8 bytes. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}
