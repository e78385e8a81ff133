import type { Tx } from "../../platform/db/index.js";
import type { MemoryAccessMode, MemoryAttachmentDefinition } from "../../runtime/definition.js";
import { describe, has, isObject, text, unknownKeys } from "./fields.js";
import type { ConfigIssues } from "./issues.js";
import { findStoresByName } from "../memory-stores/store.js";

/**
 * The `memory` section (issue 31, item 2): the project's memory stores the agent reaches under
 * `/memory/<store>/` with the file tools (reference docs/tools/built-in.mdx, "Files"). Each entry names a
 * store and how the agent may use it: `read_write` (the default) or `read_only`. The names are resolved to
 * the stores' ids when the config is compiled; store names never change, so the definition keeps both.
 */

export interface MemoryChoice {
  store: string;
  access: MemoryAccessMode;
  index: number;
}

const ENTRY_KEYS = ["store", "access"];
const ACCESS: readonly MemoryAccessMode[] = ["read_write", "read_only"];
/** Each attached store is a note in the instruction; a handful is already a lot for a model to keep apart. */
export const MAX_MEMORY_STORES = 16;

export function readMemorySection(issues: ConfigIssues, value: unknown): MemoryChoice[] {
  if (!Array.isArray(value)) {
    issues.add(["memory"], `must be a list of memory stores such as {store: team-notes, access: read_write}; got ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_MEMORY_STORES) issues.add(["memory"], `at most ${MAX_MEMORY_STORES} memory stores; got ${value.length}`);
  const names = new Set<string>();
  const choices: MemoryChoice[] = [];
  value.forEach((entry: unknown, index) => {
    const path = ["memory", index];
    if (!isObject(entry)) {
      issues.add(path, `must be an object such as {store: team-notes, access: read_only}; got ${describe(entry)}`);
      return;
    }
    const before = issues.count;
    unknownKeys(issues, path, entry, ENTRY_KEYS);
    const store = has(entry, "store") ? text(issues, [...path, "store"], entry["store"], 64) : undefined;
    if (!has(entry, "store")) issues.add([...path, "store"], "is required: the name of a memory store of this project");
    let access: MemoryAccessMode = "read_write";
    if (has(entry, "access")) {
      if (ACCESS.includes(entry["access"] as MemoryAccessMode)) access = entry["access"] as MemoryAccessMode;
      else issues.add([...path, "access"], `must be one of: ${ACCESS.join(", ")}; got ${describe(entry["access"])}`);
    }
    if (store !== undefined && names.has(store)) {
      issues.add([...path, "store"], `memory store "${store}" is listed twice`);
      return;
    }
    if (store !== undefined) names.add(store);
    if (issues.count === before && store !== undefined) choices.push({ store, access, index });
  });
  return choices;
}

/**
 * The chosen stores as the definition keeps them, in the order written. A name that is no store of the
 * project is an issue at its entry's `store`. The rows are read FOR KEY SHARE, so a store deleted at the
 * same moment is either seen gone here or waits for this compile to commit.
 */
export async function resolveMemoryStores(tx: Tx, orgId: string, projectId: string, choices: readonly MemoryChoice[], issues: ConfigIssues): Promise<MemoryAttachmentDefinition[]> {
  if (choices.length === 0) return [];
  const rows = await findStoresByName(tx, orgId, projectId, choices.map((c) => c.store));
  const byName = new Map(rows.map((row) => [row.name, row.id]));
  const attached: MemoryAttachmentDefinition[] = [];
  for (const choice of choices) {
    const storeId = byName.get(choice.store);
    if (storeId === undefined) issues.add(["memory", choice.index, "store"], `no memory store named "${choice.store}" exists in this project`);
    else attached.push({ storeId, name: choice.store, access: choice.access });
  }
  return attached;
}
