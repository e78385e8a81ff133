import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import { rawRows } from "./raw.js";
import type { Database } from "./types.js";

/**
 * PGlite runs no autovacuum daemon, so nothing ever refreshes the planner's statistics: without them it
 * guesses row counts and may join whole tables before limiting (issue 8 measured event pages this way).
 * svc runs ANALYZE itself on the embedded database: after migrations, and from maintenance on the tables that
 * changed enough since.
 * A PostgreSQL server's autovacuum already does this, so nothing here touches it.
 */
export async function analyzeEmbedded(db: Database): Promise<void> {
  if (db.kind !== "embedded") return;
  await db.tx(async (tx) => void (await tx.execute(sql`ANALYZE`)));
}

/**
 * The tables whose rows changed enough since their last ANALYZE by autovacuum's default rule (more than 50
 * rows plus 10 % of the rows the planner thinks the table has), from the activity statistics PGlite keeps as
 * PostgreSQL does; quoted by the database itself. A burst of new agents or inputs on an embedded database that
 * was analyzed while nearly empty otherwise keeps the planner on plans for empty tables: 500 agents launched at
 * once stepped 4 times slower until an ANALYZE (docs/performance.md).
 */
const CHANGED_TABLES = sql`SELECT format('%I.%I', s.schemaname, s.relname) AS name
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)`;

/** Analyzes the embedded database's tables that changed enough (see CHANGED_TABLES); answers how many. */
export async function analyzeChangedTables(db: Database): Promise<number> {
  if (db.kind !== "embedded") return 0;
  return db.tx(async (tx) => {
    const changed = await rawRows<{ name: string }>(tx, CHANGED_TABLES);
    if (changed.length > 0) await tx.execute(sql.raw(`ANALYZE ${changed.map((table) => table.name).join(", ")}`));
    return changed.length;
  });
}

/**
 * A maintenance task that looks every `everyMs` (0: never) for tables of the embedded database that changed
 * enough to analyze, as autovacuum's autoanalyze does on a PostgreSQL server. Maintenance may tick more often,
 * so the task keeps its own schedule; the first look waits a whole interval, since opening the database with
 * migrations has just analyzed it. The schedule is process-local and stored nowhere, so the monotonic clock
 * is the right one here, not the database's.
 */
export function embeddedAnalyzeTask(db: Database, everyMs: number): Array<{ name: string; run(): Promise<number> }> {
  if (db.kind !== "embedded" || everyMs <= 0) return [];
  let last = performance.now();
  return [
    {
      name: "embedded-analyze",
      async run() {
        if (performance.now() - last < everyMs) return 0;
        last = performance.now();
        return analyzeChangedTables(db);
      },
    },
  ];
}
