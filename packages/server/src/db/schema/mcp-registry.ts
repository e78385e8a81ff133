import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { optionalTime, requiredTime } from "./columns.js";

/** A streamable-http remote as the API shows it (registry field names in snake case). */
export interface RegistryRemote {
  type: string;
  url: string;
  headers?: Array<{ name: string; description?: string; is_required: boolean; is_secret: boolean }>;
}

export interface RegistryIcon {
  src: string;
  mime_type?: string;
  sizes?: string[];
  theme?: string;
}

/**
 * svc's snapshot of an MCP registry (docs/mcp.md): the latest version of every active server with a
 * streamable-http remote, one row per registry name. The `*_words` columns hold each field's words,
 * lowercased, each preceded by a space, so `LIKE '% term%'` is a word-prefix match; `remote_keys`
 * holds the remote URLs normalized for `remote_url` (no scheme, lowercase, no trailing slash).
 */
export const mcpRegistryServers = pgTable(
  "mcp_registry_servers",
  {
    name: text("name").primaryKey(),
    title: text("title"),
    description: text("description").notNull(),
    version: text("version").notNull(),
    websiteUrl: text("website_url"),
    status: text("status").notNull(),
    /** When the registry last changed the entry (its own clock). */
    registryUpdatedAt: requiredTime("registry_updated_at"),
    remotes: jsonb("remotes").$type<RegistryRemote[]>().notNull(),
    icons: jsonb("icons").$type<RegistryIcon[]>().notNull(),
    nameWords: text("name_words").notNull(),
    titleWords: text("title_words").notNull(),
    descriptionWords: text("description_words").notNull(),
    urlWords: text("url_words").notNull(),
    remoteKeys: text("remote_keys").array().notNull(),
    /** The sync pass that last wrote the row; a finished full pass deletes rows of older ones. */
    pass: integer("pass").notNull(),
  },
  (t) => [index("mcp_registry_servers_remote_keys").using("gin", t.remoteKeys), index("mcp_registry_servers_name_c").on(sql`${t.name} COLLATE "C"`)],
);

/**
 * Where the sync of the snapshot stands: one row. A pass walks the registry's pages with `cursor`
 * (null between passes); `full` passes list everything and end by deleting what they did not see,
 * incremental ones ask for what changed since `updatedSince`.
 */
export const mcpRegistrySync = pgTable("mcp_registry_sync", {
  id: integer("id").primaryKey(),
  sourceUrl: text("source_url"),
  pass: integer("pass").notNull(),
  full: boolean("full").notNull(),
  /** A pass is under way: its pages are being read. */
  open: boolean("open").notNull(),
  cursor: text("cursor"),
  /** The newest `updatedAt` the registry has shown; the next incremental pass starts there. */
  updatedSince: optionalTime("updated_since"),
  /** When the last pass finished (database clock); the next starts an hour later. */
  lastPassAt: optionalTime("last_pass_at"),
});
