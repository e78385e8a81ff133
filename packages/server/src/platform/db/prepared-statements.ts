import pg from "pg";

/*
 * PostgreSQL plans an unnamed statement again on every call; for svc's larger statements (the claim, the
 * record, an append, a page of events) planning cost more than running them. A named prepared statement is
 * parsed once per connection and PostgreSQL may keep a generic plan after a few calls. So every
 * parameterized statement svc sends often enough is named: by text, in the order first met, up to a bound
 * (each connection keeps what it prepared until it closes, so a flood of one-off texts must not grow it).
 *
 * A pooler in front of PostgreSQL must support prepared statements (see docs/architecture.md, Storage).
 */

// Sightings before a text is named: a statement run once or twice is not worth a slot on every connection.
const SIGHTINGS_BEFORE_NAMING = 3;
const MAX_NAMED = 1_000;
// Counting is bounded too: when full it starts over, which only delays naming.
const MAX_COUNTED = 10_000;

const names = new Map<string, string>();
const sightings = new Map<string, number>();

/** The statement name for `text`, or undefined while it is not (yet) worth one. */
export function statementName(text: string): string | undefined {
  const name = names.get(text);
  if (name !== undefined || names.size >= MAX_NAMED) return name;
  const seen = (sightings.get(text) ?? 0) + 1;
  if (seen < SIGHTINGS_BEFORE_NAMING) {
    if (sightings.size >= MAX_COUNTED) sightings.clear();
    sightings.set(text, seen);
    return undefined;
  }
  sightings.delete(text);
  const named = `svc_${names.size + 1}`;
  names.set(text, named);
  return named;
}

interface QueryConfig {
  text: string;
  name?: string;
  values?: unknown[];
}

/** A pg client that names svc's frequent parameterized statements (drizzle sends them as config objects). */
export class PreparingClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config, values] = args as [QueryConfig | string, unknown[] | undefined];
    const parameters = typeof config === "object" ? (config.values ?? values) : undefined;
    if (typeof config === "object" && config.name === undefined && typeof config.text === "string" && Array.isArray(parameters) && parameters.length > 0) {
      const name = statementName(config.text);
      if (name !== undefined) args[0] = { ...config, name };
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}
