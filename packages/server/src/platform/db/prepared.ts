import { compileRowMapper, type SelectMapping } from "./row-mapper.js";
import type { AppDb, Tx } from "./types.js";

type Db = AppDb | Tx;

/**
 * The members of drizzle's (0.45.4) handles and prepared queries that rebinding uses. They are marked
 * internal in its types but are plain fields: a handle's `session` holds the driver `client` (the pool, a
 * pooled connection, or the embedded database's client), and a prepared query runs on its own `client`.
 */
export interface HandleInternals {
  session: { client: unknown };
}
interface PreparedInternals {
  client: unknown;
}

/**
 * A query built once, for every handle. Drizzle builds a query's SQL text from its builder objects on
 * every call, and for svc's most frequent statements that cost more CPU than the database spent answering
 * them (a CPU profile of the load test: drizzle's building was the largest share of the main thread; of
 * an API append on PGlite, about a sixth). `build` returns drizzle's prepared query, written with
 * `sql.placeholder`s; only the values change.
 *
 * The first handle of each driver builds it. Any other handle of that driver, a transaction's included,
 * gets a copy bound to its own client: the same text, parameters and row mapping, read through the
 * prototype. So statements inside transactions (locks, claims) are built once too, not once per
 * transaction. A select's rows are mapped by a mapper compiled for it (`row-mapper.ts`), not by drizzle's
 * generic one.
 */
export function builtOnce<Q extends object>(build: (db: Db) => Q): (db: Db) => Q {
  const byHandle = new WeakMap<Db, Q>();
  const byDriver = new Map<unknown, Q>();
  return (db) => {
    let query = byHandle.get(db);
    if (query !== undefined) return query;
    const session = (db as unknown as HandleInternals).session;
    const template = byDriver.get(session.constructor);
    if (template === undefined) byDriver.set(session.constructor, (query = withCompiledMapper(build(db))));
    else query = boundTo(template, session.client);
    byHandle.set(db, query);
    return query;
  };
}

function withCompiledMapper<Q extends object>(query: Q): Q {
  const mapping = query as Q & SelectMapping;
  const mapper = compileRowMapper(mapping);
  if (mapper) mapping.customResultMapper = mapper;
  return query;
}

function boundTo<Q extends object>(template: Q, client: unknown): Q {
  const bound = Object.create(template) as Q & PreparedInternals;
  bound.client = client;
  return bound;
}
