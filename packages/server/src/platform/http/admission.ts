import type { FastifyReply, FastifyRequest } from "fastify";
import type { Gauge } from "prom-client";
import { AppError } from "../errors.js";
import type { HttpApp } from "./app.js";

/** Requests waiting for a place, per place, beyond which svc answers 503 at once rather than queue more. */
const WAITING_PER_PLACE = 16;

type Admission = "waiting" | "admitted" | "done";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Held open for long (an event stream): not counted against the concurrent-request limit. */
    longLived?: boolean;
  }
}

/**
 * At most `limit` API requests are worked on at once; the rest wait their turn, in arrival order, once
 * received and authenticated (a request whose body is still arriving holds no place, so slow senders
 * cannot take them all) and before validation and the handler. Without it, every request in flight would
 * hold memory and take its share of each turn of the event loop, and everything else on the loop waits for
 * those turns: a `/healthz` probe, a stream's next frame, a new connection. A burst's first steps, up to
 * this hook, are spread over turns by pacing.ts. On the embedded database, whose thread answers one
 * statement at a time, more requests in flight add waiting, not throughput (docs/performance.md, load test).
 *
 * Not counted: `/healthz`, `/readyz`, `/metrics` and everything else outside `/api/`, event streams (held
 * open for long), and the machine daemons' routes (a daemon's request may be what a waiting call needs).
 * A place is freed when the reply is ready to send or the client goes away. Beyond `limit` ×
 * WAITING_PER_PLACE waiting requests, svc answers 503 `service_unavailable` (Retry-After: 1) at once.
 */
export function limitConcurrentRequests(app: HttpApp, limit: number, waitingGauge: Gauge): void {
  if (limit <= 0) return;
  let admitted = 0;
  // `waiting` keeps the turns of clients that left until they come up (skipped then); `stillWaiting` counts the rest.
  const waiting: Array<{ request: FastifyRequest; admit: () => void }> = [];
  let stillWaiting = 0;
  const states = new WeakMap<FastifyRequest, Admission>();

  const free = (request: FastifyRequest) => {
    const state = states.get(request);
    if (state === undefined || state === "done") return;
    states.set(request, "done");
    if (state === "waiting") {
      stillWaiting--;
      waitingGauge.dec(); // never admitted: skipped when its turn comes
      return;
    }
    let next = waiting.shift();
    while (next && states.get(next.request) !== "waiting") next = waiting.shift();
    if (!next) {
      admitted--;
      return;
    }
    states.set(next.request, "admitted");
    stillWaiting--;
    waitingGauge.dec();
    next.admit();
  };

  app.addHook("preValidation", (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (!counted(request)) return done();
    reply.raw.once("close", () => free(request));
    if (admitted < limit) {
      admitted++;
      states.set(request, "admitted");
      return done();
    }
    if (stillWaiting >= limit * WAITING_PER_PLACE) {
      states.set(request, "done");
      return done(new AppError("service_unavailable", "svc is answering as many requests as it can; retry shortly", { retryAfterSeconds: 1 }));
    }
    states.set(request, "waiting");
    stillWaiting++;
    waitingGauge.inc();
    waiting.push({ request, admit: () => done() });
  });
  app.addHook("onSend", (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    free(request);
    done(null, payload);
  });
}

function counted(request: FastifyRequest): boolean {
  if (!request.url.startsWith("/api/")) return false;
  const config = request.routeOptions.config as { auth?: string; longLived?: boolean } | undefined;
  return !config?.longLived && config?.auth !== "daemon" && request.headers.upgrade === undefined;
}
