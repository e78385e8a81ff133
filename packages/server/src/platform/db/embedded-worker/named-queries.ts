import { parse, protocol, type PGlite, type Results } from "@electric-sql/pglite";
import { StatementNames } from "../statement-names.js";
import type { RowMode } from "./protocol.js";

const { serialize } = protocol;

/*
 * PGlite's `query()` sends parse, describe, bind, describe, execute and sync as six separate trips into
 * the WebAssembly backend and plans the statement again every time: 279 µs for a small indexed join
 * against 51 µs for the same statement prepared once and then run as one bind/describe/execute/sync
 * buffer (measured in-process, PGlite 0.5.16). svc's frequent statements are therefore prepared by name
 * here, with the same naming rule as the PostgreSQL pool (statement-names.ts); the rest go through
 * `query()` as before. Parameters are serialized as `query()` does, by the types PostgreSQL described.
 *
 * The caller holds PGlite's query lock (`runExclusive`), and outside a transaction its transaction lock.
 */
export class NamedQueries {
  private readonly names = new StatementNames();
  /** Parameter type ids of each prepared statement, by name. */
  private readonly parameterTypes = new Map<string, number[]>();

  constructor(private readonly pg: PGlite) {}

  /** The name to run `sql` by, or undefined while it is not (yet) worth one: run it with `query()`. */
  nameOf(sql: string, params: unknown[]): string | undefined {
    return params.length === 0 ? undefined : this.names.nameOf(sql);
  }

  async run(name: string, sql: string, params: unknown[], rowMode: RowMode, syncToFs: boolean): Promise<Results> {
    const types = this.parameterTypes.get(name) ?? (await this.prepare(name, sql));
    const values = params.map((value, i) => (value === null || value === undefined ? null : this.serialize(value, types[i])));
    const { messages } = await this.pg.execProtocol(
      concat(serialize.bind({ statement: name, values }), serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()),
      { syncToFs },
    );
    return parse.parseResults(messages, this.pg.parsers, { rowMode })[0]!;
  }

  /** The session's prepared statements were deallocated (after a dump). */
  clear(): void {
    this.names.clear();
    this.parameterTypes.clear();
  }

  private async prepare(name: string, sql: string): Promise<number[]> {
    try {
      const { messages } = await this.pg.execProtocol(
        concat(serialize.parse({ name, text: sql }), serialize.describe({ type: "S", name }), serialize.sync()),
        { syncToFs: false },
      );
      const types = parse.parseDescribeStatementResults(messages);
      this.parameterTypes.set(name, types);
      return types;
    } catch (err) {
      this.names.drop(sql);
      throw err;
    }
  }

  private serialize(value: unknown, type: number | undefined): string {
    const serializer = type === undefined ? undefined : this.pg.serializers[type];
    return serializer ? serializer(value) : String(value);
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
