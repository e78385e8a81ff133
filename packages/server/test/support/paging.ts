import { expect } from "vitest";
import type { ApiClient, Reply, RequestOptions } from "./client.js";

/**
 * Follows `next_cursor` from `path` (which may carry its own query) to the last page and returns every
 * item in order. `onPage` adds a file's own checks on each page. Bounded, so a cursor loop fails the test.
 */
export async function collectPages(
  api: ApiClient,
  path: string,
  auth: RequestOptions,
  onPage: (reply: Reply) => void = () => {},
): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const reply: Reply = await api.get(cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`, auth);
    expect(reply.status, reply.text).toBe(200);
    onPage(reply);
    items.push(...reply.body.data);
    cursor = reply.body.next_cursor;
    if (cursor === null) return items;
  }
  throw new Error(`paging ${path} did not end`);
}
