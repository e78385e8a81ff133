import { createHash } from "node:crypto";

/** Enough routes for every bot and channel svc talks to at once; past it the oldest are forgotten (a 429 still guards them). */
const MAX_ROUTES = 10_000;

/**
 * The routes a provider said are spent until a reset (Discord docs: "Rate Limits": `X-RateLimit-Remaining: 0`
 * with `X-RateLimit-Reset-After`, fractional seconds), per credential: until then a call there is refused
 * in svc, so a request Discord would answer 429 is never spent. In memory, a hint only: a process that does
 * not know still gets the provider's 429, which is honoured too (rest.ts).
 */
export interface RateGate {
  /** Seconds until the route opens again, or undefined when it is open. */
  closedFor(method: string, path: string, headers: Record<string, string>): number | undefined;
  /** Notes an answer's rate-limit headers for the route. */
  note(method: string, path: string, headers: Record<string, string>, answer: Headers): void;
}

export function createRateGate(now: () => number = () => performance.now()): RateGate {
  const closedUntil = new Map<string, number>();
  const keyOf = (method: string, path: string, headers: Record<string, string>) => {
    const credential = createHash("sha256").update(headers["authorization"] ?? "").digest("base64url").slice(0, 22);
    return `${credential} ${method} ${path.split("?")[0]}`;
  };
  return {
    closedFor(method, path, headers) {
      const key = keyOf(method, path, headers);
      const until = closedUntil.get(key);
      if (until === undefined) return undefined;
      const left = until - now();
      if (left > 0) return Math.ceil(left / 1000);
      closedUntil.delete(key);
      return undefined;
    },
    note(method, path, headers, answer) {
      if (answer.get("x-ratelimit-remaining") !== "0") return;
      const seconds = Number.parseFloat(answer.get("x-ratelimit-reset-after") ?? "");
      if (!Number.isFinite(seconds) || seconds <= 0) return;
      if (closedUntil.size >= MAX_ROUTES) closedUntil.delete(closedUntil.keys().next().value!);
      closedUntil.set(keyOf(method, path, headers), now() + Math.min(seconds, 3600) * 1000);
    },
  };
}
