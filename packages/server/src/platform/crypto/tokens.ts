import { createHash, randomBytes, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

/** Bearer credential kinds and their prefixes. The version marker is part of the prefix. */
export const TOKEN_PREFIXES = {
  personal: "svc_pat_v1_",
  organization: "svc_org_v1_",
  /** A machine daemon's credential: valid only on the machine daemon routes. */
  daemon: "svc_daemon_v1_",
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIXES;

/** A token's `last_used_at` is written at most this often, so authentication is not a write per request. */
export const TOKEN_TOUCH_SECONDS = 60;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 43; // 43 base62 characters carry just over 256 bits.
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32, enough for a CRC-32.

/** `<prefix><43 random base62>_<6 base62 CRC-32 of everything before the underscore>`. */
export function mintToken(kind: TokenKind): string {
  let secret = "";
  // randomInt draws uniformly (rejection sampling), so every character is unbiased.
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(62)];
  const body = TOKEN_PREFIXES[kind] + secret;
  return `${body}_${checksum(body)}`;
}

/** The kind of a well-formed token, or null; checked before any database access. */
export function tokenKind(token: string): TokenKind | null {
  for (const kind of Object.keys(TOKEN_PREFIXES) as TokenKind[]) {
    const prefix = TOKEN_PREFIXES[kind];
    if (!token.startsWith(prefix)) continue;
    if (token.length !== prefix.length + SECRET_LENGTH + 1 + CHECKSUM_LENGTH) return null;
    const body = token.slice(0, prefix.length + SECRET_LENGTH);
    if (token[body.length] !== "_") return null;
    if (!isBase62(token.slice(prefix.length, body.length))) return null;
    return token.slice(body.length + 1) === checksum(body) ? kind : null;
  }
  return null;
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** A random opaque string for cookies, device codes and similar (hex of `bytes` random bytes). */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function isBase62(text: string): boolean {
  return /^[0-9A-Za-z]+$/.test(text);
}
