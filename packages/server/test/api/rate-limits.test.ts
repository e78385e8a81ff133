import { describe, expect, it } from "vitest";
import type { BrowserSession, Reply } from "../support/client.js";
import { useTestServer } from "../support/server.js";

// Three attempts per window on auth and device routes; every request comes from 127.0.0.1. The tests
// run in order and share the budgets, as one client would.
const server = useTestServer({ SVC_RATE_LIMIT_AUTH: "3", SVC_RATE_LIMIT_DEVICE: "3" });
let session: BrowserSession;

function expectRateLimited(reply: Reply) {
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual({ error: expect.any(String), code: "rate_limited" });
  const retryAfter = Number(reply.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

const signup = (n: number) =>
  server.api.post("/api/auth/signup", { email: `limit${n}@example.com`, password: "long enough", display_name: `L${n}` });
const login = (password: string) => server.api.post("/api/auth/login", { email: "limit1@example.com", password });

describe("rate limits", () => {
  it("limits sign-up per client address", async () => {
    session = await server.api.signup({ email: "limit1@example.com", password: "long enough" });
    for (let n = 2; n <= 3; n++) expect((await signup(n)).status).toBe(201);
    expectRateLimited(await signup(4));
  });

  it("limits sign-in attempts, right or wrong, per client address", async () => {
    expect((await login("wrong one")).status).toBe(401);
    expect((await login("wrong two")).status).toBe(401);
    expect((await login("long enough")).status).toBe(200);
    expectRateLimited(await login("long enough"));
  });

  it("limits device codes and token polls per client address", async () => {
    const codes: string[] = [];
    for (let n = 0; n < 3; n++) {
      const reply = await server.api.post("/api/auth/device/code", {});
      expect(reply.status).toBe(200);
      codes.push(reply.body.device_code as string);
    }
    expectRateLimited(await server.api.post("/api/auth/device/code", {}));

    for (const code of codes) expect((await server.api.post("/api/auth/device/token", { device_code: code })).status).toBe(202);
    expectRateLimited(await server.api.post("/api/auth/device/token", { device_code: codes[0] }));
  });

  it("limits user-code lookups and decisions per signed-in user, against code guessing", async () => {
    for (const code of ["AAAAA-AAAAA", "BBBBB-BBBBB", "CCCCC-CCCCC"]) {
      expect((await server.api.get(`/api/auth/device/pending?user_code=${code}`, { session })).status).toBe(404);
    }
    expectRateLimited(await server.api.get("/api/auth/device/pending?user_code=DDDDD-DDDDD", { session }));
    expectRateLimited(await server.api.post("/api/auth/device/approve", { user_code: "DDDDD-DDDDD" }, { session }));
    expectRateLimited(await server.api.post("/api/auth/device/deny", { user_code: "DDDDD-DDDDD" }, { session }));
  });
});
