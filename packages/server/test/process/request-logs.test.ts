import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";

/*
 * What `svc serve` logs at info while it is used (docs/operations.md, "Logs"): a line per change and per
 * failed request, none per successful read or poll; and a dependency that failed (an MCP server svc could
 * not reach, answered 502) is a warning with its cause, not an unhandled error with a stack.
 */
const databaseEnv = useProcessDatabases("request-logs");

describe("request logs at info", () => {
  it("log changes and failures, not successful reads, and an upstream failure as a warning", { timeout: 180_000 }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...process.env, ...(await databaseEnv()), PORT: String(port), HOST: "127.0.0.1", SVC_PUBLIC_URL: url, SVC_LOG_LEVEL: "info", SVC_LOG_FORMAT: "json", SVC_ALLOW_PRIVATE_NETWORK: "true" };
    const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    try {
      await ready(url, child);
      const api = new ApiClient(url, url);
      const session = await api.signup();
      const token = await api.pat(session);
      const org = await api.post("/api/v1/orgs", { name: "Logs" }, { token });
      for (let poll = 0; poll < 3; poll++) expect((await api.get("/api/v1/me", { token })).status).toBe(200);
      expect((await api.get("/api/v1/me", { token: `${token}x` })).status).toBe(401);
      const unreachable = await api.post(`/api/v1/orgs/${org.body.org.id}/secrets/mcp-oauth`, { owner: { kind: "org" }, mcp_url: "http://127.0.0.1:1/mcp", name: "unreachable" }, { token });
      expect(unreachable.status, unreachable.text).toBe(502);
    } finally {
      child.kill("SIGTERM");
      await exited(child);
    }
    const lines = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const messages = lines.map((line) => line["msg"]);
    expect(messages).toContain("POST /api/v1/orgs 201");
    expect(messages).toContain("GET /api/v1/me 401");
    expect(messages).toContain("POST /api/v1/orgs/:orgID/secrets/mcp-oauth 502");
    // Reads that succeed, the readiness polls included, are debug lines.
    expect(messages).not.toContain("GET /api/v1/me 200");
    expect(messages).not.toContain("GET /readyz 200");
    const upstream = lines.filter((line) => line["code"] === "upstream_unavailable");
    expect(upstream).toEqual([expect.objectContaining({ level: 40, msg: "request failed upstream", cause: expect.stringContaining("fetch failed") })]);
    expect(messages).not.toContain("unhandled error");
    expect(output).not.toContain('"stack"');
  });
});
