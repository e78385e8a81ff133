import { and, asc, desc, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { Type } from "typebox";
import { invalidRequest } from "../errors.js";
import { isUuid } from "../ids.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const Limit = Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE });
export const Cursor = Type.String({ minLength: 1, maxLength: 1024 });
export const NameFilter = Type.String({ minLength: 1, maxLength: 200 });

export const RESOURCE_SORTS = ["name", "-name", "-updated_at", "updated_at", "-created_at", "created_at"] as const;
export const GRANT_SORTS = ["name", "-name", "-created_at", "created_at"] as const;
export const ResourceSort = Type.Enum([...RESOURCE_SORTS], { default: "-created_at" });
export const GrantSort = Type.Enum([...GRANT_SORTS], { default: "-created_at" });

/** One page asked for: its size, where to continue, and the order. */
export interface PageRequest {
  limit: number;
  cursor?: string;
  sort: Sort;
}

/** The page a validated list query asks for, with the defaults filled in. */
export function pageOf(query: { limit?: number; cursor?: string; sort?: string }, defaultSort: Sort = "-created_at"): PageRequest {
  return { limit: query.limit ?? DEFAULT_PAGE_SIZE, cursor: query.cursor, sort: (query.sort as Sort | undefined) ?? defaultSort };
}

/** Query parameters shared by paged lists. */
export const pageQuery = { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) };
export const namedPageQuery = { ...pageQuery, name: Type.Optional(NameFilter) };

export type SortKey = "name" | "created_at" | "updated_at";
export type Sort = `${"" | "-"}${SortKey}`;

/** The columns a list orders by: its logical name, its timestamps, and the id that breaks ties. */
export interface SortColumns {
  name?: AnyColumn | SQL;
  created_at: AnyColumn | SQL;
  updated_at?: AnyColumn | SQL;
  id: AnyColumn | SQL;
}

/** What a row contributes to a cursor: the sort value and the id. */
export interface CursorPosition {
  value: string | Date;
  id: string;
}

interface CursorData {
  s: string;
  v: string;
  i: string;
}

/**
 * Keyset paging. `(sort value, id)` is compared as a row, both in the sort's direction, so a page
 * continues exactly after the last row returned even when rows are added or removed meanwhile.
 * Name ordering is by code point (COLLATE "C"), identical on every database whatever its locale.
 */
export function keyset(sort: Sort, columns: SortColumns, cursor: string | undefined) {
  const descending = sort.startsWith("-");
  const key = (descending ? sort.slice(1) : sort) as SortKey;
  const column = columns[key];
  if (!column) throw invalidRequest(`this list cannot be sorted by ${key}`);
  const ordered = key === "name" ? sql`${column} COLLATE "C"` : sql`${column}`;
  const orderBy = descending ? [desc(ordered), desc(columns.id)] : [asc(ordered), asc(columns.id)];
  let where: SQL | undefined;
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, sort);
    const value = key === "name" ? sql`${position.v} COLLATE "C"` : sql`${position.v}::timestamptz`;
    where = descending
      ? sql`(${ordered}, ${columns.id}) < (${value}, ${position.i}::uuid)`
      : sql`(${ordered}, ${columns.id}) > (${value}, ${position.i}::uuid)`;
  }
  return { where, orderBy, sortKey: key };
}

/** Cuts a page from `limit + 1` fetched rows and makes the cursor for the next one. */
export function toPage<Row, Item>(
  rows: Row[],
  limit: number,
  sort: Sort,
  position: (row: Row) => CursorPosition,
  present: (row: Row) => Item,
): { data: Item[]; next_cursor: string | null } {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows.at(-1);
  return {
    data: pageRows.map(present),
    next_cursor: hasMore && last ? encodeCursor(sort, position(last)) : null,
  };
}

export function encodeCursor(sort: string, position: CursorPosition): string {
  const value = position.value instanceof Date ? position.value.toISOString() : position.value;
  const data: CursorData = { s: sort, v: value, i: position.id };
  return encodeOpaqueCursor(data);
}

/** A cursor is JSON in base64url: opaque to clients, and checked field by field when it comes back. */
export function encodeOpaqueCursor(data: object): string {
  return Buffer.from(JSON.stringify(data)).toString("base64url");
}

/** The JSON inside a cursor (400 invalid_request when it is not JSON); the caller checks its fields. */
export function decodeOpaqueCursor(cursor: string): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof data === "object" && data !== null) return data as Record<string, unknown>;
  } catch {
    // Falls through to the error below.
  }
  throw invalidRequest("cursor is not valid");
}

function decodeCursor(cursor: string, sort: string): CursorData {
  const { s, v, i } = decodeOpaqueCursor(cursor);
  if (typeof s !== "string" || typeof v !== "string" || !isUuid(i)) throw invalidRequest("cursor is not valid");
  if (s !== sort) throw invalidRequest("cursor was made for another sort order; start again without a cursor");
  if (!s.endsWith("name") && Number.isNaN(Date.parse(v))) throw invalidRequest("cursor is not valid");
  return { s, v, i };
}

/**
 * The spec's name glob as a LIKE pattern: `*` is any run, `?` one character, a backslash makes the
 * next character literal; LIKE's own `%` and `_` are escaped. Matching is case-insensitive (ILIKE).
 */
export function globToLike(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "\\") {
      const next = glob[i + 1];
      if (next === undefined) {
        out += "\\\\";
      } else {
        out += escapeLike(next);
        i++;
      }
    } else if (ch === "*") {
      out += "%";
    } else if (ch === "?") {
      out += "_";
    } else {
      out += escapeLike(ch);
    }
  }
  return out;
}

function escapeLike(ch: string): string {
  return ch === "%" || ch === "_" || ch === "\\" ? `\\${ch}` : ch;
}

export function nameMatches(column: AnyColumn | SQL, glob: string | undefined): SQL | undefined {
  if (glob === undefined) return undefined;
  return sql`${column} ILIKE ${globToLike(glob)} ESCAPE '\\'`;
}

export function allOf(...conditions: Array<SQL | undefined>): SQL | undefined {
  return and(...conditions.filter((c): c is SQL => c !== undefined));
}

/** The value a row is ordered by under `sort`, for its cursor. */
export function sortValue(sort: Sort, row: { name?: string; createdAt: Date; updatedAt?: Date }): string | Date {
  const key = sort.replace(/^-/, "");
  if (key === "name" && row.name !== undefined) return row.name;
  if (key === "updated_at" && row.updatedAt !== undefined) return row.updatedAt;
  return row.createdAt;
}
