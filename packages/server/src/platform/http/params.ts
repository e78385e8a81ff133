import { notFound } from "../errors.js";
import { decodeId, type IdKind } from "../ids.js";

/** The UUID behind a path id; a malformed or wrong-kind id is a 404, as if nothing were there. */
export function pathId(kind: IdKind, value: string): string {
  const uuid = decodeId(kind, value);
  if (!uuid) throw notFound();
  return uuid;
}
