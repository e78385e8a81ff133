import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Database } from "../../../../platform/db/index.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { SecretsService } from "../../../secrets/service.js";
import { createRestClient, scalarMember } from "../rest.js";
import { RESUMABLE_CLOSE, runGatewayConnection } from "./gateway-connection.js";
import * as store from "./gateway-store.js";

/** Reconnect backoff: doubling from 1 second to at most a minute, with jitter. */
const MIN_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
/** After Discord refused for good (a revoked token, intents not enabled), the next try waits this long, or for a reconnect. */
const FATAL_RETRY_MS = 10 * 60_000;

export interface GatewayManagerOptions {
  db: Database;
  secrets: Pick<SecretsService, "resolvePayload">;
  apiUrl: string;
  policy: OutboundPolicy;
  /** How long a lease lasts unrenewed; the manager scans and renews every third of it. */
  leaseSeconds: number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

interface Held {
  target: store.GatewayTarget;
  abort: AbortController;
  /** How to close when aborted: 1000 ends the session at Discord (disconnect, delete), RESUMABLE_CLOSE keeps it (shutdown, lease lost). */
  closeCode: number;
  done: Promise<void>;
}

/**
 * Holds the Discord Gateway connections of this process: every scan claims the lease of each active
 * discord_thread integration nobody holds (so across all svc processes exactly one connection exists
 * per integration), renews the leases it holds, and stops the connections whose integration was
 * disconnected or deleted or whose lease was lost. `stop` closes every connection resumably and
 * releases its lease, so another process resumes the session at once.
 */
export function createGatewayManager(options: GatewayManagerOptions) {
  // Host and pid first, as a worker's id: an operator (or a test) reading the lease sees which process holds it.
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(-12)}`;
  const held = new Map<string, Held>();
  const rest = createRestClient({ provider: "Discord", baseUrl: options.apiUrl, policy: options.policy });
  const { db, leaseSeconds } = options;

  async function scan(): Promise<void> {
    const targets = new Map((await store.activeDiscordIntegrations(db.read)).map((target) => [target.integrationId, target]));
    for (const [id, connection] of held) {
      const target = targets.get(id);
      if (!target || target.credentialSecretId !== connection.target.credentialSecretId || target.setupRevision !== connection.target.setupRevision) {
        await end(connection, 1000, true);
      } else if (!(await store.renewLease(db.write, id, holder, leaseSeconds))) {
        await end(connection, RESUMABLE_CLOSE, false);
      }
    }
    for (const target of targets.values()) {
      if (held.has(target.integrationId)) continue;
      const session = await store.claimLease(db.write, target.integrationId, holder, leaseSeconds);
      if (session) start(target, session);
    }
  }

  function start(target: store.GatewayTarget, session: store.StoredSession): void {
    const abort = new AbortController();
    const connection: Held = { target, abort, closeCode: RESUMABLE_CLOSE, done: Promise.resolve() };
    connection.done = hold(connection, session).catch((err: unknown) => options.log.warn({ err, integration_id: target.integrationId }, "Discord Gateway connection failed"));
    held.set(target.integrationId, connection);
  }

  /** Connects, and connects again after each drop with backoff, until aborted or Discord refuses for good. */
  async function hold(connection: Held, stored: store.StoredSession): Promise<void> {
    const { target, abort } = connection;
    let session = stored;
    let failures = 0;
    while (!abort.signal.aborted) {
      let failure: string | undefined;
      await store.clearRuntimeFailure(db.write, target.integrationId);
      const outcome = await connectOnce(connection, session, (next) => (session = next)).catch((err: unknown) => {
        if (err instanceof store.LeaseLost) abort.abort();
        failure = (err as Error).message;
        return undefined;
      });
      if (outcome?.fresh) {
        session = { sessionId: null, resumeGatewayUrl: null, seq: null };
        await store.saveSession(db.write, target.integrationId, holder, session).catch(() => abort.abort());
      }
      failures = outcome?.ready ? 0 : failures + 1;
      failure = outcome?.fatal ?? failure;
      const delay = outcome?.fatal ? FATAL_RETRY_MS : backoff(failures);
      if (failure !== undefined && !abort.signal.aborted) {
        options.log.warn({ integration_id: target.integrationId, reason: failure }, "Discord Gateway connection failed; retrying later");
        await store.recordRuntimeFailure(db.write, target.integrationId, failure, Math.ceil(delay / 1000));
      }
      await sleep(delay, abort.signal);
    }
  }

  async function connectOnce(connection: Held, session: store.StoredSession, update: (next: store.StoredSession) => void) {
    const { target, abort } = connection;
    const token = await botToken(target);
    const resuming = session.sessionId !== null && session.seq !== null && session.resumeGatewayUrl !== null;
    const url = resuming ? session.resumeGatewayUrl! : await gatewayUrl(token);
    let current = session;
    return runGatewayConnection({
      url,
      token,
      session,
      policy: options.policy,
      signal: abort.signal,
      closeCode: () => connection.closeCode,
      handlers: {
        async onReady(ready) {
          current = { sessionId: ready.sessionId, resumeGatewayUrl: ready.resumeGatewayUrl, seq: ready.seq };
          update(current);
          await store.saveSession(db.write, target.integrationId, holder, current);
        },
        async onMessage(seq, message) {
          await store.recordMessage(db, target.integrationId, holder, seq, { id: message["id"] as string, payload: message });
          current = { ...current, seq };
          update(current);
        },
      },
    });
  }

  async function botToken(target: store.GatewayTarget): Promise<string> {
    const material = await db.tx((tx) => options.secrets.resolvePayload(tx, target.orgId, target.projectId, target.credentialSecretId));
    if (material.kind !== "generic") throw new Error("the integration's credential is not a generic secret");
    return material.value;
  }

  /** `GET /gateway/bot`: where to connect (Discord docs: "Get Gateway Bot"), as Discord's own clients ask. */
  async function gatewayUrl(token: string): Promise<string> {
    const answer = await rest.call("GET", "/gateway/bot", { authorization: `Bot ${token}` });
    const url = scalarMember(answer.body, "url");
    if (answer.status !== 200 || !url || !/^wss?:\/\//.test(url)) throw new Error(`Discord's GET /gateway/bot answered HTTP ${answer.status} without a Gateway URL`);
    return url;
  }

  async function end(connection: Held, closeCode: number, forget: boolean): Promise<void> {
    held.delete(connection.target.integrationId);
    connection.closeCode = closeCode;
    connection.abort.abort();
    await connection.done;
    await store.releaseLease(db.write, connection.target.integrationId, holder, forget);
  }

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopped = false;
  function next(delay: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = scan()
        .catch((err: unknown) => options.log.warn({ err }, "Discord Gateway scan failed; retrying next tick"))
        .finally(() => {
          inFlight = undefined;
          next((leaseSeconds * 1000) / 3);
        });
    }, delay);
    timer.unref();
  }

  return {
    holder,
    /** Integrations whose connection this manager holds. */
    held: () => [...held.keys()],
    start: () => next(0),
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      for (const connection of [...held.values()]) await end(connection, RESUMABLE_CLOSE, false);
    },
  };
}

export type GatewayManager = ReturnType<typeof createGatewayManager>;

function backoff(failures: number): number {
  if (failures === 0) return 0;
  const ceiling = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** (failures - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms === 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
