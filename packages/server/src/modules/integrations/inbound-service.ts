import type { Bus } from "../../platform/bus.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { SecretsService } from "../secrets/service.js";
import * as inbound from "./inbound-store.js";
import type { InboundReceiver, InboundRequest, IntegrationKinds } from "./kind.js";
import type { IntegrationRow } from "./store.js";

/** Slack's and Discord's window (Slack docs: "Verifying requests from Slack"): an older or later signature is a replay. */
const SIGNATURE_WINDOW_SECONDS = 5 * 60;
/** How far this process's clock may be from the database's before its early refusal could refuse a good request. */
const CLOCK_MARGIN_SECONDS = 60;
/** Announced on commit by the database whenever a candidate's key may have changed (migration 0022). */
const SIGNERS_CHANNEL = "svc_integration_signers";
/** Provider tenants whose candidates are kept; the least recently asked for go first. */
const MAX_CACHED_TENANTS = 10_000;
/** Cached keys are dropped on every change notice; this bounds how long one lost notice can leave a key stale. */
const CACHED_KEYS_TTL_MS = 60_000;

/** A candidate's key as cached: what verifying needs, and nothing else of the integration. */
interface Candidate {
  integrationId: string;
  identity: Record<string, string>;
  key: string;
}

/**
 * The one receiver of the providers' signed requests (docs/integrations.md, "Inbound requests"), for
 * every kind with an InboundReceiver. In order, and each step only once the one before passed:
 *  1. the kind reads the signature's claims from headers, path and the fewest body members; a request
 *     with no signature is refused here;
 *  2. a timestamp far outside the window by this process's clock is refused (cheap: no database);
 *  3. the candidates' keys come from an in-memory cache (a tenant's integrations, their signing secrets
 *     decrypted once), and the signature must verify with one of them: a forged request costs a few HMACs;
 *  4. only then is the database read: the verifying integrations as they are now, and the database clock,
 *     by which the timestamp must be inside the window.
 * Every refusal is 401 `unauthorized` and changes nothing. The kind's acceptor does the per-integration work.
 */
export function createInboundReceiver(deps: { db: Database; kinds: IntegrationKinds; secrets: Pick<SecretsService, "resolvePayload"> }) {
  const { db, kinds, secrets } = deps;
  const cache = new TtlCache<string, Candidate[]>(CACHED_KEYS_TTL_MS, MAX_CACHED_TENANTS);

  async function loadCandidates(kind: string, receiver: InboundReceiver, tenantId: string | undefined): Promise<Candidate[]> {
    return db.tx(async (tx) => {
      const found: Candidate[] = [];
      for (const row of await inbound.routableIntegrations(tx, kind, tenantId)) {
        const credential = receiver.keyIn === "credential" ? await credentialOf(tx, row) : undefined;
        const key = receiver.keyOf({ credential, providerConfig: row.providerConfig });
        if (key !== undefined) found.push({ integrationId: row.id, identity: row.providerIdentity, key });
      }
      return found;
    });
  }

  async function credentialOf(tx: Tx, row: IntegrationRow) {
    try {
      return await secrets.resolvePayload(tx, row.orgId, row.projectId, row.credentialSecretId!);
    } catch (err) {
      // A credential deleted or no longer shared with the project verifies nothing.
      if (err instanceof AppError && err.code === "not_found") return undefined;
      throw err;
    }
  }

  return {
    /** The integrations of `kind` whose key verified the request, as the database has them now; else 401. */
    async verify(kind: string, request: InboundRequest): Promise<IntegrationRow[]> {
      const receiver = kinds.get(kind)?.inbound;
      if (!receiver) throw new AppError("not_found", `${kind} does not receive requests`);
      const signature = receiver.signature(request);
      // The process clock only refuses early what no database clock could accept; step 4 decides.
      if (signature.signedAt !== undefined && !withinWindow(Date.now() / 1000, signature.signedAt, SIGNATURE_WINDOW_SECONDS + CLOCK_MARGIN_SECONDS)) throw refused();
      const tenantKey = `${kind}\u0000${signature.tenantId ?? ""}`;
      const candidates = (await cache.readThrough(tenantKey, () => loadCandidates(kind, receiver, signature.tenantId))) ?? [];
      const verified = candidates.filter((candidate) => (signature.routesTo?.(candidate.identity) ?? true) && receiver.verify(candidate.key, request));
      if (verified.length === 0) throw refused();
      const { rows, now } = await inbound.signersNow(db.read, verified.map((candidate) => candidate.integrationId));
      if (rows.length === 0 || (signature.signedAt !== undefined && !withinWindow(now, signature.signedAt, SIGNATURE_WINDOW_SECONDS))) throw refused();
      return rows;
    },

    /** Drops every cached key when the database says one may have changed, and after a lost connection; answers how to stop. */
    async follow(bus: Bus): Promise<() => Promise<void>> {
      bus.onReconnect(() => cache.clear());
      return bus.subscribe(SIGNERS_CHANNEL, () => cache.clear());
    },
  };
}

export type InboundReceiverService = ReturnType<typeof createInboundReceiver>;

/** What a kind does with a request once the receiver verified it: the per-integration work, and the provider's answer. */
export interface InboundAcceptor {
  accept(request: InboundRequest, signers: IntegrationRow[]): Promise<InboundAnswer>;
}

export interface InboundAnswer {
  status: number;
  body?: unknown;
}

function withinWindow(now: number, signedAt: number, seconds: number): boolean {
  return Math.abs(now - signedAt) <= seconds;
}

function refused(): AppError {
  return new AppError("unauthorized", "the request's signature does not verify, or its timestamp is outside the five-minute window");
}
