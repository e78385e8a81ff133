import pg from "pg";
import { StatementNames } from "./statement-names.js";
import { statementAfterLast } from "./transaction.js";
import type { CommitsBehind } from "./types.js";

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

type Send = (...args: unknown[]) => Promise<unknown>;

/**
 * A pg client that names svc's frequent parameterized statements (drizzle sends them as config objects),
 * and does not wait for a transaction's BEGIN: the pool's clients run in pipeline mode, so the
 * transaction's first statement goes on the wire behind it and PostgreSQL runs them in that order. That
 * is one round trip fewer per transaction (an API append took 0.25 ms less at p50, sent in turn with and
 * without it). BEGIN fails only when the connection or the server does, and then so does every statement
 * behind it; its error is what the next statement's caller sees.
 *
 * The same way, a transaction's last statement can take its COMMIT along (`Tx.commitWith`): the COMMIT is
 * sent behind it, and drizzle's own COMMIT (or ROLLBACK) that follows is answered here without a trip.
 * A statement that fails leaves the transaction aborted, and PostgreSQL ends an aborted transaction's
 * COMMIT with a rollback, so nothing of it is kept.
 */
export class PreparingClient extends pg.Client implements CommitsBehind {
  private pendingBegin: Promise<unknown> | undefined;
  private commitBehindNext = false;
  /** The transaction ended with the COMMIT sent behind its last statement; only drizzle's end may follow. */
  private committedEarly = false;

  commitBehindNextStatement(): void {
    this.commitBehindNext = true;
  }

  override query(...args: unknown[]): never {
    const [config, values] = args as [QueryConfig | string, unknown[] | undefined];
    const send = super.query as Send;
    const text = typeof config === "string" ? config : config.text;
    const parameters = typeof config === "object" ? (config.values ?? values) : values;
    // What drizzle's node-postgres session sends to open and end a transaction (no options, no callback).
    const boundary = !parameters?.length && typeof args.at(-1) !== "function" && TRANSACTION_BOUNDARIES.has(text) ? text : undefined;
    if (boundary === "begin") {
      // Settled to its error (or undefined) at once, so a failure is never an unhandled rejection.
      this.pendingBegin = send.apply(this, args).then(
        () => undefined,
        (err: unknown) => err,
      );
      return Promise.resolve(answered("BEGIN")) as never;
    }
    if (this.committedEarly) {
      if (boundary === undefined) return Promise.reject(statementAfterLast()) as never;
      this.committedEarly = false;
      return Promise.resolve(answered(boundary.toUpperCase())) as never;
    }
    if (boundary !== undefined) {
      // commitWith's `last` sent no statement: the transaction ends as usual.
      this.commitBehindNext = false;
      return send.apply(this, args) as never;
    }
    if (typeof config === "object" && config.name === undefined && typeof text === "string" && Array.isArray(parameters) && parameters.length > 0) {
      const name = statementName(text);
      if (name !== undefined) args[0] = { ...config, name };
    }
    const sent = this.afterBegin(send.apply(this, args));
    if (!this.commitBehindNext || !(sent instanceof Promise)) return sent as never;
    this.commitBehindNext = false;
    this.committedEarly = true;
    const commit = send.call(this, "commit");
    commit.catch(() => {});
    return Promise.all([sent, commit]).then(([result]) => result) as never;
  }

  /** A statement sent behind an unanswered BEGIN: BEGIN's error, if it failed, is this statement's. */
  private afterBegin(sent: unknown): unknown {
    const begin = this.pendingBegin;
    if (begin === undefined || !(sent instanceof Promise)) return sent;
    this.pendingBegin = undefined;
    return begin.then((err) => {
      if (err !== undefined) {
        sent.catch(() => {});
        throw err;
      }
      return sent;
    });
  }
}

const TRANSACTION_BOUNDARIES = new Set<unknown>(["begin", "commit", "rollback"]);

function answered(command: string) {
  return { command, rowCount: null, rows: [], fields: [] };
}
