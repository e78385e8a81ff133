import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

/*
 * SVC_SIGNUP (docs/operations.md, "Production checklist"): `open` as the reference, `invite` admits an email
 * with a pending org invitation, `closed` admits nobody; under both the first account may sign up, so a
 * fresh server gets its operator. A refused sign-up is a 403 that writes nothing.
 */

const body = (email: string) => ({ email, password: "correct horse battery", display_name: "Someone" });

describe("SVC_SIGNUP=invite", () => {
  const server = useTestServer({ SVC_SIGNUP: "invite" });

  it("admits the first account, then only invited emails, and an invited email once", async () => {
    const operator = await server.api.signup({ email: "operator@example.com" });
    const stranger = await server.api.post("/api/auth/signup", body("stranger@example.com"));
    expect(stranger.status, stranger.text).toBe(403);
    expect(stranger.body.code).toBe("forbidden");
    expect(stranger.body.error).toContain("invitation");
    expect(stranger.headers.get("set-cookie")).toBeNull();
    // Nothing was written: the address still has no account.
    expect((await server.api.post("/api/auth/login", { email: "stranger@example.com", password: "correct horse battery" })).status).toBe(401);

    const token = await server.api.pat(operator);
    const org = await server.api.post("/api/v1/orgs", { name: "Team" }, { token });
    const invited = await server.api.post(`/api/v1/orgs/${org.body.org.id}/invitations`, { email: "Colleague@Example.com", role: "member" }, { token });
    expect(invited.status, invited.text).toBe(201);
    const colleague = await server.api.post("/api/auth/signup", body("colleague@example.com"));
    expect(colleague.status, colleague.text).toBe(201);
    const again = await server.api.post("/api/auth/signup", body("colleague@example.com"));
    expect(again.status).toBe(409);
  });
});

describe("SVC_SIGNUP=closed", () => {
  const server = useTestServer({ SVC_SIGNUP: "closed" });

  it("admits the first account and nobody after it, invited or not", async () => {
    const operator = await server.api.signup({ email: "operator@example.com" });
    const token = await server.api.pat(operator);
    const org = await server.api.post("/api/v1/orgs", { name: "Team" }, { token });
    await server.api.post(`/api/v1/orgs/${org.body.org.id}/invitations`, { email: "colleague@example.com", role: "member" }, { token });
    const refused = await server.api.post("/api/auth/signup", body("colleague@example.com"));
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error).toContain("closed");
    // The operator still signs in.
    expect((await server.api.post("/api/auth/login", { email: "operator@example.com", password: "correct horse battery" })).status).toBe(200);
  });
});

describe("SVC_SIGNUP=open (the default)", () => {
  const server = useTestServer();

  it("admits anyone", async () => {
    await server.api.signup();
    const second = await server.api.post("/api/auth/signup", body("anyone@example.com"));
    expect(second.status, second.text).toBe(201);
  });
});
