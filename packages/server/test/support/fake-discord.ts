import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Discord on a loopback port, as its API reference describes it: REST under `/api/v10` with
 * `Authorization: Bot <token>` (`GET /users/@me`, `GET /applications/@me`; 401 `{message, code: 0}` for
 * an unknown token), and each application's Ed25519 key pair, which signs interaction callbacks the way
 * Discord does: `X-Signature-Ed25519` over `X-Signature-Timestamp` followed by the raw body.
 */

export interface FakeDiscordBot {
  token: string;
  applicationId: string;
  botUserId: string;
  username: string;
  /** The application's public key, 64 hex digits, as the Developer Portal shows it. */
  publicKey: string;
  privateKey: KeyObject;
}

export interface DiscordCall {
  method: string;
  path: string;
  authorization: string | undefined;
}

export interface FakeDiscord {
  /** The REST base, as SVC_DISCORD_API_URL takes it. */
  apiUrl: string;
  calls: DiscordCall[];
  addBot(overrides?: Partial<Pick<FakeDiscordBot, "username">>): FakeDiscordBot;
  revoke(token: string): void;
  reset(): void;
  close(): Promise<void>;
}

let counter = 0;
/** A snowflake-shaped id: 18 decimal digits. */
export const snowflake = () => String(100_000_000_000_000_000n + BigInt(++counter) * 7919n);

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const bots = new Map<string, FakeDiscordBot>();
  const revoked = new Set<string>();
  const calls: DiscordCall[] = [];
  const http: Server = createServer((req, res) => {
    const answer = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const path = new URL(req.url ?? "/", "http://discord.test").pathname.replace(/^\/api\/v10/, "");
    calls.push({ method: req.method ?? "", path, authorization: req.headers.authorization });
    const token = /^Bot (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const bot = token && !revoked.has(token) ? bots.get(token) : undefined;
    if (!bot) return answer(401, { message: "401: Unauthorized", code: 0 });
    if (req.method === "GET" && path === "/users/@me") {
      return answer(200, { id: bot.botUserId, username: bot.username, global_name: null, discriminator: "0", avatar: null, bot: true, verified: true, flags: 0 });
    }
    if (req.method === "GET" && path === "/applications/@me") {
      return answer(200, { id: bot.applicationId, name: bot.username, verify_key: bot.publicKey, bot: { id: bot.botUserId, username: bot.username, bot: true } });
    }
    return answer(404, { message: "404: Not Found", code: 0 });
  });
  const address = await new Promise<AddressInfo>((resolve) => http.listen(0, "127.0.0.1", () => resolve(http.address() as AddressInfo)));
  return {
    apiUrl: `http://127.0.0.1:${address.port}/api/v10`,
    calls,
    addBot(overrides = {}) {
      const { publicKey, privateKey } = generateKeyPairSync("ed25519");
      // The raw key is the last 32 bytes of its SPKI DER encoding.
      const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
      const bot: FakeDiscordBot = {
        token: `discord-${snowflake()}-SENTINEL`,
        applicationId: snowflake(),
        botUserId: snowflake(),
        username: "svc-bot",
        publicKey: raw.toString("hex"),
        privateKey,
        ...overrides,
      };
      bots.set(bot.token, bot);
      return bot;
    },
    revoke: (token) => void revoked.add(token),
    reset() {
      calls.length = 0;
    },
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

/** The headers Discord sends with an interaction callback, signed with the application's private key. */
export function signInteraction(bot: Pick<FakeDiscordBot, "privateKey">, body: string, timestamp = String(Math.floor(Date.now() / 1000))): Record<string, string> {
  const signature = sign(null, Buffer.from(timestamp + body), bot.privateKey).toString("hex");
  return { "content-type": "application/json", "x-signature-ed25519": signature, "x-signature-timestamp": timestamp };
}
