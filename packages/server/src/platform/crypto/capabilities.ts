import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Short-lived capabilities that need no row: an HMAC-SHA256 (64 hex characters) over the fields a
 * capability is bound to, under a key derived from the master key for one purpose, so a capability for
 * one purpose never verifies for another. The expiry is one of the fields; the caller compares it with the
 * database clock.
 */
export interface CapabilitySigner {
  sign(fields: readonly string[]): string;
  verify(fields: readonly string[], token: string): boolean;
}

export function createCapabilitySigner(masterKey: Buffer, purpose: string): CapabilitySigner {
  const key = createHmac("sha256", masterKey).update(`svc capability key: ${purpose}`).digest();
  // Fields are ids and numbers; a separator no field contains keeps ("a", "bc") apart from ("ab", "c").
  const mac = (fields: readonly string[]) => createHmac("sha256", key).update(fields.join("\n")).digest();
  return {
    sign: (fields) => mac(fields).toString("hex"),
    verify(fields, token) {
      if (!/^[0-9a-f]{64}$/.test(token)) return false;
      return timingSafeEqual(mac(fields), Buffer.from(token, "hex"));
    },
  };
}
