import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

/*
 * Sign-in is limited per account as well as per address (issue 9, F8): guesses at one account from many
 * addresses share one budget. The server trusts X-Forwarded-For here, so each request can come from
 * its own address.
 */
const server = useTestServer({ SVC_TRUST_PROXY: "true", SVC_RATE_LIMIT_AUTH: "100", SVC_RATE_LIMIT_AUTH_ACCOUNT: "3" });

const login = (email: string, address: string) =>
  server.api.post("/api/auth/login", { email, password: "wrong guess" }, { headers: { "x-forwarded-for": address } });

describe("sign-in throttling per account", () => {
  it("stops guesses at one account from many addresses, and leaves other accounts alone", async () => {
    await server.api.signup({ email: "target@example.com", password: "long enough" });
    await server.api.signup({ email: "bystander@example.com", password: "long enough" });
    for (const address of ["198.51.100.1", "198.51.100.2", "198.51.100.3"]) expect((await login("target@example.com", address)).status).toBe(401);
    const limited = await login("Target@Example.com", "198.51.100.4");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect((await login("bystander@example.com", "198.51.100.5")).status).toBe(401);
  });
});
