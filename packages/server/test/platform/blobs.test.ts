import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type S3BlobConfig } from "../../src/config.js";
import { createFileBlobStore } from "../../src/platform/blobs/file.js";
import { createS3BlobStore, parseListObjectsV2 } from "../../src/platform/blobs/s3.js";
import { createBlobStore, type BlobStore } from "../../src/platform/blobs/index.js";
import { AppError } from "../../src/platform/errors.js";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeS3, type FakeS3 } from "../support/fake-s3.js";
import { startTestServer } from "../support/server.js";
import { getBytes, insertTestAgent } from "../api/artifacts-fixtures.js";

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

/** What every store must do, whatever holds the bytes. */
function storeContract(name: string, open: () => BlobStore) {
  describe(`${name}: the BlobStore contract`, () => {
    it("stores, reads back, replaces and deletes bytes", async () => {
      const store = open();
      await store.put("artifacts/2025-01-01/a", PNG, "image/png");
      expect(await store.get("artifacts/2025-01-01/a")).toEqual(PNG);
      await store.put("artifacts/2025-01-01/a", Buffer.from("second"), "text/plain");
      expect((await store.get("artifacts/2025-01-01/a"))!.toString()).toBe("second");
      await store.delete("artifacts/2025-01-01/a");
      expect(await store.get("artifacts/2025-01-01/a")).toBeNull();
    });

    it("answers null for a missing key and deletes a missing key quietly", async () => {
      const store = open();
      expect(await store.get("artifacts/never/written")).toBeNull();
      await expect(store.delete("artifacts/never/written")).resolves.toBeUndefined();
    });

    it("keeps binary content and empty blobs exact", async () => {
      const store = open();
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await store.put("bin/all-bytes", all, "application/octet-stream");
      expect(await store.get("bin/all-bytes")).toEqual(all);
      await store.put("bin/empty", Buffer.alloc(0), "text/plain");
      expect(await store.get("bin/empty")).toEqual(Buffer.alloc(0));
    });

    it("lists the keys under a prefix in order, strictly after a position, at most `limit` of them", async () => {
      const store = open();
      const before = Date.now();
      for (const key of ["p/b/2", "p/a/1", "p/b/1", "p/b-1", "p/c", "p-1/x", "pq", "q/other"]) await store.put(key, PNG, "image/png");
      const keys = async (after: string | undefined, limit = 100) => (await store.list("p", after, limit)).map((e) => e.key);
      // `p/b-1` sorts before `p/b/…` because '-' precedes '/'; `p-1/x` and `pq` are not under `p`.
      expect(await keys(undefined)).toEqual(["p/a/1", "p/b-1", "p/b/1", "p/b/2", "p/c"]);
      expect(await keys(undefined, 2)).toEqual(["p/a/1", "p/b-1"]);
      expect(await keys("p/b-1", 2)).toEqual(["p/b/1", "p/b/2"]);
      expect(await keys("p/b/2")).toEqual(["p/c"]);
      expect(await keys("p/c")).toEqual([]);
      expect(await keys("p/b", 1)).toEqual(["p/b-1"]);
      expect(await keys(undefined, 0)).toEqual([]);
      expect(await store.list("missing", undefined, 10)).toEqual([]);
      for (const entry of await store.list("p", undefined, 100)) {
        // Loose bounds: file systems keep coarser times than Date.now().
        expect(entry.modifiedAt.getTime(), entry.key).toBeGreaterThan(before - 5_000);
        expect(entry.modifiedAt.getTime(), entry.key).toBeLessThan(Date.now() + 5_000);
      }
    });

    it("refuses keys that are not plain relative paths", async () => {
      const store = open();
      for (const key of ["../escape", "/absolute", "a//b", "a/../b", ".hidden", "a/.x", "with space", "trailing/", "", "x".repeat(513)]) {
        await expect(store.put(key, PNG, "image/png"), key).rejects.toThrow(/invalid blob key/);
        await expect(store.get(key), key).rejects.toThrow(/invalid blob key/);
      }
    });
  });
}

describe("file store", () => {
  const root = mkdtempSync(join(tmpdir(), "svc-blobs-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const fresh = () => createFileBlobStore(join(root, `store-${++n}`));

  storeContract("file", fresh);

  it("is the default, under $SVC_DATA_DIR/blobs", () => {
    const config = loadConfig({ SVC_DATA_DIR: "/srv/svc" });
    expect(config.blobs).toEqual({ kind: "file", dir: "/srv/svc/blobs" });
  });

  it("writes through a temporary file that does not stay behind", async () => {
    const dir = join(root, "temporary");
    const store = createFileBlobStore(dir);
    await store.put("artifacts/day/one", PNG, "image/png");
    await store.put("artifacts/day/one", PNG, "image/png");
    expect(readdirSync(join(dir, "artifacts/day"))).toEqual(["one"]);
  });

  it("lists only the names that are keys", async () => {
    const dir = join(root, "listing");
    const store = createFileBlobStore(dir);
    await store.put("p/a", PNG, "image/png");
    mkdirSync(join(dir, "p/.cache"));
    writeFileSync(join(dir, "p/.cache/x"), "x");
    writeFileSync(join(dir, "p/.DS_Store"), "x");
    expect((await store.list("p", undefined, 10)).map((e) => e.key)).toEqual(["p/a"]);
  });
});

describe("S3 store against a fake S3 server", () => {
  let s3: FakeS3;
  let config: S3BlobConfig;
  beforeAll(async () => {
    s3 = await startFakeS3();
    config = {
      kind: "s3",
      endpoint: s3.url,
      region: s3.region,
      bucket: s3.bucket,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    };
  });
  afterAll(() => s3.close());

  storeContract("s3", () => createS3BlobStore(config));

  it("signs every request with SigV4 over the payload's SHA-256, path-style", async () => {
    const store = createBlobStore(config);
    const before = s3.requests.length;
    await store.put("artifacts/2025-01-02/signed", PNG, "image/png");
    await store.get("artifacts/2025-01-02/signed");
    await store.delete("artifacts/2025-01-02/signed");
    const seen = s3.requests.slice(before);
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      `PUT /${s3.bucket}/artifacts/2025-01-02/signed`,
      `GET /${s3.bucket}/artifacts/2025-01-02/signed`,
      `DELETE /${s3.bucket}/artifacts/2025-01-02/signed`,
    ]);
    for (const request of seen) {
      expect(request.signatureError, `${request.method}`).toBeNull();
      expect(request.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
      );
      expect(request.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
      expect(request.headers["x-amz-content-sha256"]).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(seen[0]!.headers["content-type"]).toBe("image/png");
    expect(s3.objects.has("artifacts/2025-01-02/signed")).toBe(false);
  });

  it("reports a refused signature, a missing bucket and a failing store as 503, without retrying", async () => {
    const wrongSecret = createS3BlobStore({ ...config, secretAccessKey: "not-the-secret" });
    const refused = await wrongSecret.put("k", PNG, "image/png").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("service_unavailable");
    expect(String((refused as AppError).cause)).toMatch(/403 SignatureDoesNotMatch/);

    const noBucket = await createS3BlobStore({ ...config, bucket: "other-bucket" }).get("k").catch((err: unknown) => err);
    expect((noBucket as AppError).code).toBe("service_unavailable");
    expect(String((noBucket as AppError).cause)).toMatch(/404 NoSuchBucket/);

    const before = s3.requests.length;
    s3.failNext();
    const failed = await createS3BlobStore(config).put("k", PNG, "image/png").catch((err: unknown) => err);
    expect((failed as AppError).code).toBe("service_unavailable");
    expect(s3.requests.length - before).toBe(1);
  });

  it("lists through signed ListObjectsV2 requests on the bucket, with the objects' times", async () => {
    const store = createS3BlobStore(config);
    await store.put("listed/one", PNG, "image/png");
    await store.put("listed/two", PNG, "image/png");
    const longAgo = new Date("2024-02-29T12:34:56.789Z");
    s3.objects.get("listed/one")!.modifiedAt = longAgo;
    const two = { key: "listed/two", modifiedAt: s3.objects.get("listed/two")!.modifiedAt };
    const before = s3.requests.length;
    expect(await store.list("listed", undefined, 10)).toEqual([{ key: "listed/one", modifiedAt: longAgo }, two]);
    expect(await store.list("listed", "listed/one", 1)).toEqual([two]);
    const seen = s3.requests.slice(before);
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /${s3.bucket}`, `GET /${s3.bucket}`]);
    expect(seen.map((r) => Object.fromEntries(r.query))).toEqual([
      { "list-type": "2", prefix: "listed/", "max-keys": "10" },
      { "list-type": "2", prefix: "listed/", "start-after": "listed/one", "max-keys": "1" },
    ]);
    for (const request of seen) expect(request.signatureError).toBeNull();
  });

  it("skips keys svc cannot have written and pages on past them", async () => {
    const store = createS3BlobStore(config);
    const now = new Date();
    // In S3's byte order: tab, space and '&' all sort before 'c'.
    for (const key of ["odd/a", "odd/b\tz", "odd/b c", "odd/b&c", "odd/c", "odd/d"]) {
      s3.objects.set(key, { bytes: PNG, contentType: "image/png", modifiedAt: now });
    }
    const before = s3.requests.length;
    expect((await store.list("odd", undefined, 2)).map((e) => e.key)).toEqual(["odd/a", "odd/c"]);
    const seen = s3.requests.slice(before);
    expect(seen.map((r) => r.query.get("start-after"))).toEqual([null, "odd/b\tz", "odd/b c", "odd/b&c"]);
    for (const request of seen) expect(request.signatureError).toBeNull();
    expect((await store.list("odd", "odd/c", 10)).map((e) => e.key)).toEqual(["odd/d"]);
  });

  it("reports a failing or refused listing as 503", async () => {
    s3.failNext();
    const failed = await createS3BlobStore(config).list("p", undefined, 10).catch((err: unknown) => err);
    expect((failed as AppError).code).toBe("service_unavailable");
    expect(String((failed as AppError).cause)).toMatch(/S3 GET list p\/: 500 InternalError/);
    const refused = await createS3BlobStore({ ...config, secretAccessKey: "not-the-secret" }).list("p", undefined, 10).catch((err: unknown) => err);
    expect((refused as AppError).code).toBe("service_unavailable");
    expect(String((refused as AppError).cause)).toMatch(/403 SignatureDoesNotMatch/);
  });

  it("checks the query string as part of the signature", async () => {
    const client = new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3", region: s3.region, retries: 0 });
    const emptyHash = createHash("sha256").digest("hex");
    const signed = await client.sign(`${s3.url}/${s3.bucket}?list-type=2&prefix=a%2F`, { headers: { "x-amz-content-sha256": emptyHash } });
    expect((await fetch(signed)).status).toBe(200);
    const tampered = await fetch(signed.url.replace("prefix=a%2F", "prefix=b%2F"), { headers: signed.headers });
    expect(tampered.status).toBe(403);
    expect(s3.requests.at(-1)!.signatureError).toBe("signature does not match");
  });

  it("reads ListObjectsV2 XML: entities decoded once, objects with an unreadable time kept", () => {
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>` +
      `<Contents><Key>a&amp;b&lt;c&gt;&quot;&apos;&#45;&#x2d;&amp;lt;</Key><LastModified>2025-01-02T03:04:05.006Z</LastModified>` +
      `<ETag>&quot;abc&quot;</ETag></Contents>` +
      `<Contents><Key>x&#1114112;&#xD800;</Key><LastModified>yesterday</LastModified></Contents>` +
      `<Contents><Key>no-time</Key></Contents>` +
      `<Contents><Size>1</Size></Contents></ListBucketResult>`;
    const page = parseListObjectsV2(xml);
    expect(page.truncated).toBe(true);
    expect(page.objects.map((o) => o.key)).toEqual([`a&b<c>"'--&lt;`, "x&#1114112;&#xD800;", "no-time"]);
    expect(page.objects[0]!.modifiedAt.toISOString()).toBe("2025-01-02T03:04:05.006Z");
    expect(page.objects.slice(1).map((o) => Number.isNaN(o.modifiedAt.getTime()))).toEqual([true, true]);
    expect(parseListObjectsV2("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>")).toEqual({ objects: [], truncated: false });
  });

  it("reports an unreachable store as 503", async () => {
    const closed = await startFakeS3();
    await closed.close();
    const err = await createS3BlobStore({ ...config, endpoint: closed.url }, { timeoutMs: 5_000 }).get("k").catch((e: unknown) => e);
    expect((err as AppError).code).toBe("service_unavailable");
  });

  it("serves artifacts end to end when svc is configured for S3", async () => {
    const server = await startTestServer({
      SVC_BLOB_STORE: "s3",
      SVC_S3_ENDPOINT: s3.url,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY_ID: s3.accessKeyId,
      SVC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    try {
      const { token, org, project } = await server.api.userWithOrg();
      const agent = await insertTestAgent(server, org.id, project.id);
      const { artifacts } = server.app.services;
      const prepared = await artifacts.prepareContentBlocks([{ type: "media", media_type: "image/png", data: PNG.toString("base64") }], new Set(["media"]));
      await server.db.tx((tx) => artifacts.recordArtifacts(tx, prepared, agent.ids));
      expect(s3.objects.get(prepared.artifacts[0]!.storageKey)).toEqual({ bytes: PNG, contentType: "image/png", modifiedAt: expect.any(Date) });
      const ref = prepared.blocks[0] as { artifact_id: string };
      const content = await getBytes(server, `${agent.path}/artifacts/${ref.artifact_id}/content`, token);
      expect(content.status).toBe(200);
      expect(content.bytes).toEqual(PNG);
      expect(decodeId("artifact", ref.artifact_id)).toBe(prepared.artifacts[0]!.id);
    } finally {
      await server.close();
    }
  });
});

describe("blob store configuration", () => {
  const s3Env = { SVC_BLOB_STORE: "s3", SVC_S3_BUCKET: "svc-artifacts", SVC_S3_ACCESS_KEY_ID: "AKID", SVC_S3_SECRET_ACCESS_KEY: "secret" };

  it("fills S3 defaults: AWS's regional endpoint, us-east-1, path-style", () => {
    expect(loadConfig(s3Env).blobs).toEqual({
      kind: "s3",
      endpoint: "https://s3.us-east-1.amazonaws.com",
      region: "us-east-1",
      bucket: "svc-artifacts",
      accessKeyId: "AKID",
      secretAccessKey: "secret",
      forcePathStyle: true,
    });
    const custom = loadConfig({ ...s3Env, SVC_S3_ENDPOINT: "http://minio:9000", SVC_S3_REGION: "eu-west-3", SVC_S3_FORCE_PATH_STYLE: "false" });
    expect(custom.blobs).toMatchObject({ endpoint: "http://minio:9000", region: "eu-west-3", forcePathStyle: false });
  });

  it("refuses to start with an incomplete or invalid S3 setup, naming the variable", () => {
    const fails = (env: Record<string, string>, message: RegExp) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    };
    fails({ SVC_BLOB_STORE: "s3" }, /SVC_S3_BUCKET is required when SVC_BLOB_STORE=s3/);
    fails({ ...s3Env, SVC_S3_ACCESS_KEY_ID: "" }, /SVC_S3_ACCESS_KEY_ID is required/);
    fails({ ...s3Env, SVC_S3_SECRET_ACCESS_KEY: " " }, /SVC_S3_SECRET_ACCESS_KEY is required/);
    fails({ ...s3Env, SVC_S3_BUCKET: "Bad_Bucket" }, /SVC_S3_BUCKET must be/);
    fails({ ...s3Env, SVC_S3_ENDPOINT: "minio:9000" }, /SVC_S3_ENDPOINT must/);
    fails({ ...s3Env, SVC_S3_FORCE_PATH_STYLE: "maybe" }, /SVC_S3_FORCE_PATH_STYLE must be true or false/);
    fails({ SVC_BLOB_STORE: "gcs" }, /SVC_BLOB_STORE must be one of file, s3/);
  });
});
