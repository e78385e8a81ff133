import { Column, getTableName, is, SQL, Subquery, type DriverValueDecoder } from "drizzle-orm";

/**
 * What drizzle (0.45.4) keeps on a prepared select to map its rows: the selected fields in column order
 * (each with its path in the result object) and, for queries with joins, which tables are not nullable.
 * Drizzle marks both internal; they are plain fields set by `prepare()`.
 */
export interface SelectMapping {
  fields?: { path: string[]; field: unknown }[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: (rows: unknown[][]) => unknown;
}

interface MappedColumn {
  /** The result object's keys down to this column's parent ([] for a top-level column). */
  parents: string[];
  key: string;
  decoder: DriverValueDecoder<unknown, unknown>;
}

/** A left-joined group that comes back as null when its first column does (drizzle's rule, below). */
interface NullableGroup {
  key: string;
  firstColumn: number;
}

/**
 * A row mapper equivalent to drizzle's `mapResultRow` for one query, with everything that depends only
 * on the query worked out once. Drizzle's own mapper re-derives each column's decoder (prototype walks),
 * walks each path through an iterator and looks up table names for every value of every row; on an event
 * page of 100 rows with five joins that was about 0.8 ms of CPU, more than the database spent on the page
 * (a CPU profile of issue 8's event page benchmark).
 *
 * Drizzle's null rule for joined groups, kept exactly: a group (a nested object of columns) becomes null
 * when the join may leave its table empty, every column of the group is from that one table, and the
 * group's first column is null.
 */
export function compileRowMapper(mapping: SelectMapping): ((rows: unknown[][]) => Record<string, unknown>[]) | undefined {
  const { fields, joinsNotNullableMap } = mapping;
  if (!fields || mapping.customResultMapper) return undefined;
  const columns: MappedColumn[] = fields.map(({ path, field }) => ({ parents: path.slice(0, -1), key: path.at(-1)!, decoder: decoderOf(field) }));
  const groups = joinsNotNullableMap ? nullableGroups(fields, joinsNotNullableMap) : [];
  const mapRow = (row: unknown[]): Record<string, unknown> => {
    const result: Record<string, unknown> = {};
    for (let index = 0; index < columns.length; index++) {
      const { parents, key, decoder } = columns[index]!;
      let node = result;
      for (const parent of parents) node = (node[parent] ??= {}) as Record<string, unknown>;
      const raw = row[index];
      node[key] = raw === null ? null : decoder.mapFromDriverValue(raw);
    }
    for (const group of groups) {
      if ((result[group.key] as Record<string, unknown>)[fields[group.firstColumn]!.path[1]!] === null) result[group.key] = null;
    }
    return result;
  };
  return (rows) => rows.map(mapRow);
}

/** An SQL fragment's decoder (`.mapWith()`), internal in drizzle's types. */
type Decoded = { decoder: DriverValueDecoder<unknown, unknown> };

function decoderOf(field: unknown): DriverValueDecoder<unknown, unknown> {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return (field as unknown as Decoded).decoder;
  if (is(field, Subquery)) return (field as unknown as { _: { sql: Decoded } })._.sql.decoder;
  return (field as unknown as { sql: Decoded }).sql.decoder;
}

/**
 * The groups drizzle may null. It decides per row from the group's first column at depth two, and drops
 * a group whose depth-two columns come from more than one table; both depend on the query only.
 */
function nullableGroups(fields: NonNullable<SelectMapping["fields"]>, joinsNotNullableMap: Record<string, boolean>): NullableGroup[] {
  const byKey = new Map<string, { firstColumn: number; table: string | false }>();
  fields.forEach(({ path, field }, index) => {
    if (path.length !== 2 || !is(field, Column)) return;
    const table = getTableName(field.table);
    const seen = byKey.get(path[0]!);
    if (!seen) byKey.set(path[0]!, { firstColumn: index, table });
    else if (seen.table !== table) seen.table = false;
  });
  return [...byKey].filter(([, group]) => group.table !== false && !joinsNotNullableMap[group.table]).map(([key, group]) => ({ key, firstColumn: group.firstColumn }));
}
