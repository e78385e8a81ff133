import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Passwords are hashed with scrypt, which is memory-hard and built into Node, so no native addon is
 * needed. Parameters are stored in each hash (`scrypt$N$r$p$salt$hash`), so the cost can change without
 * invalidating existing hashes: each is checked with its own. The cost is log2 N (`SVC_PASSWORD_HASH_COST`);
 * the default 15 with r=8 uses 32 MiB per hash (OWASP's minimum is 2^17 for 128 MiB; 2^15 keeps sign-in
 * under ~100 ms on small machines and is still memory-hard).
 */
export const DEFAULT_PASSWORD_HASH_COST = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;

export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const params = { N: 2 ** cost, r: BLOCK_SIZE, p: PARALLELISM };
  const hash = await derive(password, salt, params);
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), hash.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await derive(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash to compare against when the account does not exist, at the cost new hashes get, so timing does not reveal that. */
export function decoyPasswordHash(cost: number): string {
  return `scrypt$${2 ** cost}$${BLOCK_SIZE}$${PARALLELISM}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
