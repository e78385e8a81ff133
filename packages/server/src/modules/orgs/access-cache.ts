import type { AppDb, Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { OrgRole, ProjectRole } from "./policy.js";
import type { ProjectRow } from "./store.js";

/**
 * The facts access decisions are made from (a membership and its role; a project and the explicit role
 * in it), kept for SVC_AUTH_CACHE_TTL_MS so a burst of calls does not read them on every request. The
 * action is still checked against the role matrix on every call; only the reads are saved. Refusals are
 * never cached.
 *
 * One cache per process, because `requireOrg` is called with a transaction from every module; keys are
 * database UUIDs, so servers on different databases in one process (the tests) cannot collide.
 *
 * Staleness is bounded twice: entries expire after the TTL, and a transaction that locks an org row (every
 * change to who may act in an org does, see `lockOrgForChange`) reads fresh facts and, once committed,
 * drops everything cached for that org in this process. Another process notices within the TTL.
 */
export interface OrgFacts {
  orgId: string;
  membershipId: string;
  orgRole: OrgRole;
}

export interface ProjectFacts extends OrgFacts {
  project: ProjectRow;
  explicitRole: ProjectRole | null;
}

const MAX_ENTRIES = 20_000;

let orgFacts = new TtlCache<string, OrgFacts>(0, MAX_ENTRIES);
let projectFacts = new TtlCache<string, ProjectFacts>(0, MAX_ENTRIES);

/** Set once at boot from the config; until then (and with 0) nothing is cached. */
export function configureAccessCache(ttlMs: number): void {
  orgFacts = new TtlCache(ttlMs, MAX_ENTRIES);
  projectFacts = new TtlCache(ttlMs, MAX_ENTRIES);
}

/** Transactions that hold an org row lock: they must decide on what the database says now. */
const lockedTransactions = new WeakSet<object>();

export function markOrgLocked(tx: Tx, orgId: string): void {
  lockedTransactions.add(tx);
  tx.afterCommit(() => forgetOrg(orgId));
}

/** Drops what this process cached about `orgId` (a change to its projects or who may act in it). */
export function forgetOrg(orgId: string): void {
  orgFacts.forget((facts) => facts.orgId === orgId);
  projectFacts.forget((facts) => facts.orgId === orgId);
}

function principalKey(principal: Principal): string {
  return principal.kind === "user" ? `u:${principal.userId}` : `k:${principal.keyId}`;
}

/** Reads through the cache, unless `tx` holds an org lock; `load` returns undefined for a refusal. */
async function through<V>(cache: TtlCache<string, V>, tx: Tx | AppDb, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
  const fresh = lockedTransactions.has(tx);
  const cached = fresh ? undefined : cache.get(key);
  if (cached !== undefined) return cached;
  const since = cache.version();
  const loaded = await load();
  if (loaded !== undefined && !fresh) cache.set(key, loaded, since);
  return loaded;
}

export function cachedOrgFacts(tx: Tx | AppDb, principal: Principal, orgId: string, load: () => Promise<OrgFacts | undefined>) {
  return through(orgFacts, tx, `${principalKey(principal)}|${orgId}`, load);
}

export function cachedProjectFacts(
  tx: Tx | AppDb,
  principal: Principal,
  orgId: string,
  projectId: string,
  load: () => Promise<ProjectFacts | undefined>,
) {
  return through(projectFacts, tx, `${principalKey(principal)}|${orgId}|${projectId}`, load);
}
