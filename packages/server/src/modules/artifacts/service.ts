import { createHash } from "node:crypto";
import type { BlobStore } from "../../platform/blobs/index.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { orphanSweep } from "../../platform/blobs/orphans.js";
import { globToLike } from "../../platform/http/lists.js";
import { requireAgent } from "../agents/access.js";
import { checkContentBlocks, type BlockType, type SubmittedBlock } from "./content.js";
import type { MediaRefBlock, StructuredDataBlock, TextBlock } from "./schemas.js";
import * as store from "./store.js";

export type { ArtifactRow } from "./store.js";
export type { BlockType, SubmittedBlock } from "./content.js";

/**
 * The whole request body of a route that accepts inline media (the spec's 48 MiB): pass it as the
 * route's Fastify `bodyLimit`. A larger body is refused before parsing with 413 `request_too_large`.
 */
export const CONTENT_BODY_LIMIT = 48 * 1024 * 1024;

/** Blobs younger than this may belong to a transaction still running; the sweep leaves them alone. */
const KEY_PREFIX = "artifacts";

/** A content block as stored and read back: inline media have become artifact references. */
export type StoredContentBlock = TextBlock | StructuredDataBlock | MediaRefBlock;

/** An artifact whose bytes are in the blob store and whose row is not written yet. */
export interface PendingArtifact {
  id: string;
  /** A media block's type, or for a file from a machine what its name and bytes say (file-types.ts). */
  contentType: string;
  filename: string | null;
  /** `sha256:<hex>` of the bytes. */
  digest: string;
  sizeBytes: number;
  storageKey: string;
}

/** Blocks checked and their media stored, waiting for the transaction that records them. */
export interface PreparedBlocks {
  artifacts: PendingArtifact[];
  blocks: StoredContentBlock[];
}

/**
 * Artifacts: files that entered an agent's timeline as inline media. Ingesting is split so that no
 * disk or network wait happens inside a transaction: `prepareContentBlocks` checks and uploads before
 * it, `recordArtifacts` writes the rows in the caller's transaction. When that transaction fails, the
 * uploaded blobs are left without a row; `sweepOrphanBlobs` removes them later.
 */
export function createArtifactsService(deps: { db: Database; blobs: BlobStore }) {
  const { db, blobs } = deps;

  async function loadBytes(row: store.ArtifactRow): Promise<Buffer> {
    const bytes = await blobs.get(row.storageKey);
    // The row is written only after its blob, and nothing deletes a referenced blob: a gap is a fault.
    if (!bytes) throw new AppError("internal_error", "the artifact's content is missing from file storage", {}, new Error(`no blob at ${row.storageKey}`));
    return bytes;
  }

  /** An artifact of an agent the caller may read; another agent's artifact is a 404. */
  async function getArtifact(principal: Principal, orgId: string, projectId: string, agentId: string, artifactId: string): Promise<store.ArtifactRow> {
    return db.tx(async (tx) => {
      await requireAgent(tx, principal, orgId, projectId, agentId, "agent.read");
      const row = await store.findArtifact(tx, agentId, artifactId);
      if (!row) throw notFound("artifact");
      return row;
    });
  }

  return {
    /**
     * Checks submitted blocks (limits, strict base64, no U+0000; see content.ts) and stores every media
     * block's bytes under a fresh key. Returns the pending artifact rows and the blocks with each media
     * block replaced by a `media_ref` to its artifact. Blocks must already have passed the route schema.
     */
    async prepareContentBlocks(blocks: readonly SubmittedBlock[], allowed: ReadonlySet<BlockType>): Promise<PreparedBlocks> {
      const media = checkContentBlocks(blocks, allowed);
      const uploads = media.map(({ index, block, bytes }) => ({ index, artifact: pendingArtifact(bytes, block.media_type, block.filename ?? null), bytes }));
      const results = await Promise.allSettled(uploads.map((u) => blobs.put(u.artifact.storageKey, u.bytes, u.artifact.contentType)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) {
        await Promise.allSettled(uploads.map((u) => blobs.delete(u.artifact.storageKey)));
        throw failed.reason;
      }
      const refs = new Map(uploads.map((u) => [u.index, u.artifact.id]));
      return {
        artifacts: uploads.map((u) => u.artifact),
        blocks: blocks.map((block, index): StoredContentBlock => {
          if (block.type !== "media") return block;
          return {
            type: "media_ref",
            artifact_id: encodeId("artifact", refs.get(index)!),
            ...(block.metadata !== undefined ? { metadata: block.metadata } : {}),
          };
        }),
      };
    },

    /**
     * Stores one whole file (a machine's upload, modules/daemon/transfer-service.ts) under a fresh key, outside
     * any transaction; record it with `recordArtifacts`, or `discardFile` it when the transaction refuses it.
     */
    async prepareFile(bytes: Buffer, contentType: string, filename: string | null): Promise<PendingArtifact> {
      const artifact = pendingArtifact(bytes, contentType, filename);
      await blobs.put(artifact.storageKey, bytes, contentType);
      return artifact;
    },

    /** Deletes the bytes of a prepared file that will never be recorded (the sweep would, an hour later). */
    async discardFile(artifact: PendingArtifact): Promise<void> {
      await blobs.delete(artifact.storageKey).catch(() => undefined);
    },

    /** Writes the prepared artifact rows in the caller's transaction, which must have authorized the agent. */
    async recordArtifacts(tx: Tx, prepared: PreparedBlocks, owner: { orgId: string; projectId: string; agentId: string }): Promise<void> {
      await store.insertArtifacts(
        tx,
        prepared.artifacts.map((a) => ({ ...a, orgId: owner.orgId, projectId: owner.projectId, agentId: owner.agentId })),
      );
    },

    getArtifact,

    /** The artifact and its bytes; the bytes are read after the authorizing transaction has ended. */
    async getArtifactContent(principal: Principal, orgId: string, projectId: string, agentId: string, artifactId: string) {
      const row = await getArtifact(principal, orgId, projectId, agentId, artifactId);
      return { row, bytes: await loadBytes(row) };
    },

    /** For the agent runtime: an artifact of `agentId` with its bytes, or null when there is none. */
    async readArtifact(agentId: string, artifactId: string): Promise<{ row: store.ArtifactRow; bytes: Buffer } | null> {
      const row = await store.findArtifact(db.read, agentId, artifactId);
      return row ? { row, bytes: await loadBytes(row) } : null;
    },

    /**
     * For the agent runtime's file tools: an artifact row of `agentId`, without its bytes, or null. Read in
     * `tx` when the caller holds one (on PGlite a read outside it would wait for it to end).
     */
    async findAgentArtifact(agentId: string, artifactId: string, tx?: Tx): Promise<store.ArtifactRow | null> {
      return (await store.findArtifact(tx ?? db.read, agentId, artifactId)) ?? null;
    },

    /** The bytes of an artifact row found through this service. */
    artifactBytes: loadBytes,

    /**
     * For the agent runtime's file tools: `agentId`'s artifacts, newest first, at most `limit`, whose name
     * (the filename's last `/` component; empty when unnamed) matches one of `globs` (`*` any run, `?` one
     * character, `\` escapes; case-sensitive), or all of them when `globs` is null.
     */
    async listAgentArtifacts(agentId: string, globs: readonly string[] | null, limit: number): Promise<store.ArtifactRow[]> {
      return store.listAgentArtifacts(db.read, agentId, globs === null ? null : globs.map(globToLike), limit);
    },

    /**
     * Deletes blobs older than an hour that no artifact row references: uploads of requests whose
     * transaction failed, temporary files of a crashed write, and the bytes of deleted agents. Works
     * through the store in key order, one batch per call, and starts over after the last key.
     */
    sweepOrphanBlobs: orphanSweep(blobs, KEY_PREFIX, (ids) => store.storageKeysOf(db.read, ids)),
  };
}

export type ArtifactsService = ReturnType<typeof createArtifactsService>;

function pendingArtifact(bytes: Buffer, contentType: string, filename: string | null): PendingArtifact {
  const id = newUuid();
  const day = new Date().toISOString().slice(0, 10);
  return {
    id,
    contentType,
    filename,
    digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    sizeBytes: bytes.length,
    // Grouped by day so the sweep and an operator can walk the store in order.
    storageKey: `${KEY_PREFIX}/${day}/${id}`,
  };
}
