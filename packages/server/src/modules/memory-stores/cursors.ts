import { decodeOpaqueCursor, encodeOpaqueCursor } from "../../platform/http/lists.js";
import { invalidRequest } from "../../platform/errors.js";
import { isUuid } from "../../platform/ids.js";
import type { MemoryPosition } from "./store.js";

/*
 * Cursors of the memory lists, decoded and encoded here at the edge: a memory list continues after a
 * path, a search after a rank and id, a version list before a version.
 */

export function decodeMemoryCursor(cursor: string | undefined, searching: boolean): MemoryPosition | undefined {
  if (cursor === undefined) return undefined;
  const data = decodeOpaqueCursor(cursor);
  if (searching && typeof data.r === "number" && Number.isFinite(data.r) && isUuid(data.i)) return { rank: data.r, id: data.i };
  if (!searching && typeof data.p === "string") return { path: data.p };
  throw invalidRequest("cursor is not valid for this list; start again without a cursor");
}

export function encodeMemoryCursor(last: { path: string; rank: number; id: string }, searching: boolean): string {
  return encodeOpaqueCursor(searching ? { r: last.rank, i: last.id } : { p: last.path });
}

export function decodeVersionCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const { v } = decodeOpaqueCursor(cursor);
  if (typeof v === "number" && Number.isInteger(v) && v > 1) return v;
  throw invalidRequest("cursor is not valid");
}

export function encodeVersionCursor(version: number): string {
  return encodeOpaqueCursor({ v: version });
}

/** Cuts a page from `limit + 1` rows: the page and, when more follow, the last row to continue after. */
export function cutPage<Row>(rows: Row[], limit: number): { page: Row[]; last: Row | undefined } {
  const page = rows.slice(0, limit);
  return { page, last: rows.length > limit ? page.at(-1) : undefined };
}
