import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../errors.js";
import { sseFrame } from "./sse.js";

/**
 * Whether the caller of a long-lived response may still have it: null while it may, else why not. A check
 * that throws could not tell (the database is away, say) and is asked again at the next round.
 */
export type AccessCheck = () => Promise<{ code: "unauthorized" | "forbidden"; message: string } | null>;

/** Codes that mean the caller may no longer read what it follows, as opposed to a failure to find out. */
const REFUSALS = new Set(["unauthorized", "forbidden", "not_found"]);

/**
 * A route's AccessCheck: the request's credentials resolved again (null when revoked, expired or signed out),
 * then the route's own access rule run for that principal, which throws as the route would answer.
 */
export function accessCheck<P>(principalAgain: () => Promise<P | null>, allowed: (principal: P) => Promise<unknown>): AccessCheck {
  return async () => {
    const principal = await principalAgain();
    if (principal === null) return { code: "unauthorized", message: "the stream's credentials were revoked or its session ended" };
    try {
      await allowed(principal);
      return null;
    } catch (err) {
      if (err instanceof AppError && REFUSALS.has(err.code)) return { code: "forbidden", message: "access to what this stream follows was withdrawn" };
      throw err;
    }
  };
}

/** The `error` frame that ends a stream whose access was withdrawn (spec, Events: after an error frame the client reconnects). */
export function withdrawnFrame(refusal: { code: string; message: string }): string {
  return sseFrame("error", JSON.stringify({ error: refusal.message, code: refusal.code }));
}

interface Watched {
  check: AccessCheck;
  withdraw: (refusal: { code: "unauthorized" | "forbidden"; message: string }) => void;
  dueAt: number;
}

/**
 * Re-checks the access of open streams every `intervalMs` (SVC_STREAM_ACCESS_RECHECK_MS): a revoked key or
 * token, an ended session or a member removed from the project stops receiving within that time, rather
 * than for as long as the connection lasts. One ticker for all streams; the checks of a round run one after
 * another, so a thousand open streams never make a thousand concurrent reads.
 */
export class AccessWatch {
  private readonly watched = new Set<Watched>();
  private readonly ticker: NodeJS.Timeout;
  private round: Promise<void> = Promise.resolve();
  private rounding = false;

  constructor(
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.ticker = setInterval(() => this.startRound(), Math.max(100, Math.min(5_000, Math.floor(intervalMs / 4))));
    this.ticker.unref();
  }

  /** Watches one stream until the returned function is called; `withdraw` ends it. */
  watch(check: AccessCheck, withdraw: Watched["withdraw"]): () => void {
    const entry: Watched = { check, withdraw, dueAt: Date.now() + this.intervalMs };
    this.watched.add(entry);
    return () => void this.watched.delete(entry);
  }

  /** Stops the ticker and waits for a round under way. */
  async close(): Promise<void> {
    clearInterval(this.ticker);
    this.watched.clear();
    await this.round;
  }

  private startRound(): void {
    if (this.rounding) return;
    this.rounding = true;
    this.round = this.checkDue().finally(() => (this.rounding = false));
  }

  private async checkDue(): Promise<void> {
    const now = Date.now();
    for (const entry of [...this.watched]) {
      if (entry.dueAt > now || !this.watched.has(entry)) continue;
      entry.dueAt = Date.now() + this.intervalMs;
      try {
        const refusal = await entry.check();
        if (refusal && this.watched.delete(entry)) entry.withdraw(refusal);
      } catch (err) {
        this.log.warn({ err }, "event stream: re-checking the caller's access failed; asking again later");
      }
    }
  }
}
