import { describe, expect, it } from "vitest";
import { ApiClient } from "../support/client.js";
import { startTestServer, useTestServer } from "../support/server.js";

const server = useTestServer();

describe("sign-up and sessions", () => {
  it("signs a user up, sets session and CSRF cookies, and /me answers for the session", async () => {
    const reply = await server.api.post("/api/auth/signup", {
      email: "Dana@Example.com",
      password: "long enough",
      display_name: "Dana",
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      user: { id: expect.stringMatching(/^usr_[a-z2-7]{26}$/), email: "Dana@Example.com", display_name: "Dana" },
      csrf_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      email_verification_required: false,
    });
    const cookies = reply.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith("svc_session="))).toMatch(/HttpOnly/);
    expect(cookies.find((c) => c.startsWith("svc_csrf="))).not.toMatch(/HttpOnly/);
  });

  it("refuses a second account with the same email, whatever its case", async () => {
    await server.api.signup({ email: "twice@example.com" });
    const reply = await server.api.post("/api/auth/signup", { email: "TWICE@example.com", password: "long enough", display_name: "X" });
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ error: expect.any(String), code: "conflict" });
  });

  it("logs in with the right password only", async () => {
    await server.api.signup({ email: "login@example.com", password: "right password" });
    const bad = await server.api.post("/api/auth/login", { email: "login@example.com", password: "wrong password" });
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe("unauthorized");
    const session = await server.api.login("LOGIN@example.com", "right password");
    const me = await server.api.get("/api/v1/me", { session });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: { id: session.userId, email: "login@example.com", display_name: expect.any(String) }, orgs: [] });
  });

  it("refuses to start a session for a page of another origin, as every cookie mutation is refused", async () => {
    await server.api.signup({ email: "origin@example.com", password: "right password" });
    const credentials = { email: "origin@example.com", password: "right password" };
    const foreign: Array<Record<string, string>> = [{ origin: "http://evil.test" }, { referer: "http://evil.test/form" }, { origin: "null" }];
    for (const headers of foreign) {
      const login = await server.api.post("/api/auth/login", credentials, { headers });
      expect(login.status, JSON.stringify(headers)).toBe(403);
      expect(login.body.code).toBe("csrf_check_failed");
      expect(login.headers.getSetCookie()).toEqual([]);
      const signup = await server.api.post("/api/auth/signup", { email: `x${Math.random()}@example.com`, password: "long enough", display_name: "X" }, { headers });
      expect(signup.status, JSON.stringify(headers)).toBe(403);
      expect(signup.headers.getSetCookie()).toEqual([]);
    }
    // svc's own pages, and clients that are not browsers (no Origin or Referer), sign in.
    const ownPage = await server.api.post("/api/auth/login", credentials, { headers: { origin: server.api.origin } });
    expect(ownPage.status, ownPage.text).toBe(200);
    expect((await server.api.post("/api/auth/login", credentials)).status).toBe(200);
  });
});

describe("personal access tokens", () => {
  it("creates a token once, lists it, authenticates with it and revokes it for good", async () => {
    const session = await server.api.signup();
    const created = await server.api.post("/api/v1/personal-access-tokens", { name: "laptop" }, { session });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^svc_pat_v1_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
    expect(created.body.token_record).toEqual({
      id: expect.stringMatching(/^pat_[a-z2-7]{26}$/),
      user_id: session.userId,
      name: "laptop",
      token_id: expect.stringMatching(/^[0-9a-f]{20}$/),
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
    });
    const token = created.body.token as string;
    const me = await server.api.get("/api/v1/me", { token });
    expect(me.status).toBe(200);

    const list = await server.api.get("/api/v1/personal-access-tokens", { token });
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(token);

    const revoked = await server.api.post(`/api/v1/personal-access-tokens/${created.body.token_record.id}/revoke`, undefined, { session });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const after = await server.api.get("/api/v1/me", { token });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: expect.any(String), code: "unauthorized" });
  });

  it("creates tokens only from a browser session with the CSRF header and a matching origin", async () => {
    const session = await server.api.signup();
    const token = await server.api.pat(session);
    const withBearer = await server.api.post("/api/v1/personal-access-tokens", { name: "x" }, { token });
    expect(withBearer.status).toBe(403);
    expect(withBearer.body.code).toBe("forbidden");
    const noCsrf = await server.api.post("/api/v1/personal-access-tokens", { name: "x" }, { session, noCsrf: true });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.code).toBe("csrf_check_failed");
    const wrongCsrf = await server.api.post("/api/v1/personal-access-tokens", { name: "x" }, { session, headers: { "x-svc-csrf": "0".repeat(64) } });
    expect(wrongCsrf.body.code).toBe("csrf_check_failed");
    const wrongOrigin = await server.api.post("/api/v1/personal-access-tokens", { name: "x" }, { session, headers: { origin: "http://evil.test" } });
    expect(wrongOrigin.body.code).toBe("csrf_check_failed");
  });

  it("rejects malformed bearer tokens before looking them up", async () => {
    const session = await server.api.signup();
    const token = await server.api.pat(session);
    const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    for (const bad of [tampered, "svc_pat_v1_short", "nope", token.replace("svc_pat_v1_", "svc_xyz_v1_")]) {
      const reply = await server.api.get("/api/v1/me", { token: bad });
      expect(reply.status, bad).toBe(401);
      expect(reply.body.code).toBe("unauthorized");
    }
    const noAuth = await server.api.get("/api/v1/me");
    expect(noAuth.status).toBe(401);
  });
});

describe("cookies on an HTTPS deployment", () => {
  it("uses __Host- cookie names with Secure, and accepts them back", async () => {
    const https = await startTestServer({ SVC_PUBLIC_URL: "https://svc.example" });
    try {
      const api = new ApiClient(https.url, "https://svc.example");
      const reply = await api.post("/api/auth/signup", { email: "tls@example.com", password: "long enough", display_name: "T" });
      const cookies = reply.headers.getSetCookie();
      expect(cookies.find((c) => c.startsWith("__Host-svc_session="))).toMatch(/; Secure/);
      expect(cookies.find((c) => c.startsWith("__Host-svc_csrf="))).toMatch(/; Path=\/;.*Secure|Secure.*Path=\//);
      expect(cookies.some((c) => c.startsWith("svc_session="))).toBe(false);
      const session = await api.login("tls@example.com", "long enough");
      expect((await api.get("/api/v1/me", { session })).status).toBe(200);
      expect((await api.post("/api/v1/personal-access-tokens", { name: "t" }, { session })).status).toBe(201);
      const plainName = { ...session, cookie: session.cookie.replaceAll("__Host-", "") };
      expect((await api.get("/api/v1/me", { session: plainName })).status).toBe(401);
    } finally {
      await https.close();
    }
  });
});
