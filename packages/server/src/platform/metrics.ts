import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { sql } from "drizzle-orm";
import type { Database } from "./db/index.js";
import { rawRows } from "./db/index.js";

/**
 * What an operator watches, in Prometheus' text format at `GET /metrics` (docs/operations.md): requests,
 * steps, claims, the queue, reaped leases, stream subscribers, the database pool, and the process's own
 * (memory, CPU, event loop). One registry per process role, so tests can run several servers at once.
 */
export function createMetrics(db: Database) {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: "svc_" });
  return {
    registry,
    httpRequests: new Counter({ name: "svc_http_requests_total", help: "HTTP requests answered, by route and status.", labelNames: ["method", "route", "status"], registers }),
    httpDuration: new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by route.",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    steps: new Counter({ name: "svc_steps_total", help: "Worker steps run, by kind (model, tools) and outcome (done, error).", labelNames: ["kind", "outcome"], registers }),
    stepDuration: new Histogram({
      name: "svc_step_duration_seconds",
      help: "Time from a step's claim to its record, by kind.",
      labelNames: ["kind"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    claimDuration: new Histogram({
      name: "svc_claim_duration_seconds",
      help: "Time of a claim transaction, whether it found work or not.",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers,
    }),
    leasesReaped: new Counter({ name: "svc_leases_reaped_total", help: "Runtime leases of dead or stalled workers reaped by maintenance.", registers }),
    streamSubscribers: new Gauge({ name: "svc_stream_subscribers", help: "Open event streams served by this process.", registers }),
    httpWaiting: new Gauge({ name: "svc_http_requests_waiting", help: "API requests waiting for a place under SVC_MAX_CONCURRENT_REQUESTS.", registers }),
    readyWakeups: new Gauge({
      name: "svc_ready_wakeups",
      help: "Agents whose work is ready now (the queue depth), read when scraped.",
      registers,
      async collect() {
        const [row] = await rawRows<{ n: number }>(db.read, sql`SELECT count(*)::int AS n FROM agent_wakeups WHERE ready_at <= statement_timestamp()`);
        this.set(row?.n ?? 0);
      },
    }),
    dbConnections: new Gauge({
      name: "svc_db_pool_connections",
      help: "Database connections of this process, by state (total, idle, waiting requests).",
      labelNames: ["state"],
      registers,
      collect() {
        const pool = db.poolStats();
        this.set({ state: "total" }, pool.total);
        this.set({ state: "idle" }, pool.idle);
        this.set({ state: "waiting" }, pool.waiting);
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
