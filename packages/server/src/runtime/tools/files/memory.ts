import type { Tx } from "../../../platform/db/index.js";
import type { AgentDefinition, MemoryAttachmentDefinition } from "../../definition.js";

/*
 * What the engine needs of memory stores (issue 31, item 2), declared here and implemented by the
 * memory-stores module (modules/memory-stores/agent-port.ts), which is handed to the worker where the app
 * is composed. The file tools reach a store only through the agent's definition: its `memory` section
 * names the stores by id, and a store of another project is never looked up.
 */

/** A store as the agent sees it. */
export interface MemoryStoreFacts {
  storeId: string;
  name: string;
  description: string;
  writable: boolean;
  memoryCount: number;
  sizeBytes: number;
}

export interface MemoryFileFacts {
  path: string;
  sizeBytes: number;
  digest: string;
  updatedAt: Date;
}

export interface MemoryFile extends MemoryFileFacts {
  memoryId: string;
  version: number;
  content: string;
}

/** One change an agent's `write_file` (or memory upload) makes, applied in the tool call's own transaction. */
export interface MemoryWrite {
  storeId: string;
  path: string;
  /** `replace` writes `content`; `append` adds it to the current content (creating the file). */
  mode: "replace" | "append";
  content: string;
  /** The file's digest the change was made against; a different current digest is a conflict. */
  expectedDigest?: string;
  agentId: string;
  toolCallId: string;
}

export type MemoryWriteResult =
  | { ok: true; path: string; digest: string; sizeBytes: number; version: number; created: boolean; changed: boolean }
  | { ok: false; reason: "conflict"; message: string; currentDigest?: string }
  | { ok: false; reason: "refused"; message: string };

export interface MemoryPort {
  /** The stores among `storeIds` that still exist in the project, in no particular order. */
  stores(orgId: string, projectId: string, storeIds: readonly string[]): Promise<MemoryStoreFacts[]>;
  /** Live files of the store whose path starts with `prefix`, in path order, at most `take`. */
  listFiles(storeId: string, prefix: string, take: number): Promise<MemoryFileFacts[]>;
  /** The live file at `path`, or undefined; read in `tx` when given. */
  readFile(storeId: string, path: string, tx?: Tx): Promise<MemoryFile | undefined>;
  /** Applies a write inside `tx` (the transaction that records the tool call's result). */
  write(tx: Tx, orgId: string, projectId: string, change: MemoryWrite): Promise<MemoryWriteResult>;
}

/** The memory stores the definition attaches; empty for configs without a `memory` section. */
export function attachedStores(definition: AgentDefinition): MemoryAttachmentDefinition[] {
  return definition.memory ?? [];
}

/**
 * The note the instruction gains for the attached stores: one line per store with its name, description
 * and the agent's access. Stores deleted since the config was compiled are left out.
 */
export function memoryNotes(attached: readonly MemoryAttachmentDefinition[], stores: readonly MemoryStoreFacts[]): string[] {
  const byId = new Map(stores.map((store) => [store.storeId, store]));
  const lines = attached.flatMap((entry) => {
    const store = byId.get(entry.storeId);
    if (!store) return [];
    const access = entry.access === "read_only" ? "read-only" : store.writable ? "read-write" : "read-only (the store is not writable)";
    return [`- /memory/${entry.name}/ (${access})${store.description ? `: ${store.description}` : ""}`];
  });
  if (lines.length === 0) return [];
  return [
    "## Memory\n\nThese memory stores are attached to you; their files outlive this conversation and other agents may share them. " +
      "Use list_files, read_file and search_files on /memory/<store>/…, and write_file where you have write access.\n\n" +
      lines.join("\n"),
  ];
}
