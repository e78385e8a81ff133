import { sql } from "drizzle-orm";
import { bigint, boolean, check, customType, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, updatedAt } from "./columns.js";
import { projects } from "./orgs.js";

/*
 * Memory: named stores of UTF-8 text files in a project, every change kept as an immutable version.
 * Rows carry org_id and point at their parents through (org_id, id), so nothing references another
 * org's rows; deleting a project cascades.
 */

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

/**
 * Full-text search reads only the first this-many characters of a file: a tsvector holds at most 1 MB,
 * and a 10 MiB file of distinct words would exceed it and fail the write. The path is always searched,
 * its `/` and `.` read as spaces: the parser would otherwise take `notes/deploy.md` as one file token.
 */
const MEMORY_SEARCH_CHARS = 100_000;

/** `memory_count` and `size_bytes` count the live files; writes lock the store row and keep them exact. */
export const memoryStores = pgTable(
  "memory_stores",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    writable: boolean("writable").notNull().default(true),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    memoryCount: integer("memory_count").notNull().default(0),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("memory_stores_org_id_id").on(t.orgId, t.id),
    unique("memory_stores_project_name").on(t.projectId, t.name),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    check("memory_stores_counts", sql`${t.memoryCount} >= 0 AND ${t.sizeBytes} >= 0`),
    index("memory_stores_project_created_idx").on(t.projectId, t.createdAt, t.id),
  ],
);

/**
 * A file at a path of its store: its current content, or a tombstone (`deleted_at` set, empty content)
 * once deleted, so its history stays addressable and writing the path again continues the same versions.
 */
export const memories = pgTable(
  "memories",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    memoryStoreId: uuid("memory_store_id").notNull(),
    path: text("path").notNull(),
    content: text("content").notNull(),
    digest: text("digest").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    currentVersion: integer("current_version").notNull(),
    search: tsvector("search")
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('simple'::regconfig, translate(path, '/.', '  ') || ' ' || left(content, ${sql.raw(String(MEMORY_SEARCH_CHARS))}))`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: optionalTime("deleted_at"),
  },
  (t) => [
    unique("memories_org_id_id").on(t.orgId, t.id),
    unique("memories_store_path").on(t.memoryStoreId, t.path),
    foreignKey({ columns: [t.orgId, t.memoryStoreId], foreignColumns: [memoryStores.orgId, memoryStores.id] }).onDelete("cascade"),
    index("memories_search_idx").using("gin", t.search),
  ],
);

/** Every write and delete of a memory, immutable. A delete has no content or digest. */
export const memoryVersions = pgTable(
  "memory_versions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    memoryId: uuid("memory_id").notNull(),
    version: integer("version").notNull(),
    content: text("content"),
    digest: text("digest"),
    sizeBytes: integer("size_bytes").notNull(),
    writerKind: text("writer_kind").$type<"user" | "agent" | "api_key">().notNull(),
    writerId: uuid("writer_id").notNull(),
    /** Set by a write from an agent's tool call; the API's own writes leave both null. */
    agentId: uuid("agent_id"),
    toolCallId: uuid("tool_call_id"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("memory_versions_memory_version").on(t.memoryId, t.version),
    foreignKey({ columns: [t.orgId, t.memoryId], foreignColumns: [memories.orgId, memories.id] }).onDelete("cascade"),
    check("memory_versions_writer_kind", sql`${t.writerKind} IN ('user', 'agent', 'api_key')`),
    check("memory_versions_delete_shape", sql`(${t.content} IS NULL) = (${t.digest} IS NULL)`),
  ],
);
