import type { Config } from "../../config.js";
import { TaskUnavailable, type MaintenanceTask } from "../../maintenance.js";
import type { Database } from "../../platform/db/index.js";
import { outboundGet } from "../../platform/net/outbound-http.js";
import { readRegistryPage, type RegistryPage } from "./registry-page.js";
import { SHIPPED_REGISTRY_PAGE } from "./registry-snapshot.js";
import * as store from "./store.js";

/**
 * Keeps the MCP registry snapshot fresh (docs/mcp.md). Each maintenance run reads at most a few pages of
 * `GET /v0.1/servers` and applies each in its own short transaction together with the cursor it reached,
 * so a pass is resumed where it stopped, whatever process runs maintenance next. The network is never
 * waited on inside a transaction. The first pass lists everything (and ends by deleting what the
 * registry no longer lists); later ones ask for what changed since the newest change seen, the registry
 * then listing deleted and deprecated servers too, which leave the snapshot.
 */

export type RegistrySettings = Pick<Config, "mcpRegistryUrl" | "allowPrivateNetwork">;

const PAGES_PER_RUN = 5;
const PAGE_SIZE = 100;
/** A pass starts at most this often once one has finished. */
const REFRESH_SECONDS = 3600;
/**
 * Maintenance runs its tasks one after another, and lease reaping must not wait long on a slow registry:
 * no page may take longer than this, and no page is asked for once a run has spent `RUN_BUDGET_MS`.
 */
const PAGE_TIMEOUT_MS = 15_000;
const RUN_BUDGET_MS = 10_000;
/** A page of 100 servers is a few hundred KiB. */
const MAX_PAGE_BYTES = 16 * 1024 * 1024;
/** Incremental passes look back a little further than the newest change seen: changes written in the same instant are not missed. */
const OVERLAP_MS = 60_000;

/** After a failed run (an offline host, a registry down), the next waits 1, 2, 4… minutes, at most an hour. */
const FIRST_BACKOFF_MS = 60_000;

export function mcpRegistrySync(db: Database, settings: RegistrySettings): MaintenanceTask {
  // Kept in the process, not the database: it paces this process's attempts and their warnings (one per
  // failed run), and a restarted process may well try at once.
  let failures = 0;
  let resumeAt = 0;
  return {
    name: "mcp-registry-sync",
    async run() {
      if (performance.now() < resumeAt) return 0;
      try {
        const handled = await syncRegistry(db, settings);
        failures = 0;
        return handled;
      } catch (err) {
        const waitMs = Math.min(FIRST_BACKOFF_MS * 2 ** failures, REFRESH_SECONDS * 1000);
        resumeAt = performance.now() + waitMs;
        failures += 1;
        if (err instanceof TaskUnavailable) throw new TaskUnavailable(`${err.message}; trying again in ${waitMs / 60_000} min`, { cause: err.cause });
        throw err;
      }
    },
  };
}

/** One bounded run; returns how many servers it wrote or removed. */
export async function syncRegistry(db: Database, settings: RegistrySettings): Promise<number> {
  let handled = await loadShippedSnapshot(db);
  const url = settings.mcpRegistryUrl;
  if (url === undefined) return handled;
  const started = performance.now();
  for (let read = 0; read < PAGES_PER_RUN && performance.now() - started < RUN_BUDGET_MS; read += 1) {
    const state = await passToContinue(db, url);
    if (!state) break;
    const page = readRegistryPage(await fetchPage(url, state, settings));
    const applied = await applyPage(db, state, page);
    if (applied === undefined) continue;
    handled += applied.count;
    if (applied.closed) break;
  }
  return handled;
}

/** The first run ever loads the snapshot svc ships with, so the list answers before any registry does. */
async function loadShippedSnapshot(db: Database): Promise<number> {
  if (await store.readSync(db.read)) return 0;
  return db.tx(async (tx) => {
    if (!(await store.createSync(tx))) return 0;
    const page = readRegistryPage(SHIPPED_REGISTRY_PAGE);
    await store.upsertServers(tx, page.keep, 0);
    return page.keep.length;
  });
}

async function passToContinue(db: Database, url: string): Promise<store.SyncRow | undefined> {
  const state = await store.readSync(db.read);
  if (state?.open && state.sourceUrl === url) return state;
  return store.openPass(db.write, url, REFRESH_SECONDS);
}

async function fetchPage(url: string, state: store.SyncRow, settings: RegistrySettings): Promise<unknown> {
  const query = new URLSearchParams({ version: "latest", limit: String(PAGE_SIZE) });
  if (state.cursor) query.set("cursor", state.cursor);
  if (!state.full && state.updatedSince) query.set("updated_since", new Date(state.updatedSince.getTime() - OVERLAP_MS).toISOString());
  const headers = { accept: "application/json", "user-agent": "svc" };
  // Through the SSRF guard like every call svc makes: the operator chose this URL, not a tenant, but a
  // registry on the private network is still a choice SVC_ALLOW_PRIVATE_NETWORK makes.
  // Unreachable (offline, refused, too slow) or failing, the registry is the world's problem: a warning, no stack.
  const { status, body } = await outboundGet(`${url}/v0.1/servers?${query}`, { headers, timeoutMs: PAGE_TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES }, settings).catch(
    (err: unknown) => {
      throw new TaskUnavailable(`the MCP registry at ${url} could not be read (${err instanceof Error ? err.message : String(err)})`, { cause: err });
    },
  );
  if (status !== 200) throw new TaskUnavailable(`the MCP registry at ${url} answered HTTP ${status}`);
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    throw new Error(`the MCP registry at ${url} answered with something other than JSON`);
  }
}

/** Applies a page if the pass is still where it was when the page was asked for; undefined otherwise. */
async function applyPage(db: Database, state: store.SyncRow, page: RegistryPage): Promise<{ count: number; closed: boolean } | undefined> {
  return db.tx(async (tx) => {
    const current = await store.lockSync(tx);
    if (!current?.open || current.pass !== state.pass || current.cursor !== state.cursor) return undefined;
    await store.upsertServers(tx, page.keep, state.pass);
    await store.deleteServers(tx, page.drop);
    // A registry that hands back the cursor it was given would be read forever: the pass ends there.
    const cursor = page.nextCursor === state.cursor ? undefined : page.nextCursor;
    const newest = page.newest && (!current.updatedSince || page.newest > current.updatedSince) ? page.newest : current.updatedSince;
    await store.advanceSync(tx, { cursor, updatedSince: newest });
    const swept = cursor === undefined && state.full ? await store.deleteOlderPasses(tx, state.pass) : 0;
    return { count: page.keep.length + page.drop.length + swept, closed: cursor === undefined };
  });
}
