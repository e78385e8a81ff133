import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small S3 server speaking the real wire protocol for one bucket, path-style: PUT, GET and DELETE of
 * objects, S3's XML error documents, and full verification of AWS Signature Version 4 on every request
 * (the signature is recomputed here from the canonical request, independently of the client's signer).
 */
export interface FakeS3 {
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  objects: Map<string, { bytes: Buffer; contentType: string }>;
  requests: RecordedRequest[];
  /** Answers the next request with 500 InternalError, as an overloaded store does. */
  failNext(): void;
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** Why the signature was refused, or null when it verified. */
  signatureError: string | null;
}

export async function startFakeS3(options: { bucket?: string; accessKeyId?: string; secretAccessKey?: string; region?: string } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? "svc-test";
  const accessKeyId = options.accessKeyId ?? "AKIDTEST";
  const secretAccessKey = options.secretAccessKey ?? "test-secret-key";
  const region = options.region ?? "us-east-1";
  const objects = new Map<string, { bytes: Buffer; contentType: string }>();
  const requests: RecordedRequest[] = [];
  let failNext = false;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? "/").split("?")[0]!;
      const signatureError = verifySignature(req, path, body, { accessKeyId, secretAccessKey, region });
      requests.push({ method: req.method ?? "", path, headers: req.headers, signatureError });
      const error = (status: number, code: string) => {
        res.writeHead(status, { "content-type": "application/xml" });
        res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message><RequestId>fake</RequestId></Error>`);
      };
      if (failNext) {
        failNext = false;
        return error(500, "InternalError");
      }
      if (signatureError) return error(403, signatureError.startsWith("access key") ? "InvalidAccessKeyId" : "SignatureDoesNotMatch");
      const prefix = `/${bucket}/`;
      if (!path.startsWith(prefix)) return error(404, "NoSuchBucket");
      const key = decodeURIComponent(path.slice(prefix.length));
      if (req.method === "PUT") {
        objects.set(key, { bytes: body, contentType: req.headers["content-type"] ?? "binary/octet-stream" });
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

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** Recomputes the SigV4 signature of a header-signed request; returns what is wrong, or null. */
function verifySignature(
  req: IncomingMessage,
  path: string,
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
  const canonicalRequest = [req.method, path, "", canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(Buffer.from(canonicalRequest))].join("\n");
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [region, "s3", "aws4_request"]) key = hmac(key, part);
  return hmac(key, stringToSign).toString("hex") === signature ? null : "signature does not match";
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}
