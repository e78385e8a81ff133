import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ConfigError, type Config } from "../../config.js";

/**
 * The 32-byte master key from SVC_SECRET_KEY (64 hex characters or base64), or, in embedded mode
 * without one, a key generated once into `<data dir>/secret.key` (mode 0600) and reused after.
 */
export function loadMasterKey(config: Config): Buffer {
  if (config.secretKey) return parseKey(config.secretKey);
  const path = join(config.dataDir, "secret.key");
  if (existsSync(path)) return parseKey(readFileSync(path, "utf8").trim());
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  return key;
}

function parseKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32) {
    throw new ConfigError("SVC_SECRET_KEY must encode exactly 32 bytes (64 hex characters or 44 base64 characters)");
  }
  return key;
}
