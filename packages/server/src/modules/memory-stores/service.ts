import { createHash } from "node:crypto";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { profilesAttachingMemoryStore } from "../agent-profiles/store.js";
import { activeAgentsAttachingMemoryStore } from "../agents/store.js";
import { requireProject } from "../orgs/access.js";
import { requireValidPath } from "./paths.js";
import { MAX_MEMORIES_PER_STORE, MAX_MEMORY_BYTES } from "./schemas.js";
import * as store from "./store.js";

export type { MemoryRow, MemoryStoreRow, MemoryWithContentRow, VersionRow, VersionWithContentRow, MemoryPosition } from "./store.js";

/**
 * Who made a change, as its version records it. An agent's write comes from one of its tool calls; the
 * API's writes come from a user or an org API key.
 */
export type MemoryWriter =
  | { kind: "user"; id: string }
  | { kind: "api_key"; id: string }
  | { kind: "agent"; id: string; toolCallId: string };

export interface MemoryStoreChanges {
  description?: string;
  writable?: boolean;
  metadata?: Record<string, string>;
}

// Reading needs agent.read and changing project.manage: the same matrix as agent profiles.
const READ = "agent.read";
const WRITE = "project.manage";

/** Memory stores and their files. Another org's store, like a missing one, is a 404. */
export function createMemoryStoreService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async createStore(principal: Principal, orgId: string, projectId: string, input: { name: string } & MemoryStoreChanges) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, WRITE);
        // With no conflict target, a racing insert of the same name is waited for and then skipped.
        const row = await store.insertStore(tx, { id: newUuid(), orgId, projectId, ...input });
        if (!row) throw nameTaken(input.name);
        return row;
      });
    },

    async listStores(principal: Principal, orgId: string, projectId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        return store.listStores(tx, { orgId, projectId, ...query });
      });
    },

    async getStore(principal: Principal, orgId: string, projectId: string, storeId: string) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        return requireStore(tx, orgId, projectId, storeId);
      });
    },

    async updateStore(principal: Principal, orgId: string, projectId: string, storeId: string, changes: MemoryStoreChanges) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, WRITE);
        const row = await requireStore(tx, orgId, projectId, storeId, "update");
        if (Object.keys(changes).length === 0) return row;
        return store.updateStore(tx, orgId, storeId, changes);
      });
    },

    /**
     * Deletes the store with every file and version, unless an agent config in use names it in its
     * `memory` section: the current config of an active (not archived) agent of the project, or the
     * current config of one of its agent profiles. That is a 409 `conflict` naming them; archive the
     * agents or give them and the profiles configs without the store first. The store row is locked
     * first, so a config compiled at the same moment (which reads it FOR KEY SHARE) is either seen here
     * or finds the store gone.
     */
    async deleteStore(principal: Principal, orgId: string, projectId: string, storeId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, WRITE);
        const memoryStore = await requireStore(tx, orgId, projectId, storeId, "update");
        const users = await storeUsers(tx, orgId, projectId, storeId);
        if (users) throw conflict(`memory store "${memoryStore.name}" is attached by ${users}; remove it from their configs (or archive the agents) before deleting it`);
        if (!(await store.deleteStore(tx, orgId, projectId, storeId))) throw notFound("memory store");
      });
    },

    async listMemories(
      principal: Principal,
      orgId: string,
      projectId: string,
      storeId: string,
      query: { pathPrefix?: string; q?: string; after?: store.MemoryPosition; limit: number },
    ) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        await requireStore(tx, orgId, projectId, storeId);
        return store.listMemories(tx, { storeId, ...query });
      });
    },

    async getMemory(principal: Principal, orgId: string, projectId: string, storeId: string, memoryId: string) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        await requireStore(tx, orgId, projectId, storeId);
        const memory = await store.findLiveMemoryWithContent(tx, storeId, memoryId);
        if (!memory) throw notFound("memory");
        return memory;
      });
    },

    async putMemory(
      principal: Principal,
      orgId: string,
      projectId: string,
      storeId: string,
      input: { path: string; content: string; expectedDigest?: string },
    ) {
      checkWrite(input);
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, WRITE);
        const memoryStore = await requireStore(tx, orgId, projectId, storeId, "update");
        return writeMemory(tx, memoryStore, input, writerOf(principal));
      });
    },

    async deleteMemory(principal: Principal, orgId: string, projectId: string, storeId: string, memoryId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, WRITE);
        const memoryStore = await requireStore(tx, orgId, projectId, storeId, "update");
        await deleteMemory(tx, memoryStore, memoryId, writerOf(principal));
      });
    },

    /** A memory's versions, newest first; a deleted memory's history stays readable. */
    async listVersions(
      principal: Principal,
      orgId: string,
      projectId: string,
      storeId: string,
      memoryId: string,
      page: { beforeVersion?: number; limit: number },
    ) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        await requireStore(tx, orgId, projectId, storeId);
        if (!(await store.findMemory(tx, storeId, memoryId))) throw notFound("memory");
        return store.listVersions(tx, memoryId, page.beforeVersion, page.limit);
      });
    },

    async getVersion(principal: Principal, orgId: string, projectId: string, storeId: string, memoryId: string, version: number) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, READ);
        await requireStore(tx, orgId, projectId, storeId);
        const row = (await store.findMemory(tx, storeId, memoryId)) && (await store.findVersion(tx, memoryId, version));
        if (!row) throw notFound("memory version");
        return row;
      });
    },
  };
}

export type MemoryStoreService = ReturnType<typeof createMemoryStoreService>;

/** The content's digest as the API shows it: `sha256:` and the hex SHA-256 of its UTF-8 bytes. */
export function contentDigest(content: string): string {
  return `sha256:${createHash("sha256").update(content, "utf8").digest("hex")}`;
}

/** The checks a write needs before any transaction: a valid path and content within the size limit. */
export function checkWrite(input: { path: string; content: string }): void {
  requireValidPath(input.path);
  if (Buffer.byteLength(input.content, "utf8") > MAX_MEMORY_BYTES) {
    throw new AppError("request_too_large", `content is larger than ${MAX_MEMORY_BYTES / 1024 / 1024} MiB`);
  }
}

/**
 * Inside the caller's transaction, with `memoryStore` locked FOR UPDATE (which serializes writes to the
 * store and its counters): creates or replaces the file at `input.path` (checked by `checkWrite`) as its
 * next version. `expectedDigest`, when given, must be the file's current digest (409
 * file_content_conflict otherwise, with the current digest when the file exists). Writing the content
 * the file already has changes nothing and adds no version. A tool call passes its own `tx` and writer.
 */
export async function writeMemory(
  tx: Tx,
  memoryStore: store.MemoryStoreRow,
  input: { path: string; content: string; expectedDigest?: string },
  writer: MemoryWriter,
): Promise<{ memory: store.MemoryRow; created: boolean }> {
  requireWritable(memoryStore);
  const existing = await store.findMemoryByPath(tx, memoryStore.id, input.path);
  const live = existing && existing.deletedAt === null ? existing : undefined;
  if (input.expectedDigest !== undefined && live?.digest !== input.expectedDigest) {
    throw new AppError(
      "file_content_conflict",
      live ? "the file's digest is not expected_digest: read it again before replacing it" : "the file does not exist, so it has no expected_digest",
      live ? { currentDigest: live.digest } : {},
    );
  }
  const digest = contentDigest(input.content);
  if (live?.digest === digest) return { memory: live, created: false };
  if (!live && memoryStore.memoryCount >= MAX_MEMORIES_PER_STORE) {
    throw conflict(`the store already holds ${MAX_MEMORIES_PER_STORE} files; delete one before adding another`);
  }
  const sizeBytes = Buffer.byteLength(input.content, "utf8");
  const version = (existing?.currentVersion ?? 0) + 1;
  const state = { content: input.content, digest, sizeBytes, currentVersion: version };
  const memory = existing
    ? await store.updateMemory(tx, existing.id, { ...state, deleted: false })
    : await store.insertMemory(tx, { id: newUuid(), orgId: memoryStore.orgId, memoryStoreId: memoryStore.id, path: input.path, ...state });
  await store.insertVersion(tx, versionRow(memory, { content: input.content, digest, sizeBytes }, writer));
  await store.addToCounters(tx, memoryStore.orgId, memoryStore.id, { files: live ? 0 : 1, bytes: sizeBytes - (live?.sizeBytes ?? 0) });
  return { memory, created: !live };
}

/**
 * Inside the caller's transaction, with `memoryStore` locked FOR UPDATE: deletes the live file as its
 * next version (no content). Its history stays, and writing the path again continues it.
 */
export async function deleteMemory(tx: Tx, memoryStore: store.MemoryStoreRow, memoryId: string, writer: MemoryWriter): Promise<void> {
  const existing = await store.findMemory(tx, memoryStore.id, memoryId, "update");
  if (!existing || existing.deletedAt !== null) throw notFound("memory");
  requireWritable(memoryStore);
  const version = existing.currentVersion + 1;
  const memory = await store.updateMemory(tx, existing.id, { content: "", digest: contentDigest(""), sizeBytes: 0, currentVersion: version, deleted: true });
  await store.insertVersion(tx, versionRow(memory, { content: null, digest: null, sizeBytes: 0 }, writer));
  await store.addToCounters(tx, memoryStore.orgId, memoryStore.id, { files: -1, bytes: -existing.sizeBytes });
}

function versionRow(
  memory: store.MemoryRow,
  written: { content: string | null; digest: string | null; sizeBytes: number },
  writer: MemoryWriter,
) {
  return {
    id: newUuid(),
    orgId: memory.orgId,
    memoryId: memory.id,
    version: memory.currentVersion,
    ...written,
    writerKind: writer.kind,
    writerId: writer.id,
    agentId: writer.kind === "agent" ? writer.id : null,
    toolCallId: writer.kind === "agent" ? writer.toolCallId : null,
  };
}

function writerOf(principal: Principal): MemoryWriter {
  return principal.kind === "user" ? { kind: "user", id: principal.userId } : { kind: "api_key", id: principal.keyId };
}

function requireWritable(memoryStore: store.MemoryStoreRow): void {
  if (!memoryStore.writable) throw new AppError("file_read_only", `memory store "${memoryStore.name}" is not writable`);
}

async function requireStore(tx: Tx, orgId: string, projectId: string, storeId: string, lock?: "update"): Promise<store.MemoryStoreRow> {
  const row = await store.findStore(tx, orgId, projectId, storeId, lock);
  if (!row) throw notFound("memory store");
  return row;
}

/** Who uses the store, for the delete's 409: a few agents' ids and profiles' names, or undefined. */
async function storeUsers(tx: Tx, orgId: string, projectId: string, storeId: string): Promise<string | undefined> {
  const shown = 5;
  const agentIds = await activeAgentsAttachingMemoryStore(tx, orgId, projectId, storeId, shown + 1);
  const profiles = await profilesAttachingMemoryStore(tx, orgId, projectId, storeId, shown + 1);
  const list = (items: string[]) => items.slice(0, shown).join(", ") + (items.length > shown ? " and more" : "");
  const parts = [
    ...(agentIds.length > 0 ? [`the current config of agent${agentIds.length > 1 ? "s" : ""} ${list(agentIds.map((id) => encodeId("agent", id)))}`] : []),
    ...(profiles.length > 0 ? [`the current config of agent profile${profiles.length > 1 ? "s" : ""} ${list(profiles.map((name) => JSON.stringify(name)))}`] : []),
  ];
  return parts.length > 0 ? parts.join(" and ") : undefined;
}

function nameTaken(name: string): AppError {
  return conflict(`a memory store named "${name}" already exists in this project`);
}
