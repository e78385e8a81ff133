import { describe, expect, it } from "vitest";
import type { Reply } from "../support/client.js";
import { useTestServer } from "../support/server.js";

/*
 * Sign-in throttling per account (issue 9, F8; issue 21): once an account has taken 3 failed sign-ins in
 * a window, an address that already failed on it is refused, while an address that has not still gets
 * its try, so guessers cannot lock the owner out. The server trusts X-Forwarded-For here, so each request
 * can come from its own address; the per-address limit is high enough to stay out of the way.
 */
const server = useTestServer({ SVC_TRUST_PROXY: "true", SVC_RATE_LIMIT_AUTH: "100", SVC_RATE_LIMIT_AUTH_ACCOUNT: "3" });
const PASSWORD = "long enough";

const login = (email: string, address: string, password = "wrong guess") =>
  server.api.post("/api/auth/login", { email, password }, { headers: { "x-forwarded-for": address } });

async function statuses(replies: Array<Promise<Reply>>): Promise<number[]> {
  return (await Promise.all(replies)).map((reply) => reply.status);
}

function expectRefused(reply: Reply) {
  expect(reply.status).toBe(429);
  expect(reply.body.code).toBe("rate_limited");
  expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

describe("sign-in throttling per account", () => {
  it("refuses the address that guessed, even with the right password, and lets the owner in from another", async () => {
    await server.api.signup({ email: "owner@example.com", password: PASSWORD });
    const attacker = [];
    for (let n = 0; n < 12; n++) attacker.push((await login("owner@example.com", "198.51.100.1")).status);
    expect(attacker).toEqual([401, 401, 401, ...Array<number>(9).fill(429)]);
    // The guesser learns nothing from the right password: the answer does not depend on it.
    expectRefused(await login("Owner@Example.com", "198.51.100.1", PASSWORD));

    expect((await login("owner@example.com", "203.0.113.7", PASSWORD)).status).toBe(200);
    expect((await login("owner@example.com", "203.0.113.7", PASSWORD)).status).toBe(200);
    expectRefused(await login("owner@example.com", "198.51.100.1"));
  });

  it("gives each further address one guess once the account's allowance is spent, and leaves other accounts alone", async () => {
    await server.api.signup({ email: "target@example.com", password: PASSWORD });
    await server.api.signup({ email: "bystander@example.com", password: PASSWORD });
    for (const address of ["198.51.100.11", "198.51.100.12", "198.51.100.13"]) expect((await login("target@example.com", address)).status).toBe(401);
    expectRefused(await login("target@example.com", "198.51.100.11"));
    for (let n = 20; n < 30; n++) {
      const address = `198.51.100.${n}`;
      expect((await login("target@example.com", address)).status).toBe(401);
      expectRefused(await login("target@example.com", address));
    }
    expect((await login("bystander@example.com", "198.51.100.11")).status).toBe(401);
    expect((await login("target@example.com", "203.0.113.8", PASSWORD)).status).toBe(200);
  });

  it("counts an IPv6 /64 as one client, and an IPv4-mapped address as its IPv4 address", async () => {
    await server.api.signup({ email: "six@example.com", password: PASSWORD });
    for (const address of ["2001:db8:1:2::a", "2001:db8:1:2::b", "2001:db8:1:2:ffff::1"]) expect((await login("six@example.com", address)).status).toBe(401);
    expectRefused(await login("six@example.com", "2001:db8:1:2::c"));
    expect((await login("six@example.com", "2001:db8:1:3::a", PASSWORD)).status).toBe(200);

    expect((await login("six@example.com", "198.51.100.40")).status).toBe(401);
    expectRefused(await login("six@example.com", "::ffff:198.51.100.40"));
  });

  it("does not let parallel guesses from one address past the allowance", async () => {
    await server.api.signup({ email: "parallel@example.com", password: PASSWORD });
    const answers = await statuses(Array.from({ length: 12 }, () => login("parallel@example.com", "198.51.100.50")));
    // Each attempt counts before its password is checked: the allowance, plus at most the one attempt
    // whose own count came first while the account's allowance was already spent, are checked.
    expect(answers.filter((status) => status === 401).length).toBeLessThanOrEqual(4);
    expect(answers.filter((status) => status !== 401).every((status) => status === 429)).toBe(true);
  });
});
