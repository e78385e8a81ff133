import { createHash } from "node:crypto";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/platform/errors.js";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import type { BlockType, PreparedBlocks, SubmittedBlock } from "../../src/modules/artifacts/service.js";
import { startFakeS3 } from "../support/fake-s3.js";
import { startTestServer, useTestServer, type TestServer } from "../support/server.js";
import { getBytes, insertTestAgent, type InsertedAgent } from "./artifacts-fixtures.js";

const server = useTestServer();
const MiB = 1024 * 1024;
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");
const ALL = new Set<BlockType>(["text", "media", "structured_data"]);

const media = (bytes: Buffer, extra: Partial<Extract<SubmittedBlock, { type: "media" }>> = {}): SubmittedBlock => ({
  type: "media",
  media_type: "image/png",
  data: bytes.toString("base64"),
  ...extra,
});

const prepare = (blocks: SubmittedBlock[], allowed: Set<BlockType> = ALL) => server.app.services.artifacts.prepareContentBlocks(blocks, allowed);

async function record(prepared: PreparedBlocks, agent: InsertedAgent): Promise<void> {
  await server.db.tx((tx) => server.app.services.artifacts.recordArtifacts(tx, prepared, agent.ids));
}

/** The issues of a rejected prepare, which must be a 400 validation_failed. */
async function issuesOf(blocks: SubmittedBlock[], allowed: Set<BlockType> = ALL) {
  const err = await prepare(blocks, allowed).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe("validation_failed");
  expect((err as AppError).status).toBe(400);
  return (err as AppError).details.issues!;
}

function blobFiles(): string[] {
  const root = join(server.config.dataDir, "blobs", "artifacts");
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

let owner: Awaited<ReturnType<typeof server.api.userWithOrg>>;
let agent: InsertedAgent;

beforeAll(async () => {
  owner = await server.api.userWithOrg();
  agent = await insertTestAgent(server, owner.org.id, owner.project.id);
});

describe("ingesting content blocks", () => {
  it("stores media as artifacts, replaces them with media_ref blocks and serves them back", async () => {
    const csv = Buffer.from("a,b\n1,2\n");
    const prepared = await prepare([
      { type: "text", text: "look at these", metadata: { source: "test" } },
      media(PNG, { filename: "chart ü \"q\".png", metadata: { slot: "1" } }),
      { type: "structured_data", value: { rows: [1, 2, { nested: true }] } },
      media(csv, { media_type: "text/csv" }),
    ]);
    expect(prepared.artifacts).toHaveLength(2);
    const [png, table] = prepared.artifacts;
    expect(png).toEqual({
      id: expect.any(String),
      contentType: "image/png",
      filename: "chart ü \"q\".png",
      digest: `sha256:${createHash("sha256").update(PNG).digest("hex")}`,
      sizeBytes: PNG.length,
      storageKey: expect.stringMatching(/^artifacts\/\d{4}-\d{2}-\d{2}\/[0-9a-f-]{36}$/),
    });
    expect(table).toMatchObject({ contentType: "text/csv", filename: null, sizeBytes: csv.length });
    expect(prepared.blocks).toEqual([
      { type: "text", text: "look at these", metadata: { source: "test" } },
      { type: "media_ref", artifact_id: encodeId("artifact", png!.id), metadata: { slot: "1" } },
      { type: "structured_data", value: { rows: [1, 2, { nested: true }] } },
      { type: "media_ref", artifact_id: encodeId("artifact", table!.id) },
    ]);
    await record(prepared, agent);

    const pngId = encodeId("artifact", png!.id);
    const meta = await server.api.get(`${agent.path}/artifacts/${pngId}`, { token: owner.token });
    expect(meta.status).toBe(200);
    expect(meta.body).toEqual({
      id: pngId,
      org_id: owner.org.id,
      project_id: owner.project.id,
      agent_id: agent.publicId,
      content_type: "image/png",
      filename: "chart ü \"q\".png",
      digest: png!.digest,
      size_bytes: PNG.length,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });

    const content = await getBytes(server, `${agent.path}/artifacts/${pngId}/content`, owner.token);
    expect(content.status).toBe(200);
    expect(content.bytes).toEqual(PNG);
    expect(content.headers.get("content-type")).toBe("image/png");
    expect(content.headers.get("content-length")).toBe(String(PNG.length));
    expect(content.headers.get("content-disposition")).toBe(`attachment; filename="chart _ _q_.png"; filename*=UTF-8''chart%20%C3%BC%20%22q%22.png`);
    expect(content.headers.get("x-content-type-options")).toBe("nosniff");
    expect(content.headers.get("cache-control")).toMatch(/^private, max-age=\d+/);

    const tableId = encodeId("artifact", table!.id);
    const tableMeta = await server.api.get(`${agent.path}/artifacts/${tableId}`, { token: owner.token });
    expect(tableMeta.body).not.toHaveProperty("filename");
    const tableContent = await getBytes(server, `${agent.path}/artifacts/${tableId}/content`, owner.token);
    expect(tableContent.bytes).toEqual(csv);
    expect(tableContent.headers.get("content-type")).toBe("text/csv");
    expect(tableContent.headers.get("content-disposition")).toBe("attachment");
  });

  it("passes blocks without media through and writes nothing", async () => {
    const before = blobFiles().length;
    const prepared = await prepare([{ type: "text", text: "" }], new Set(["text"]));
    expect(prepared).toEqual({ artifacts: [], blocks: [{ type: "text", text: "" }] });
    await record(prepared, agent);
    expect(blobFiles()).toHaveLength(before);
  });

  it("hands the runtime an agent's artifact with its bytes, and nothing of another agent", async () => {
    const prepared = await prepare([media(PNG)]);
    await record(prepared, agent);
    const id = prepared.artifacts[0]!.id;
    const read = await server.app.services.artifacts.readArtifact(agent.ids.agentId, id);
    expect(read?.bytes).toEqual(PNG);
    expect(read?.row).toMatchObject({ id, agentId: agent.ids.agentId, contentType: "image/png" });
    const other = await insertTestAgent(server, owner.org.id, owner.project.id);
    expect(await server.app.services.artifacts.readArtifact(other.ids.agentId, id)).toBeNull();
    expect(await server.app.services.artifacts.readArtifact(agent.ids.agentId, newUuid())).toBeNull();
  });
});

describe("limits (spec: Limits), each a 400 validation_failed pointing at the block", () => {
  it("accepts 20 media blocks and refuses 21", async () => {
    const twenty = Array.from({ length: 20 }, () => media(PNG));
    expect((await prepare(twenty)).artifacts).toHaveLength(20);
    expect(await issuesOf([...twenty, media(PNG)])).toEqual([{ path: "/content_blocks", message: expect.stringMatching(/21 media blocks; at most 20/) }]);
  });

  it("accepts 10 MiB decoded per media block and refuses one byte more", async () => {
    expect((await prepare([media(Buffer.alloc(10 * MiB, 1))])).artifacts[0]!.sizeBytes).toBe(10 * MiB);
    const issues = await issuesOf([{ type: "text", text: "x" }, media(Buffer.alloc(10 * MiB + 1, 1))]);
    expect(issues).toEqual([{ path: "/content_blocks/1/data", message: expect.stringMatching(/decodes to 10485761 bytes; .* at most 10 MiB/) }]);
  });

  it("refuses more than 24 MiB of media together", async () => {
    const nine = media(Buffer.alloc(9 * MiB, 2));
    expect((await prepare([nine, media(Buffer.alloc(6 * MiB, 2)), media(Buffer.alloc(9 * MiB, 2))])).artifacts).toHaveLength(3);
    expect(await issuesOf([nine, nine, nine])).toEqual([{ path: "/content_blocks", message: expect.stringMatching(/28311552 bytes together; at most 24 MiB/) }]);
  });

  it("measures text and structured_data blocks as UTF-8 JSON, 1 MiB together", async () => {
    // {"type":"text","text":"…"} is 25 bytes around the text.
    const fits = "a".repeat(MiB - 25);
    expect((await prepare([{ type: "text", text: fits }])).blocks).toHaveLength(1);
    expect(await issuesOf([{ type: "text", text: `${fits}a` }])).toEqual([
      { path: "/content_blocks", message: expect.stringMatching(/1048577 bytes of JSON together; at most 1 MiB/) },
    ]);
    // Two bytes per "é": half as many characters reach the limit.
    await issuesOf([{ type: "text", text: "é".repeat(MiB / 2) }]);
    await issuesOf([
      { type: "text", text: "a".repeat(MiB / 2) },
      { type: "structured_data", value: { big: "b".repeat(MiB / 2) } },
    ]);
    // Media do not count toward it.
    expect((await prepare([{ type: "text", text: fits.slice(100) }, media(Buffer.alloc(2 * MiB, 3))])).artifacts).toHaveLength(1);
  });

  it("refuses base64 that is not strict, at the block's data", async () => {
    for (const data of ["YQ", "YR==", "YQ==\n", "Y Q==", "-_-_", "ab!c", "====", "YQ=="]) {
      if (data === "YQ==") {
        expect((await prepare([{ type: "media", media_type: "text/plain", data }])).artifacts[0]!.sizeBytes).toBe(1);
        continue;
      }
      expect(await issuesOf([{ type: "text", text: "x" }, { type: "media", media_type: "text/plain", data }]), data).toEqual([
        { path: "/content_blocks/1/data", message: expect.stringMatching(/not valid base64/) },
      ]);
    }
  });

  it("refuses U+0000 in text, filenames, metadata and structured data, with a pointer to each", async () => {
    const issues = await issuesOf([
      { type: "text", text: "a\u0000b" },
      { type: "text", text: "ok", metadata: { "k\u0000": "v", fine: "x\u0000" } },
      media(PNG, { filename: "a\u0000.png" }),
      { type: "structured_data", value: { list: ["fine", "bad\u0000"], "a/b": { "key\u0000": 1 } } },
    ]);
    expect(issues.map((i) => i.path)).toEqual([
      "/content_blocks/0/text",
      "/content_blocks/1/metadata/k\u0000",
      "/content_blocks/1/metadata/fine",
      "/content_blocks/2/filename",
      "/content_blocks/3/value/list/1",
      "/content_blocks/3/value/a~1b/key\u0000",
    ]);
    expect(issues.every((i) => /U\+0000/.test(i.message))).toBe(true);
  });

  it("refuses structured data nested deeper than 128 levels", async () => {
    const nest = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
    expect((await prepare([{ type: "structured_data", value: nest(128) }])).blocks).toHaveLength(1);
    const issues = await issuesOf([{ type: "structured_data", value: nest(129) }]);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toMatch(/deeper than 128 levels/);
    // Far deeper than the stack allows recursion: still a clean 400.
    await issuesOf([{ type: "structured_data", value: nest(200_000) }]);
  });

  it("refuses block types the caller does not accept", async () => {
    expect(await issuesOf([{ type: "text", text: "x" }, media(PNG)], new Set(["text"]))).toEqual([
      { path: "/content_blocks/1/type", message: "media blocks are not accepted here; use text" },
    ]);
  });

  it("stores nothing when a request is refused", async () => {
    const before = blobFiles().length;
    await issuesOf([media(PNG), media(PNG), { type: "media", media_type: "image/png", data: "not base64" }]);
    expect(blobFiles()).toHaveLength(before);
  });
});

describe("reading artifacts over HTTP", () => {
  let artifactId: string;
  beforeAll(async () => {
    const prepared = await prepare([media(PNG, { filename: "one.png" })]);
    await record(prepared, agent);
    artifactId = encodeId("artifact", prepared.artifacts[0]!.id);
  });

  it("answers 404 for an artifact of another agent, an unknown or malformed id, and another project's agent", async () => {
    const sibling = await insertTestAgent(server, owner.org.id, owner.project.id);
    const auth = { token: owner.token };
    for (const suffix of ["", "/content"]) {
      expect((await server.api.get(`${sibling.path}/artifacts/${artifactId}${suffix}`, auth)).status).toBe(404);
      expect((await server.api.get(`${agent.path}/artifacts/${encodeId("artifact", newUuid())}${suffix}`, auth)).status).toBe(404);
      expect((await server.api.get(`${agent.path}/artifacts/art_nope${suffix}`, auth)).status).toBe(404);
      expect((await server.api.get(`${agent.path}/artifacts/${agent.publicId}${suffix}`, auth)).status).toBe(404);
    }
    const other = await server.api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name: "Other" }, auth);
    expect(other.status).toBe(201);
    const wrongProject = `/api/v1/orgs/${owner.org.id}/projects/${other.body.id}/agents/${agent.publicId}/artifacts/${artifactId}`;
    const reply = await server.api.get(wrongProject, auth);
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
  });

  it("needs agent.read: outsiders and members without the project see nothing, viewers read", async () => {
    const path = `${agent.path}/artifacts/${artifactId}`;
    const stranger = await server.api.userWithOrg("Elsewhere");
    expect((await server.api.get(path, { token: stranger.token })).status).toBe(404);
    expect((await getBytes(server, `${path}/content`, stranger.token)).status).toBe(404);

    const member = await server.api.orgMember({ token: owner.token }, owner.org.id, "member");
    expect((await server.api.get(path, { token: member.token })).status).toBe(404);
    const granted = await server.api.put(
      `/api/v1/orgs/${owner.org.id}/members/${member.userId}/projects/${owner.project.id}`,
      { role: "viewer" },
      { token: owner.token },
    );
    expect(granted.status, granted.text).toBe(200);
    expect((await server.api.get(path, { token: member.token })).status).toBe(200);
    const content = await getBytes(server, `${path}/content`, member.token);
    expect(content.status).toBe(200);
    expect(content.bytes).toEqual(PNG);

    expect((await server.api.get(path)).status).toBe(401);
  });
});

describe("orphan blobs", () => {
  /** The blob store under a test server, reached behind svc's back. */
  interface BlobsBehindSvc {
    /** Writes bytes svc knows nothing of, as a write that crashed before its rename leaves them. */
    write(key: string, bytes: Buffer): void;
    age(key: string, hours: number): void;
    has(key: string): boolean;
  }

  const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3600_000);

  async function expectOnlyOldOrphansSwept(target: TestServer, owner: InsertedAgent, blobs: BlobsBehindSvc): Promise<void> {
    const { artifacts } = target.app.services;
    const upload = () => artifacts.prepareContentBlocks([media(PNG)], ALL);
    const kept = await upload();
    await target.db.tx((tx) => artifacts.recordArtifacts(tx, kept, owner.ids));
    const orphan = await upload();
    const young = await upload();
    const [keptKey, orphanKey, youngKey] = [kept, orphan, young].map((p) => p.artifacts[0]!.storageKey) as [string, string, string];
    const crashedWrite = `${orphanKey}.0123456789ab.tmp`;
    blobs.write(crashedWrite, Buffer.from("partial"));
    for (const key of [keptKey, orphanKey, crashedWrite]) blobs.age(key, 2);

    expect(await artifacts.sweepOrphanBlobs()).toBe(2);
    expect(blobs.has(orphanKey)).toBe(false);
    expect(blobs.has(crashedWrite)).toBe(false);
    expect(blobs.has(keptKey)).toBe(true);
    expect(blobs.has(youngKey)).toBe(true);
    const read = await artifacts.readArtifact(owner.ids.agentId, kept.artifacts[0]!.id);
    expect(read?.bytes).toEqual(PNG);
  }

  it("removes unreferenced files older than an hour and keeps everything else", async () => {
    const pathOf = (key: string) => join(server.config.dataDir, "blobs", key);
    await expectOnlyOldOrphansSwept(server, agent, {
      write: (key, bytes) => writeFileSync(pathOf(key), bytes),
      age: (key, hours) => utimesSync(pathOf(key), hoursAgo(hours), hoursAgo(hours)),
      has: (key) => existsSync(pathOf(key)),
    });
  });

  it("removes unreferenced S3 objects older than an hour and keeps everything else", async () => {
    const s3 = await startFakeS3();
    const s3Server = await startTestServer({
      SVC_BLOB_STORE: "s3",
      SVC_S3_ENDPOINT: s3.url,
      SVC_S3_REGION: s3.region,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY_ID: s3.accessKeyId,
      SVC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    try {
      const s3Owner = await s3Server.api.userWithOrg();
      const s3Agent = await insertTestAgent(s3Server, s3Owner.org.id, s3Owner.project.id);
      await expectOnlyOldOrphansSwept(s3Server, s3Agent, {
        write: (key, bytes) => s3.objects.set(key, { bytes, contentType: "binary/octet-stream", modifiedAt: new Date() }),
        age: (key, hours) => {
          s3.objects.get(key)!.modifiedAt = hoursAgo(hours);
        },
        has: (key) => s3.objects.has(key),
      });
      const listings = s3.requests.filter((r) => r.query.get("list-type") === "2");
      expect(listings.map((r) => r.query.get("prefix"))).toEqual(["artifacts/"]);
      expect(s3.requests.filter((r) => r.signatureError !== null)).toEqual([]);
    } finally {
      await s3Server.close();
      await s3.close();
    }
  });
});
