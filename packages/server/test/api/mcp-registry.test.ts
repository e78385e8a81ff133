import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { Writable } from "node:stream";
import pino from "pino";
import { startMaintenance } from "../../src/maintenance.js";
import { mcpRegistrySync, syncRegistry } from "../../src/modules/mcp-servers/registry-sync.js";
import { registryEntry, startFakeRegistry, type FakeRegistry } from "../support/fake-mcp-registry.js";
import { collectPages } from "../support/paging.js";
import { startTestServer, type TestServer } from "../support/server.js";

const SHIPPED = [
  "ai.exa/exa",
  "app.linear/linear",
  "com.figma.mcp/mcp",
  "com.notion/mcp",
  "com.stripe/mcp",
  "com.supabase/mcp",
  "com.vercel/vercel-mcp",
  "io.github.github/github-mcp-server",
];

const names = (items: Array<{ name: string }>) => items.map((item) => item.name);
const sync = (server: TestServer) => syncRegistry(server.db, server.config);

async function list(server: TestServer, token: string, query = "") {
  const reply = await server.api.get(`/api/v1/mcp-servers${query}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { data: any[]; next_cursor: string | null };
}

async function tokenOn(server: TestServer): Promise<string> {
  return (await server.api.userWithOrg()).token;
}

describe("the snapshot svc ships with", () => {
  let registry: FakeRegistry;
  let server: TestServer;
  beforeAll(async () => {
    registry = await startFakeRegistry([registryEntry("io.example/never-read")]);
    // The registry is on loopback and the private network is not allowed: svc cannot reach it.
    server = await startTestServer({ SVC_MCP_REGISTRY_URL: registry.url, SVC_ALLOW_PRIVATE_NETWORK: "false" });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  it("answers from the shipped snapshot when the registry cannot be reached, and the SSRF guard keeps the registry URL in check", async () => {
    const token = await tokenOn(server);
    expect((await list(server, token)).data).toEqual([]);
    await expect(sync(server)).rejects.toThrow(/SVC_ALLOW_PRIVATE_NETWORK/);
    expect(registry.requests).toHaveLength(0);

    const page = await list(server, token);
    expect(names(page.data)).toEqual(SHIPPED);
    expect(page.next_cursor).toBeNull();
    expect(page.data[1]).toEqual({
      name: "app.linear/linear",
      title: "Linear",
      description: expect.any(String),
      version: expect.any(String),
      website_url: "https://linear.app",
      status: "active",
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      remotes: [{ type: "streamable-http", url: "https://mcp.linear.app/mcp" }],
      icons: [],
    });
    expect(names((await list(server, token, "?remote_url=MCP.linear.app/mcp/")).data)).toEqual(["app.linear/linear"]);
    // Loaded once: a second run neither loads it again nor reaches the registry.
    await expect(sync(server)).rejects.toThrow(/SVC_ALLOW_PRIVATE_NETWORK/);
    expect(names((await list(server, token)).data)).toEqual(SHIPPED);
  });

  it("needs an authenticated caller", async () => {
    expect((await server.api.get("/api/v1/mcp-servers")).status).toBe(401);
  });
});

describe("syncing with a registry", () => {
  let registry: FakeRegistry;
  let server: TestServer;
  // A minute apart, the last at 08:59 on 2025-01-01: the newest change the first pass sees.
  const many = Array.from({ length: 540 }, (_, i) =>
    registryEntry(`io.bulk/server-${String(i).padStart(3, "0")}`, { updatedAt: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString() }),
  );
  const older = "2024-12-01T00:00:00Z";
  const filtered = [
    registryEntry("io.skip/deprecated", { status: "deprecated", updatedAt: older }),
    registryEntry("io.skip/sse-only", { remotes: [{ type: "sse", url: "https://sse.example/sse" }], updatedAt: older }),
    registryEntry("io.skip/package-only", { packages: [{ registryType: "npm", identifier: "@skip/server", transport: { type: "stdio" } }], updatedAt: older }),
    registryEntry("io.skip/deleted", { status: "deleted", updatedAt: older }),
    registryEntry("io.keep/versions", { version: "1.0.0", isLatest: false, description: "Old version.", updatedAt: older }),
    registryEntry("io.keep/versions", {
      version: "2.0.0",
      updatedAt: older,
      description: "New version.",
      title: "Versions",
      websiteUrl: "https://versions.example",
      remotes: [
        { type: "sse", url: "https://versions.example/sse" },
        { type: "streamable-http", url: "https://versions.example/mcp", headers: [{ name: "X-Api-Key", description: "Your key", isRequired: true, isSecret: true }] },
      ],
      icons: [{ src: "https://versions.example/icon.png", mimeType: "image/png", sizes: ["48x48"] }, { src: "http://insecure.example/icon.png" }],
    }),
  ];
  beforeAll(async () => {
    registry = await startFakeRegistry([...many, ...filtered]);
    server = await startTestServer({ SVC_MCP_REGISTRY_URL: registry.url, SVC_ALLOW_PRIVATE_NETWORK: "true" });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  it("reads the registry a few pages per run, resumes where it stopped, and keeps only active streamable-http servers", async () => {
    const token = await tokenOn(server);
    // First run: the shipped snapshot, then at most five pages of a hundred; the six pages are not all read.
    const first = await sync(server);
    const pagesRead = registry.requests.length;
    expect(pagesRead).toBeGreaterThanOrEqual(1);
    expect(pagesRead).toBeLessThanOrEqual(5);
    expect(first).toBe(SHIPPED.length + 100 * pagesRead);
    const midway = await collectPages(server.api, "/api/v1/mcp-servers?limit=100", { token });
    expect(midway).toHaveLength(SHIPPED.length + 100 * pagesRead);

    // Later runs continue from the stored cursor: every page is asked for once, only the first without a cursor.
    for (let run = 0; run < 10 && registry.requests.length < 6; run += 1) await sync(server);
    expect(registry.requests.map((q) => q.get("cursor") !== null)).toEqual([false, true, true, true, true, true]);
    expect(new Set(registry.requests.map((q) => q.get("cursor"))).size).toBe(6);
    expect(registry.requests.every((q) => q.get("version") === "latest" && q.get("limit") === "100" && !q.has("updated_since"))).toBe(true);
    // The pass ended and removed what the registry does not list (the shipped servers).
    const all = await collectPages(server.api, "/api/v1/mcp-servers?limit=100", { token });
    expect(names(all)).toEqual([...many.map((e) => e.server.name), "io.keep/versions"]);
    expect(all.at(-1)).toEqual({
      name: "io.keep/versions",
      title: "Versions",
      description: "New version.",
      version: "2.0.0",
      website_url: "https://versions.example",
      status: "active",
      updated_at: "2024-12-01T00:00:00.000Z",
      remotes: [{ type: "streamable-http", url: "https://versions.example/mcp", headers: [{ name: "X-Api-Key", description: "Your key", is_required: true, is_secret: true }] }],
      icons: [{ src: "https://versions.example/icon.png", mime_type: "image/png", sizes: ["48x48"] }],
    });

    // Nothing is due within the hour.
    expect(await sync(server)).toBe(0);
    expect(registry.requests).toHaveLength(6);
  });

  it("later asks only for what changed, and applies updates, deprecations and deletions", async () => {
    const token = await tokenOn(server);
    const changed = "2026-02-01T00:00:00Z";
    registry.entries = [
      ...many.slice(3),
      registryEntry("io.bulk/server-000", { description: "Rewritten.", updatedAt: changed }),
      registryEntry("io.bulk/server-001", { status: "deprecated", updatedAt: changed }),
      registryEntry("io.bulk/server-002", { status: "deleted", updatedAt: changed }),
      registryEntry("io.new/arrival", { updatedAt: changed }),
      ...filtered,
    ];
    // An hour passes.
    await server.db.write.execute(sql`UPDATE mcp_registry_sync SET last_pass_at = last_pass_at - interval '2 hours'`);
    const before = registry.requests.length;
    // The four changes, and the two servers of the minute it looks back.
    expect(await sync(server)).toBe(6);
    const asked = registry.requests.slice(before);
    expect(asked).toHaveLength(1);
    // From the newest change it had seen, looking back a minute.
    expect(asked[0]!.get("updated_since")).toBe("2025-01-01T08:58:00.000Z");

    const all = await collectPages(server.api, "/api/v1/mcp-servers?limit=100", { token });
    expect(all).toHaveLength(540 - 2 + 1 + 1);
    expect(all.find((s) => s.name === "io.bulk/server-000")).toMatchObject({ description: "Rewritten.", updated_at: "2026-02-01T00:00:00.000Z" });
    expect(names((await list(server, token, "?q=rewrit")).data)).toEqual(["io.bulk/server-000"]);
    expect(names(all)).not.toContain("io.bulk/server-001");
    expect(names(all)).not.toContain("io.bulk/server-002");
    expect(names(all)).toContain("io.new/arrival");

    await server.db.write.execute(sql`UPDATE mcp_registry_sync SET last_pass_at = last_pass_at - interval '2 hours'`);
    await sync(server);
    expect(registry.requests.at(-1)!.get("updated_since")).toBe("2026-01-31T23:59:00.000Z");
  });
});

describe("GET /mcp-servers", () => {
  let registry: FakeRegistry;
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    registry = await startFakeRegistry([
      registryEntry("io.example/weather", { title: "Weather", description: "Forecasts for any city.", remotes: [{ type: "streamable-http", url: "https://weather.example.com/mcp" }] }),
      registryEntry("com.acme/forecast", { title: "Acme", description: "Weather forecasts by Acme.", remotes: [{ type: "streamable-http", url: "https://mcp.acme.test/mcp" }] }),
      registryEntry("org.other/maps", { title: "Maps", description: "Maps, routes and traffic.", remotes: [{ type: "streamable-http", url: "https://maps.other.test/weather/mcp" }] }),
      registryEntry("net.plain/notes", { description: "Notes you keep.", remotes: [{ type: "streamable-http", url: "http://notes.plain.test/" }] }),
    ]);
    server = await startTestServer({ SVC_MCP_REGISTRY_URL: registry.url, SVC_ALLOW_PRIVATE_NETWORK: "true" });
    await sync(server);
    token = await tokenOn(server);
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  const search = async (query: string) => names((await list(server, token, query)).data);

  it("orders by name without q", async () => {
    expect(await search("")).toEqual(["com.acme/forecast", "io.example/weather", "net.plain/notes", "org.other/maps"]);
  });

  it("matches each q word as the start of a word and ranks name over title over remote URL over description", async () => {
    // weather: a name word, a remote URL word, a description word.
    expect(await search("?q=weath")).toEqual(["io.example/weather", "org.other/maps", "com.acme/forecast"]);
    expect(await search("?q=FORECAST")).toEqual(["com.acme/forecast", "io.example/weather"]);
    expect(await search("?q=weather%20acme")).toEqual(["com.acme/forecast"]);
    expect(await search("?q=eather")).toEqual([]);
    expect(await search("?q=maps.other")).toEqual(["org.other/maps"]);
    expect(await search("?q=%20%20")).toEqual(["com.acme/forecast", "io.example/weather", "net.plain/notes", "org.other/maps"]);
  });

  it("finds a remote URL ignoring scheme, case and trailing slashes", async () => {
    expect(await search("?remote_url=WEATHER.example.com/mcp/")).toEqual(["io.example/weather"]);
    expect(await search("?remote_url=http://weather.example.com/mcp")).toEqual(["io.example/weather"]);
    expect(await search("?remote_url=https://notes.plain.test")).toEqual(["net.plain/notes"]);
    expect(await search("?remote_url=weather.example.com")).toEqual([]);
    expect(await search("?remote_url=weather.example.com/mcp&q=acme")).toEqual([]);
  });

  it("pages with a cursor that only continues its own search", async () => {
    const ranked = await collectPages(server.api, "/api/v1/mcp-servers?q=weather&limit=1", { token }, (reply) => expect(reply.body.data.length).toBeLessThanOrEqual(1));
    expect(names(ranked)).toEqual(["io.example/weather", "org.other/maps", "com.acme/forecast"]);
    const byName = await collectPages(server.api, "/api/v1/mcp-servers?limit=3", { token });
    expect(names(byName)).toEqual(["com.acme/forecast", "io.example/weather", "net.plain/notes", "org.other/maps"]);

    const first = await list(server, token, "?q=weather&limit=1");
    const other = await server.api.get(`/api/v1/mcp-servers?q=maps&limit=1&cursor=${first.next_cursor}`, { token });
    expect(other.status, other.text).toBe(400);
    expect(other.body.code).toBe("invalid_request");
  });

  it("refuses bad queries with 400", async () => {
    const tooMany = Array.from({ length: 17 }, (_, i) => `w${i}`).join("%20");
    for (const query of [`?q=${tooMany}`, "?cursor=not-a-cursor", "?limit=0", "?limit=101", `?q=${"a".repeat(201)}`]) {
      const reply = await server.api.get(`/api/v1/mcp-servers${query}`, { token });
      expect(reply.status, `${query}: ${reply.text}`).toBe(400);
    }
  });
});

describe("SVC_MCP_REGISTRY_URL", () => {
  it("defaults to the official registry, takes a base URL with a path, and off", () => {
    expect(loadConfig({}).mcpRegistryUrl).toBe("https://registry.modelcontextprotocol.io");
    expect(loadConfig({ SVC_MCP_REGISTRY_URL: "https://mcp.example.com/registry/" }).mcpRegistryUrl).toBe("https://mcp.example.com/registry");
    expect(loadConfig({ SVC_MCP_REGISTRY_URL: "off" }).mcpRegistryUrl).toBeUndefined();
    for (const bad of ["registry.example.com", "ftp://registry.example.com", "https://registry.example.com/?x=1", "https://user:pw@registry.example.com"]) {
      expect(() => loadConfig({ SVC_MCP_REGISTRY_URL: bad }), bad).toThrow("SVC_MCP_REGISTRY_URL");
    }
  });

  it("off: the shipped snapshot and no network", async () => {
    const offline = await startTestServer({ SVC_MCP_REGISTRY_URL: "off" });
    try {
      expect(await sync(offline)).toBe(SHIPPED.length);
      expect(await sync(offline)).toBe(0);
      expect(names((await list(offline, await tokenOn(offline))).data)).toEqual(SHIPPED);
    } finally {
      await offline.close();
    }
  });
});

describe("the maintenance task", () => {
  let registry: FakeRegistry;
  let server: TestServer;
  beforeAll(async () => {
    registry = await startFakeRegistry([registryEntry("io.example/one")]);
    server = await startTestServer({ SVC_MCP_REGISTRY_URL: registry.url, SVC_ALLOW_PRIVATE_NETWORK: "true" });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  it("waits after a failed run instead of asking a failing registry (and warning) at every maintenance tick", async () => {
    const task = mcpRegistrySync(server.db, server.config);
    registry.failing = true;
    await expect(task.run()).rejects.toThrow();
    expect(registry.requests).toHaveLength(1);
    registry.failing = false;
    expect(await task.run()).toBe(0);
    expect(registry.requests).toHaveLength(1);
    // A task of its own (another process) is not held back, and succeeds.
    expect(await mcpRegistrySync(server.db, server.config).run()).toBeGreaterThan(0);
    expect(registry.requests).toHaveLength(2);
  });
});

describe("the maintenance task's warnings", () => {
  let registry: FakeRegistry;
  let fresh: TestServer;
  beforeAll(async () => {
    registry = await startFakeRegistry([registryEntry("io.example/one")]);
    fresh = await startTestServer({ SVC_MCP_REGISTRY_URL: registry.url, SVC_ALLOW_PRIVATE_NETWORK: "true" });
  });
  afterAll(async () => {
    await fresh?.close();
    await registry?.close();
  });

  it("warns in one line, without a stack, when the registry cannot be reached or fails", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString("utf8"))), done()) });
    const log = pino({ level: "info" }, sink);
    registry.failing = true;
    const tasks = [mcpRegistrySync(fresh.db, { mcpRegistryUrl: "http://127.0.0.1:1", allowPrivateNetwork: true }), mcpRegistrySync(fresh.db, fresh.config)];
    const maintenance = startMaintenance(tasks, log as never, 60_000);
    await expect.poll(() => lines.length, { timeout: 30_000 }).toBe(2);
    await maintenance.stop();
    registry.failing = false;
    expect(lines.map((line) => line["msg"])).toEqual([
      expect.stringMatching(/^maintenance task mcp-registry-sync could not run: the MCP registry at http:\/\/127\.0\.0\.1:1 could not be read \(.*ECONNREFUSED.*\); trying again in 1 min$/),
      `maintenance task mcp-registry-sync could not run: the MCP registry at ${registry.url} answered HTTP 503; trying again in 1 min`,
    ]);
    for (const line of lines) expect(line).toMatchObject({ level: 40, task: "mcp-registry-sync" });
    expect(JSON.stringify(lines)).not.toContain("stack");
  });
});
