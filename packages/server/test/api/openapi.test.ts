import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, renderOpenApi } from "../../src/platform/http/openapi.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer();

describe("the OpenAPI document", () => {
  it("is served at /api/v1/openapi.json without credentials", async () => {
    const reply = await server.api.get("/api/v1/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe("3.1.0");
    expect(reply.body.info.version).toBe("0.1.0");
  });

  it("matches the committed api/openapi.json (run `npm run openapi` after changing a route)", () => {
    const committed = readFileSync(OPENAPI_PATH, "utf8");
    expect(renderOpenApi(server.app.http)).toBe(committed);
  });

  it("names and tags every operation", () => {
    const doc = server.app.http.swagger() as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
    expect(operations.length).toBeGreaterThan(5);
    for (const { path, method, op } of operations) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
    }
    const ids = operations.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
