import { collect, paginate, type CursorPage } from "@svc/sdk";
import { UsageError } from "./context.js";

/**
 * The grant of `resource` to `projectID` among a grant list's pages, for `… revoke`: people name the
 * thing and the project, not the grant's own id.
 */
export async function grantFor<T>(pages: (cursor: string | undefined) => Promise<CursorPage<T>>, matches: (item: T) => boolean, what: string): Promise<T> {
  for await (const item of paginate(pages)) if (matches(item)) return item;
  throw new UsageError(`${what} is not granted to the project`);
}

/** Every item of a cursor-paged list, up to `limit`. */
export function listAll<T>(pages: (cursor: string | undefined) => Promise<CursorPage<T>>, limit: number): Promise<T[]> {
  return collect(paginate(pages), limit);
}

/** The page query of a list: the most items a page may hold, and the cursor when there is one. */
export const pageQuery = (cursor: string | undefined) => ({ limit: 100, ...(cursor ? { cursor } : {}) });
