import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

const server = useTestServer();
let token: string;
let orgId: string;

beforeAll(async () => {
  const owner = await server.api.userWithOrg("Conventions");
  token = owner.token;
  orgId = owner.org.id;
});

const envelopeKeys = (body: Record<string, unknown>) => Object.keys(body).sort();

describe("error envelope and request validation", () => {
  it("answers unknown routes with a 404 envelope", async () => {
    const reply = await server.api.get("/api/v1/no-such-thing", { token });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
  });

  it("rejects malformed JSON with invalid_request", async () => {
    const reply = await server.api.request("POST", "/api/v1/orgs", { token, raw: '{"name": "x",' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: expect.any(String), code: "invalid_request" });
  });

  it("rejects unknown fields, wrong types and missing fields with issues carrying JSON Pointers", async () => {
    const unknown = await server.api.post("/api/v1/orgs", { name: "ok", color: "red" }, { token });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      error: expect.any(String),
      code: "validation_failed",
      issues: [{ path: "/color", message: "unknown field" }],
    });
    const wrongType = await server.api.post("/api/v1/orgs", { name: 42 }, { token });
    expect(wrongType.body.code).toBe("validation_failed");
    expect(wrongType.body.issues).toEqual([{ path: "/name", message: expect.stringContaining("string") }]);
    const missing = await server.api.post("/api/v1/orgs", {}, { token });
    expect(missing.body.issues).toEqual([{ path: "/name", message: "is required" }]);
    const notObject = await server.api.post("/api/v1/orgs", ["name"], { token });
    expect(notObject.body.code).toBe("validation_failed");
  });

  it("enforces the resource-name policy", async () => {
    const bad = ["", " padded", "padded ", "x".repeat(65), "tab\tinside", "zero\u200bwidth", "line\nbreak", "\u202eoverride"];
    for (const name of bad) {
      const reply = await server.api.post("/api/v1/orgs", { name }, { token });
      expect(reply.status, JSON.stringify(name)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues[0].path).toBe("/name");
    }
    for (const name of ["x", "x".repeat(64), "Acme, Inc. (EU) — prod", "日本語の名前", "with inner  spaces"]) {
      const reply = await server.api.post("/api/v1/orgs", { name }, { token });
      expect(reply.status, name).toBe(201);
    }
  });

  it("rejects oversized bodies and other content types", async () => {
    const big = await server.api.post("/api/v1/orgs", { name: "x".repeat(2 * 1024 * 1024) }, { token });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: expect.any(String), code: "request_too_large" });
    const form = await server.api.request("POST", "/api/v1/orgs", { token, raw: "name=x", headers: { "content-type": "text/plain" } });
    expect(form.status).toBe(415);
    expect(form.body.code).toBe("unsupported_media_type");
  });

  it("answers 404 for malformed, wrong-prefix and non-canonical ids in paths", async () => {
    const canonical = orgId as string;
    const lastChars = "aeimquy4";
    const nonCanonical = canonical.slice(0, -1) + [..."bcdfghjk"].find((c) => !lastChars.includes(c))!;
    const bad = [
      "org_short",
      canonical.replace("org_", "proj_"),
      canonical.toUpperCase(),
      canonical.slice(0, -1) + "1",
      nonCanonical,
      "org_" + "a".repeat(26),
    ];
    for (const id of bad) {
      const reply = await server.api.get(`/api/v1/orgs/${id}/projects`, { token });
      expect(reply.status, id).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
    expect((await server.api.get(`/api/v1/orgs/${canonical}/projects`, { token })).status).toBe(200);
  });

  it("validates list parameters", async () => {
    const base = `/api/v1/orgs/${orgId}/projects`;
    for (const query of ["limit=0", "limit=101", "limit=abc", "limit=1.5", `cursor=${"a".repeat(1025)}`, "cursor=not-a-cursor", `name=${"x".repeat(201)}`, "name=", "sort=size", "extra=1"]) {
      const reply = await server.api.get(`${base}?${query}`, { token });
      expect(reply.status, query).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(envelopeKeys(reply.body)).toEqual(["code", "error"]);
    }
  });

  it("refuses a cursor made for another sort order", async () => {
    const base = `/api/v1/orgs/${orgId}/projects`;
    await server.api.post(base, { name: "cursor-a" }, { token });
    await server.api.post(base, { name: "cursor-b" }, { token });
    const first = await server.api.get(`${base}?limit=1&sort=name`, { token });
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const mixed = await server.api.get(`${base}?limit=1&sort=created_at&cursor=${first.body.next_cursor}`, { token });
    expect(mixed.status).toBe(400);
    expect(mixed.body.code).toBe("invalid_request");
  });
});

describe("health", () => {
  it("reports liveness and readiness without credentials", async () => {
    expect((await server.api.get("/healthz")).body).toEqual({ status: "ok" });
    expect((await server.api.get("/readyz")).body).toEqual({ status: "ready" });
  });
});
