import pg from "pg";
import { StatementNames } from "./statement-names.js";

/*
 * PostgreSQL plans an unnamed statement again on every call; for svc's larger statements (the claim, the
 * record, an append, a page of events) planning cost more than running them. A named prepared statement is
 * parsed once per connection and PostgreSQL may keep a generic plan after a few calls. So every
 * parameterized statement svc sends often enough is named (statement-names.ts says which).
 *
 * A pooler in front of PostgreSQL must support prepared statements (see docs/architecture.md, Storage).
 */

// One set of names for the process: every pooled connection prepares a named text the first time it runs it.
const names = new StatementNames();

/** The statement name for `text`, or undefined while it is not (yet) worth one. */
export function statementName(text: string): string | undefined {
  return names.nameOf(text);
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
