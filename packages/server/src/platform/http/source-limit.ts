import { performance } from "node:perf_hooks";
import type { FastifyInstance } from "fastify";
import { rateLimited } from "../rate-limit.js";
import { TtlCache } from "../ttl-cache.js";

/** The most client addresses counted at once; beyond it the least recently seen are forgotten (and start afresh). */
const MAX_SOURCES = 20_000;
const WINDOW_MS = 60_000;

/**
 * A per-source budget for public routes anyone can call (the providers' inbound routes): at most
 * `perMinute` requests a minute from one client address, as the server's trust-proxy setting sees it
 * (`request.ip`). Checked on arrival, before the body is read or anything is looked up, and kept in this
 * process's memory: a flood costs no database work, and every process counts its own share. Answers 429
 * `rate_limited` with Retry-After (the seconds until the source's window ends). 0 sets no limit.
 *
 * Fixed windows on the monotonic clock: they are process-local and never compared with database times.
 */
export function limitPerSource(scope: FastifyInstance, perMinute: number): void {
  if (perMinute <= 0) return;
  const windows = new TtlCache<string, { count: number; endsAt: number }>(WINDOW_MS, MAX_SOURCES);
  scope.addHook("onRequest", async (request) => {
    const now = performance.now();
    const window = windows.get(request.ip);
    if (!window) {
      windows.set(request.ip, { count: 1, endsAt: now + WINDOW_MS }, windows.version());
      return;
    }
    window.count += 1;
    if (window.count > perMinute) throw rateLimited(Math.ceil((window.endsAt - now) / 1000));
  });
}
