import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { MemoryRow, MemoryStoreRow, MemoryWithContentRow, VersionRow, VersionWithContentRow } from "./store.js";

export function memoryStoreView(row: MemoryStoreRow) {
  return {
    id: encodeId("memoryStore", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    name: row.name,
    description: row.description,
    writable: row.writable,
    metadata: row.metadata,
    memory_count: row.memoryCount,
    size_bytes: row.sizeBytes,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function memoryView(row: MemoryRow) {
  return {
    id: encodeId("memory", row.id),
    memory_store_id: encodeId("memoryStore", row.memoryStoreId),
    path: row.path,
    digest: row.digest,
    size_bytes: row.sizeBytes,
    version: row.currentVersion,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function memoryWithContentView(row: MemoryWithContentRow) {
  return { ...memoryView(row), content: row.content };
}

const WRITER_ID_KIND = { user: "user", api_key: "orgApiKey", agent: "agent" } as const;

export function memoryVersionView(row: VersionRow) {
  return {
    version: row.version,
    deleted: row.digest === null,
    digest: row.digest,
    size_bytes: row.sizeBytes,
    written_by: { kind: row.writerKind, id: encodeId(WRITER_ID_KIND[row.writerKind], row.writerId) },
    ...(row.agentId === null ? {} : { agent_id: encodeId("agent", row.agentId) }),
    ...(row.toolCallId === null ? {} : { tool_call_id: encodeId("toolCall", row.toolCallId) }),
    created_at: iso(row.createdAt),
  };
}

export function memoryVersionWithContentView(row: VersionWithContentRow) {
  return { ...memoryVersionView(row), content: row.content };
}
