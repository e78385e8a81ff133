import type { RegistryIcon, RegistryRemote } from "../../db/schema/index.js";
import { storableText } from "../../platform/storable.js";

/**
 * One page of an MCP registry's `GET /v0.1/servers` (the official registry's API), read as hostile input
 * at this one place: every field is checked, sizes are bounded, and an entry that is not usable is left
 * out rather than failing the page. An entry svc keeps is the latest version of an active server with at
 * least one `streamable-http` remote; any other entry it names is one to drop from the snapshot.
 */

export interface SnapshotServer {
  name: string;
  title: string | undefined;
  description: string;
  version: string;
  websiteUrl: string | undefined;
  status: string;
  updatedAt: Date;
  remotes: RegistryRemote[];
  icons: RegistryIcon[];
}

export interface RegistryPage {
  keep: SnapshotServer[];
  /** Names the registry lists as deprecated, deleted, or without a streamable-http remote. */
  drop: string[];
  nextCursor: string | undefined;
  /** The newest `updatedAt` on the page: where the next incremental pass may start. */
  newest: Date | undefined;
}

const OFFICIAL = "io.modelcontextprotocol.registry/official";
const MAX_ENTRIES = 500;
const MAX_CURSOR = 1024;
const MAX_URL = 2048;
const LIST_LIMIT = 16;

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value);

/** A string of 1 to `max` characters (NUL and lone surrogates replaced), or undefined. */
function text(value: unknown, max: number): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= max ? storableText(value) : undefined;
}

function httpUrl(value: unknown, schemes = ["http:", "https:"]): string | undefined {
  const raw = text(value, MAX_URL);
  if (!raw) return undefined;
  try {
    return schemes.includes(new URL(raw).protocol) ? raw : undefined;
  } catch {
    return undefined;
  }
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value.slice(0, LIST_LIMIT) : [];
}

function flag(value: unknown): boolean {
  return value === true;
}

function date(value: unknown): Date | undefined {
  const parsed = typeof value === "string" && value.length <= 64 ? new Date(value) : undefined;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed : undefined;
}

/** Throws when the body is not a server list at all; that page is retried, not applied. */
export function readRegistryPage(body: unknown): RegistryPage {
  if (!isObj(body) || !Array.isArray(body["servers"])) throw new Error("the registry answered with something other than a server list");
  const entries = body["servers"];
  if (entries.length > MAX_ENTRIES) throw new Error(`the registry answered with ${entries.length} servers in one page; at most ${MAX_ENTRIES} are read`);
  // By name, the last entry winning: a page that names a server twice must still be one upsert per row.
  const byName = new Map<string, SnapshotServer | null>();
  let newest: Date | undefined;
  for (const raw of entries) {
    const read = readEntry(raw);
    if (!read) continue;
    if (read.updatedAt && (!newest || read.updatedAt > newest)) newest = read.updatedAt;
    byName.set(read.name, read.server ?? null);
  }
  const page: RegistryPage = { keep: [], drop: [], nextCursor: undefined, newest };
  for (const [name, server] of byName) {
    if (server) page.keep.push(server);
    else page.drop.push(name);
  }
  const metadata = isObj(body["metadata"]) ? body["metadata"] : {};
  const cursor = metadata["nextCursor"];
  if (typeof cursor === "string" && cursor.length > MAX_CURSOR) throw new Error("the registry's next cursor is too long");
  page.nextCursor = typeof cursor === "string" && cursor.length > 0 ? cursor : undefined;
  return page;
}

function readEntry(raw: unknown): { name: string; updatedAt: Date | undefined; server?: SnapshotServer } | undefined {
  if (!isObj(raw) || !isObj(raw["server"])) return undefined;
  const server = raw["server"];
  const name = text(server["name"], 200);
  if (!name) return undefined;
  const meta = isObj(raw["_meta"]) && isObj(raw["_meta"][OFFICIAL]) ? raw["_meta"][OFFICIAL] : {};
  // A registry without the official extension lists only what it serves: active, latest.
  if (meta["isLatest"] === false) return undefined;
  const status = text(meta["status"], 32) ?? "active";
  const updatedAt = date(meta["updatedAt"]) ?? date(meta["publishedAt"]);
  const remotes = list(server["remotes"]).flatMap((remote) => readRemote(remote) ?? []);
  const description = text(server["description"], 2000);
  const version = text(server["version"], 255);
  if (status !== "active" || remotes.length === 0 || !description || !version) return { name, updatedAt };
  return {
    name,
    updatedAt,
    server: {
      name,
      title: text(server["title"], 200),
      description,
      version,
      websiteUrl: httpUrl(server["websiteUrl"]),
      status,
      updatedAt: updatedAt ?? new Date(0),
      remotes,
      icons: list(server["icons"]).flatMap((icon) => readIcon(icon) ?? []),
    },
  };
}

function readRemote(raw: unknown): RegistryRemote | undefined {
  if (!isObj(raw) || raw["type"] !== "streamable-http") return undefined;
  const url = httpUrl(raw["url"]);
  if (!url) return undefined;
  const headers = list(raw["headers"]).flatMap((header) => {
    if (!isObj(header)) return [];
    const name = text(header["name"], 200);
    if (!name) return [];
    const description = text(header["description"], 1000);
    return [{ name, ...(description ? { description } : {}), is_required: flag(header["isRequired"]), is_secret: flag(header["isSecret"]) }];
  });
  return { type: "streamable-http", url, ...(headers.length > 0 ? { headers } : {}) };
}

function readIcon(raw: unknown): RegistryIcon | undefined {
  if (!isObj(raw)) return undefined;
  const src = httpUrl(raw["src"], ["https:"]);
  if (!src) return undefined;
  const mimeType = text(raw["mimeType"], 100);
  const sizes = list(raw["sizes"]).flatMap((size) => text(size, 32) ?? []);
  const theme = text(raw["theme"], 16);
  return { src, ...(mimeType ? { mime_type: mimeType } : {}), ...(sizes.length > 0 ? { sizes } : {}), ...(theme ? { theme } : {}) };
}
