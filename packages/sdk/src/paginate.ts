/** A page of one of the spec's cursor lists: `{data, next_cursor}`, next_cursor null on the last page. */
export interface CursorPage<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * Every item of a cursor list, fetching pages as the loop asks for them:
 * `for await (const agent of paginate((cursor) => unwrap(client.GET(path, { params: { …, query: { cursor } } }))))`.
 * Stops at the page whose next_cursor is null; a repeated cursor is a server fault and throws rather than loop.
 */
export async function* paginate<T>(page: (cursor: string | undefined) => Promise<CursorPage<T>>): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const current = await page(cursor);
    yield* current.data;
    if (current.next_cursor === null) return;
    if (seen.has(current.next_cursor)) throw new Error("the list returned a cursor it had returned before");
    seen.add(current.next_cursor);
    cursor = current.next_cursor;
  }
}

/** All items of a cursor list in one array, at most `max` (a guard against unbounded memory). */
export async function collect<T>(items: AsyncIterable<T>, max = 10_000): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) {
    all.push(item);
    if (all.length >= max) break;
  }
  return all;
}
