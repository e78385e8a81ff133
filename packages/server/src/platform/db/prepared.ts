import type { AppDb, Tx } from "./types.js";

type Db = AppDb | Tx;

/**
 * A query built once per database handle. Drizzle builds a query's SQL text from its builder objects on
 * every call, and for the API's most frequent reads that cost more CPU than the database spent answering
 * them (a CPU profile of the load test: drizzle's building was the largest share of the main thread).
 * `build` returns drizzle's prepared query, written with `sql.placeholder`s; only the values change.
 * The first handle is usually the long-lived `db.read`; a transaction's handle builds its own once.
 */
export function builtOnce<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const byHandle = new WeakMap<Db, Q>();
  return (db) => {
    let query = byHandle.get(db);
    if (query === undefined) byHandle.set(db, (query = build(db)));
    return query;
  };
}
