import { randomBytes } from "node:crypto";

/** Public id prefixes: the spec's where it names one, the reference's for the rest. */
export const ID_PREFIXES = {
  org: "org",
  project: "proj",
  user: "usr",
  pat: "pat",
  orgApiKey: "oak",
  invitation: "oinv",
  secret: "sec",
  secretGrant: "sgr",
  secretVersion: "secv",
  session: "bss",
  deviceFlow: "adf",
  mcpOAuthFlow: "moaf",
  modelProviderConfig: "mpc",
  configuredModel: "mdl",
  modelRevision: "mrev",
  modelGrant: "pmog",
  agentConfig: "acfg",
  agentProfile: "aprf",
  cronTrigger: "cron",
  agent: "agt",
  actor: "actr",
  agentInput: "ain",
  event: "evt",
  turn: "trn",
  modelCallContext: "mcc",
  toolCall: "tcl",
  interaction: "int",
  artifact: "art",
  contextCheckpoint: "ccp",
  skill: "skl",
  skillRevision: "skr",
  skillGrant: "skg",
  machine: "mch",
  daemonToken: "mdt",
  machineGrant: "pmg",
  machinePool: "mpo",
  machinePoolGrant: "pmpg",
  daemonRuntime: "drt",
  /** A daemon installation, named after the daemon token it authenticates with (one per token). */
  installation: "inst",
  machineBinding: "amb",
  process: "prc",
  processAction: "pac",
  /** A request to install a skill's files on one machine (the `skill_offer`'s request_id). */
  skillInstall: "ski",
  integration: "itg",
  integrationOAuthFlow: "ioaf",
  integrationSubscription: "isub",
  /** The reference's profile-bound Slack install: a view of the integration with the same id bytes. */
  integrationInstall: "iin",
  memoryStore: "mst",
  memory: "mem",
  webhookEndpoint: "whe",
  webhookDelivery: "whd",
  /** A webhook message: the `webhook-id` header (Standard Webhooks' `msg_` ids). */
  webhookMessage: "msg",
  budget: "bdg",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const DECODE = new Map([...ALPHABET].map((ch, i) => [ch, i]));

/**
 * Random bytes are drawn from the system in batches: one call per id cost a system call each, which
 * showed in profiles of the write paths (several ids per request or step).
 */
const POOL_IDS = 256;
let pool = randomBytes(16 * POOL_IDS);
let poolOffset = 0;

function sixteenRandomBytes(): Buffer {
  if (poolOffset === pool.length) {
    pool = randomBytes(16 * POOL_IDS);
    poolOffset = 0;
  }
  // A copy: the id's bytes are changed below, and the pool is never handed out twice.
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return bytes;
}

/** A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version, variant, random bits. */
export function newUuid(): string {
  const bytes = sixteenRandomBytes();
  const ms = Date.now();
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
}

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `text` is a UUID in PostgreSQL's canonical text form (lowercase, hyphenated). */
export function isUuid(text: unknown): text is string {
  return typeof text === "string" && UUID_TEXT.test(text);
}

export function encodeId(kind: IdKind, uuid: string): string {
  return `${ID_PREFIXES[kind]}_${base32OfUuid(uuid)}`;
}

// Hex digit values by character code ("0"-"9", "a"-"f", "A"-"F"); everything else is never read.
const HEX_VALUE = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(digit)] = digit;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(digit)] = digit;
}
const HYPHEN = 45;

/**
 * The base32 of a UUID's 16 bytes, read straight from its text: every response encodes a few ids per
 * row, so this skips the hex buffer and the copy without its hyphens.
 */
function base32OfUuid(uuid: string): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < uuid.length; i++) {
    const code = uuid.charCodeAt(i);
    if (code === HYPHEN) continue;
    buffer = ((buffer << 4) | HEX_VALUE[code]!) & 0xff;
    bits += 4;
    if (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** The UUID behind a public id, or null when the id is malformed or of another kind. */
export function decodeId(kind: IdKind, publicId: string): string | null {
  const prefix = `${ID_PREFIXES[kind]}_`;
  if (!publicId.startsWith(prefix)) return null;
  const bytes = unbase32(publicId.slice(prefix.length));
  if (!bytes || bytes.every((b) => b === 0)) return null;
  return formatUuid(bytes);
}

export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_[a-z2-7]{26}$`;
}

function unbase32(text: string): Buffer | null {
  if (text.length !== 26) return null;
  const out = Buffer.alloc(16);
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const ch of text) {
    const value = DECODE.get(ch);
    if (value === undefined) return null;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out[index++] = (buffer >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  // 26 characters carry 130 bits; the last two must be zero padding for the id to be canonical.
  return (buffer & ((1 << bits) - 1)) === 0 ? out : null;
}

function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
