import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An MCP registry speaking the official registry's `GET /v0.1/servers` (modelcontextprotocol/registry,
 * docs/reference/api/openapi.yaml): `{servers: [{server, _meta}], metadata: {nextCursor, count}}`, an
 * opaque cursor, `limit` (at most 100), `version=latest`, `updated_since` (which also lists deleted
 * servers) and `include_deleted`. Every request's query is recorded.
 */

const OFFICIAL = "io.modelcontextprotocol.registry/official";

export interface EntryOptions {
  title?: string;
  description?: string;
  version?: string;
  remotes?: Array<{ type: string; url: string; headers?: unknown[] }>;
  packages?: unknown[];
  icons?: unknown[];
  websiteUrl?: string;
  status?: "active" | "deprecated" | "deleted";
  isLatest?: boolean;
  updatedAt?: string;
}

/** One `ServerResponse` as the official registry writes it. */
export function registryEntry(name: string, options: EntryOptions = {}) {
  const { status = "active", isLatest = true, updatedAt = "2026-01-01T00:00:00Z", description = `The ${name} server.`, version = "1.0.0", ...rest } = options;
  return {
    server: {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name,
      description,
      version,
      ...(rest.remotes === undefined && rest.packages === undefined ? { remotes: [{ type: "streamable-http", url: `https://${name.replace("/", ".")}.test/mcp` }] } : {}),
      ...rest,
    },
    _meta: { [OFFICIAL]: { status, isLatest, publishedAt: "2025-12-01T00:00:00Z", updatedAt } },
  };
}

export type RegistryEntry = ReturnType<typeof registryEntry>;

export interface FakeRegistry {
  url: string;
  /** The query of every request to `/v0.1/servers`, in order. */
  requests: URLSearchParams[];
  entries: RegistryEntry[];
  close(): Promise<void>;
  failing: boolean;
}

const official = (entry: RegistryEntry) => entry._meta[OFFICIAL]!;

export async function startFakeRegistry(entries: RegistryEntry[] = []): Promise<FakeRegistry> {
  const requests: URLSearchParams[] = [];
  const registry = { entries, failing: false };
  const http: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://registry.test");
    if (req.method !== "GET" || url.pathname !== "/v0.1/servers") return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    requests.push(url.searchParams);
    if (registry.failing) return void res.writeHead(503, { "content-type": "application/json" }).end('{"error":"unavailable"}');
    const query = url.searchParams;
    const since = query.get("updated_since");
    const includeDeleted = since !== null || query.get("include_deleted") === "true";
    const listed = registry.entries
      .filter((e) => query.get("version") !== "latest" || official(e).isLatest)
      .filter((e) => since === null || Date.parse(official(e).updatedAt) >= Date.parse(since))
      .filter((e) => includeDeleted || official(e).status !== "deleted")
      .map((e) => ({ key: `${e.server.name}@${e.server.version}`, entry: e }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const cursor = query.get("cursor");
    const after = cursor === null ? undefined : Buffer.from(cursor, "base64url").toString("utf8");
    const limit = Math.min(Number(query.get("limit") ?? 30), 100);
    const rest = after === undefined ? listed : listed.filter((item) => item.key > after);
    const page = rest.slice(0, limit);
    const more = rest.length > limit;
    const body = {
      servers: page.map((item) => item.entry),
      metadata: { count: page.length, ...(more ? { nextCursor: Buffer.from(page.at(-1)!.key).toString("base64url") } : {}) },
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get entries() {
      return registry.entries;
    },
    set entries(value) {
      registry.entries = value;
    },
    /** Answers every listing with 503 while true. */
    get failing() {
      return registry.failing;
    },
    set failing(value: boolean) {
      registry.failing = value;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
