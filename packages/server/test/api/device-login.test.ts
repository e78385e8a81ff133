import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserSession } from "../support/client.js";
import { startTestServer, TEST_ORIGIN, type TestServer } from "../support/server.js";

// Timing states run on tiny intervals and lifetimes from config, so no test sleeps for real 5 s intervals.
let server: TestServer;
let short: TestServer;
beforeAll(async () => {
  [server, short] = await Promise.all([
    startTestServer({ SVC_DEVICE_POLL_INTERVAL_SECONDS: "1", SVC_DEVICE_CODE_TTL_SECONDS: "60" }),
    startTestServer({ SVC_DEVICE_POLL_INTERVAL_SECONDS: "1", SVC_DEVICE_CODE_TTL_SECONDS: "2" }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), short?.close()]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startFlow(target: TestServer, body: Record<string, unknown> = {}) {
  const reply = await target.api.post("/api/auth/device/code", body);
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { device_code: string; user_code: string; verification_uri_complete: string; interval: number };
}

const poll = (target: TestServer, deviceCode: string) => target.api.post("/api/auth/device/token", { device_code: deviceCode });
const decide = (target: TestServer, decision: "approve" | "deny", userCode: string, session: BrowserSession) =>
  target.api.post(`/api/auth/device/${decision}`, { user_code: userCode }, { session });

describe("starting a device login", () => {
  it("answers codes, verification URIs, lifetime and interval, and defaults omitted names", async () => {
    const reply = await server.api.post("/api/auth/device/code", {});
    expect(reply.status).toBe(200);
    const userCode = reply.body.user_code as string;
    expect(reply.body).toEqual({
      device_code: expect.stringMatching(/^[0-9a-f]{64}$/),
      user_code: expect.stringMatching(/^[0-9A-F]{5}-[0-9A-F]{5}$/),
      verification_uri: `${TEST_ORIGIN}/device`,
      verification_uri_complete: `${TEST_ORIGIN}/device?user_code=${userCode}`,
      expires_in: 60,
      interval: 1,
    });
    const session = await server.api.signup();
    const pending = await server.api.get(`/api/auth/device/pending?user_code=${userCode}`, { session });
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({ user_code: userCode, client_name: "Device", token_name: "Device login", expires_at: expect.any(String) });
    const expiresIn = Date.parse(pending.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(50_000);
    expect(expiresIn).toBeLessThanOrEqual(61_000);
  });

  it("treats empty names as omitted and keeps given ones", async () => {
    const session = await server.api.signup();
    const empty = await startFlow(server, { client_name: "", token_name: "" });
    const named = await startFlow(server, { client_name: "acme-cli", token_name: "laptop of dana ✓" });
    const a = await server.api.get(`/api/auth/device/pending?user_code=${empty.user_code}`, { session });
    expect([a.body.client_name, a.body.token_name]).toEqual(["Device", "Device login"]);
    const b = await server.api.get(`/api/auth/device/pending?user_code=${named.user_code}`, { session });
    expect([b.body.client_name, b.body.token_name]).toEqual(["acme-cli", "laptop of dana ✓"]);
  });

  it("refuses names that break the resource-name policy and unknown fields", async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ client_name: " padded" }, "/client_name"],
      [{ token_name: "trailing " }, "/token_name"],
      [{ token_name: "x".repeat(65) }, "/token_name"],
      [{ client_name: "bell\u0007" }, "/client_name"],
      [{ client_name: "zero\u200Bwidth" }, "/client_name"],
      [{ client_name: "   " }, "/client_name"],
      [{ token_name: 42 }, "/token_name"],
      [{ scope: "all" }, "/scope"],
    ];
    for (const [body, path] of bad) {
      const reply = await server.api.post("/api/auth/device/code", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    const notJson = await server.api.post("/api/auth/device/code", undefined, { raw: "{nope" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe("invalid_request");
  });
});

describe("polling for the token", () => {
  it("is pending until decided, then hands out a working personal token exactly once", async () => {
    const session = await server.api.signup();
    const flow = await startFlow(server, { client_name: "acme-cli", token_name: "ci laptop" });
    const pending = await poll(server, flow.device_code);
    expect(pending.status).toBe(202);
    expect(pending.body).toEqual({ error: "authorization_pending", interval: 1 });
    expect(pending.headers.get("cache-control")).toBe("no-store");

    const approved = await decide(server, "approve", flow.user_code, session);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ ok: true });

    const granted = await poll(server, flow.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ access_token: expect.stringMatching(/^svc_pat_v1_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/), token_type: "Bearer" });
    const token = granted.body.access_token as string;

    const me = await server.api.get("/api/v1/me", { token });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(session.userId);
    const list = await server.api.get("/api/v1/personal-access-tokens", { session });
    expect(list.body.data.map((t: { name: string }) => t.name)).toContain("ci laptop");

    const again = await poll(server, flow.device_code);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: "expired_token" });
  });

  it("mints one token when two polls race after approval", async () => {
    const session = await server.api.signup();
    const flow = await startFlow(server, { token_name: "raced" });
    await decide(server, "approve", flow.user_code, session);
    const replies = await Promise.all([poll(server, flow.device_code), poll(server, flow.device_code), poll(server, flow.device_code)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    const list = await server.api.get("/api/v1/personal-access-tokens", { session });
    expect(list.body.data.filter((t: { name: string }) => t.name === "raced")).toHaveLength(1);
  });

  it("answers slow_down with a raised interval when polled sooner than the interval", async () => {
    const flow = await startFlow(server);
    expect((await poll(server, flow.device_code)).body).toEqual({ error: "authorization_pending", interval: 1 });
    const fast = await poll(server, flow.device_code);
    expect(fast.status).toBe(202);
    expect(fast.body).toEqual({ error: "slow_down", interval: 6 });
    const faster = await poll(server, flow.device_code);
    expect(faster.body).toEqual({ error: "slow_down", interval: 11 });
  });

  it("accepts polls that keep to the advertised interval", async () => {
    const flow = await startFlow(server);
    for (let i = 0; i < 3; i++) {
      const reply = await poll(server, flow.device_code);
      expect(reply.status).toBe(202);
      expect(reply.body).toEqual({ error: "authorization_pending", interval: 1 });
      await sleep(1000);
    }
  });

  it("answers access_denied after a denial, for good", async () => {
    const session = await server.api.signup();
    const flow = await startFlow(server);
    const denied = await decide(server, "deny", flow.user_code, session);
    expect(denied.status).toBe(200);
    expect(denied.body).toEqual({ ok: true });
    for (let i = 0; i < 2; i++) {
      const reply = await poll(server, flow.device_code);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: "access_denied" });
    }
  });

  it("answers invalid_grant for unknown device codes and the usual envelope for malformed bodies", async () => {
    for (const code of ["0".repeat(64), "not-a-code"]) {
      const reply = await poll(server, code);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: "invalid_grant" });
    }
    for (const body of [{}, { device_code: 5 }, { device_code: "", extra: 1 }]) {
      const reply = await server.api.post("/api/auth/device/token", body);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: "validation_failed", error: expect.any(String) });
    }
  });
});

describe("deciding", () => {
  it("finds codes typed in lower case, without the dash or with spaces", async () => {
    const session = await server.api.signup();
    const flow = await startFlow(server, { client_name: "typed" });
    const loose = flow.user_code.replace("-", "").toLowerCase();
    const spaced = ` ${flow.user_code.slice(0, 5).toLowerCase()} ${flow.user_code.slice(6)} `;
    for (const code of [loose, spaced]) {
      const reply = await server.api.get(`/api/auth/device/pending?user_code=${encodeURIComponent(code)}`, { session });
      expect(reply.status, code).toBe(200);
      expect(reply.body.user_code).toBe(flow.user_code);
    }
    expect((await decide(server, "approve", loose, session)).status).toBe(200);
    expect((await poll(server, flow.device_code)).status).toBe(200);
  });

  it("answers 404 for unknown or decided codes and 409 for a second decision", async () => {
    const session = await server.api.signup();
    for (const code of ["AAAAA-AAAAA", "nonsense", "<script>"]) {
      const reply = await server.api.get(`/api/auth/device/pending?user_code=${encodeURIComponent(code)}`, { session });
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe("not_found");
      expect((await decide(server, "approve", code, session)).status).toBe(404);
    }
    const flow = await startFlow(server);
    expect((await decide(server, "approve", flow.user_code, session)).status).toBe(200);
    for (const decision of ["approve", "deny"] as const) {
      const twice = await decide(server, decision, flow.user_code, session);
      expect(twice.status).toBe(409);
      expect(twice.body).toEqual({ error: expect.any(String), code: "state_transition_conflict" });
    }
    expect((await server.api.get(`/api/auth/device/pending?user_code=${flow.user_code}`, { session })).status).toBe(404);
  });

  it("needs a signed-in browser session with the CSRF header", async () => {
    const session = await server.api.signup();
    const token = await server.api.pat(session);
    const flow = await startFlow(server);
    const query = `/api/auth/device/pending?user_code=${flow.user_code}`;

    expect((await server.api.get(query)).status).toBe(401);
    expect((await server.api.get(query, { token })).body.code).toBe("forbidden");
    expect((await server.api.get(query, { token })).status).toBe(403);
    for (const decision of ["approve", "deny"] as const) {
      const path = `/api/auth/device/${decision}`;
      const anonymous = await server.api.post(path, { user_code: flow.user_code });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.code).toBe("unauthorized");
      const withPat = await server.api.post(path, { user_code: flow.user_code }, { token });
      expect(withPat.status).toBe(403);
      expect(withPat.body.code).toBe("forbidden");
      const noCsrf = await server.api.post(path, { user_code: flow.user_code }, { session, noCsrf: true });
      expect(noCsrf.status).toBe(403);
      expect(noCsrf.body.code).toBe("csrf_check_failed");
      const otherOrigin = await server.api.post(path, { user_code: flow.user_code }, { session, headers: { origin: "http://evil.test" } });
      expect(otherOrigin.body.code).toBe("csrf_check_failed");
      expect(otherOrigin.body.error).toBe("a request from http://evil.test does not match this server's public URL; open svc at http://svc.test (or set SVC_PUBLIC_URL)");
    }
    expect((await poll(server, flow.device_code)).body.error).toBe("authorization_pending");
  });
});

describe("expiry", () => {
  it("expires undecided and approved-but-unclaimed flows after their lifetime", async () => {
    const session = await short.api.signup();
    const undecided = await startFlow(short);
    const approved = await startFlow(short);
    expect((await decide(short, "approve", approved.user_code, session)).status).toBe(200);
    await sleep(2200);
    for (const flow of [undecided, approved]) {
      const reply = await poll(short, flow.device_code);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: "expired_token" });
    }
    expect((await short.api.get(`/api/auth/device/pending?user_code=${undecided.user_code}`, { session })).status).toBe(404);
    for (const decision of ["approve", "deny"] as const) {
      const late = await decide(short, decision, undecided.user_code, session);
      expect(late.status).toBe(409);
      expect(late.body.code).toBe("state_transition_conflict");
    }
    const tokens = await short.api.get("/api/v1/personal-access-tokens", { session });
    expect(tokens.body.data).toEqual([]);
  });

  it("maintenance deletes flows that expired more than a day ago", async () => {
    const old = await startFlow(short);
    const fresh = await startFlow(short);
    await short.db.read.execute(sql`UPDATE device_flows SET expires_at = now() - interval '25 hours'
      WHERE device_code_hash = encode(sha256(convert_to(${old.device_code}, 'UTF8')), 'hex')`);
    expect(await short.app.services.deviceLogin.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect((await poll(short, old.device_code)).body).toEqual({ error: "invalid_grant" });
    expect((await poll(short, fresh.device_code)).body.error).toBe("authorization_pending");
  });
});
