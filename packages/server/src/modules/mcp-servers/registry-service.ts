import { createHash } from "node:crypto";
import type { Database } from "../../platform/db/index.js";
import { invalidRequest } from "../../platform/errors.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../../platform/http/lists.js";
import { iso } from "../../platform/http/schemas.js";
import type { McpRegistryServer } from "./schemas.js";
import type { Static } from "typebox";
import { remoteKey, wordsOf } from "./registry-words.js";
import * as store from "./store.js";

/** More words than any name or title has; each costs four LIKE scans per row. */
const MAX_TERMS = 16;

export interface ServerSearch {
  q: string | undefined;
  remoteUrl: string | undefined;
  limit: number;
  cursor: string | undefined;
}

/**
 * `GET /mcp-servers` over the registry snapshot (docs/mcp.md): `q` ranks by relevance, without it the
 * order is by name; `remote_url` filters. A cursor holds the last rank and name and a digest of the
 * search it belongs to, so it cannot continue another search.
 */
export function createMcpRegistryService(deps: { db: Database }) {
  const { db } = deps;
  return {
    async listServers(search: ServerSearch): Promise<{ data: Array<Static<typeof McpRegistryServer>>; next_cursor: string | null }> {
      const terms = [...new Set(wordsOf(search.q ?? ""))];
      if (terms.length > MAX_TERMS) throw invalidRequest(`q has ${terms.length} words; at most ${MAX_TERMS} are searched`);
      const key = search.remoteUrl === undefined ? undefined : remoteKey(search.remoteUrl);
      const digest = createHash("sha256").update(JSON.stringify([terms, key ?? null])).digest("base64url").slice(0, 16);
      const after = search.cursor === undefined ? undefined : decodePosition(search.cursor, digest);
      const rows = await store.listServers(db.read, { terms, remoteKey: key, after, limit: search.limit });
      const page = rows.slice(0, search.limit);
      const last = page.at(-1);
      return {
        data: page.map(serverView),
        next_cursor: rows.length > search.limit && last ? encodeOpaqueCursor({ d: digest, r: last.rank, n: last.name }) : null,
      };
    },
  };
}

export type McpRegistryService = ReturnType<typeof createMcpRegistryService>;

function decodePosition(cursor: string, digest: string): { rank: number; name: string } {
  const { d, r, n } = decodeOpaqueCursor(cursor);
  if (typeof d !== "string" || !Number.isInteger(r) || typeof n !== "string") throw invalidRequest("cursor is not valid");
  if (d !== digest) throw invalidRequest("cursor was made for another search; start again without a cursor");
  return { rank: r as number, name: n };
}

function serverView(row: store.RegistryServerRow): Static<typeof McpRegistryServer> {
  return {
    name: row.name,
    ...(row.title === null ? {} : { title: row.title }),
    description: row.description,
    version: row.version,
    ...(row.websiteUrl === null ? {} : { website_url: row.websiteUrl }),
    status: row.status,
    updated_at: iso(row.registryUpdatedAt),
    remotes: row.remotes,
    icons: row.icons,
  };
}
