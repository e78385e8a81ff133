import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { decoyPasswordHash, hashPassword, verifyPassword } from "../../src/platform/crypto/passwords.js";

/* Password hashes (SVC_PASSWORD_HASH_COST, docs/configuration.md): each carries its own scrypt parameters. */

const base = { SVC_DATA_DIR: "/tmp/svc-passwords-test" };

describe("password hashes", () => {
  it("record the cost they were made with, and verify only the right password", async () => {
    const hash = await hashPassword("correct horse", 10);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword("correct horse", hash)).toBe(true);
    expect(await verifyPassword("correct horsE", hash)).toBe(false);
  });

  it("made at one cost still verify once the configured cost is another", async () => {
    const cheap = await hashPassword("battery staple", 10);
    const dear = await hashPassword("battery staple", 12);
    expect(dear.split("$")[1]).toBe("4096");
    expect(await verifyPassword("battery staple", cheap)).toBe(true);
    expect(await verifyPassword("battery staple", dear)).toBe(true);
  });

  it("salt each hash, and the decoy matches no password at the configured cost", async () => {
    expect(await hashPassword("same", 10)).not.toBe(await hashPassword("same", 10));
    expect(decoyPasswordHash(15).split("$").slice(0, 4)).toEqual(["scrypt", "32768", "8", "1"]);
    expect(await verifyPassword("", decoyPasswordHash(10))).toBe(false);
    expect(await verifyPassword("anything", "bcrypt$whatever")).toBe(false);
  });
});

describe("SVC_PASSWORD_HASH_COST", () => {
  it("is 15 (2^15, 32 MiB per hash) unless set, and takes 10 to 17", () => {
    expect(loadConfig(base).passwordHashCost).toBe(15);
    expect(loadConfig({ ...base, SVC_PASSWORD_HASH_COST: "17" }).passwordHashCost).toBe(17);
    for (const value of ["9", "18", "fast"]) expect(() => loadConfig({ ...base, SVC_PASSWORD_HASH_COST: value })).toThrow(ConfigError);
  });
});
