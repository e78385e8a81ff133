import type { RuntimeEndCode, ServerFrame } from "@svc/protocol";

/*
 * How svcd reads svc's frames. The messages of the daemon protocol, both ways, are in @svc/protocol
 * (packages/protocol; docs/architecture.md, "The daemon protocol"), which svc validates svcd's frames
 * against. svcd takes only their types and checks no more than a frame's envelope: a newer svc may add
 * members, and frame types an older svcd skips.
 */

/** Why a runtime ended, when svcd must stop instead of reconnecting: its credential or machine is gone. */
export const FATAL_END_CODES: ReadonlySet<RuntimeEndCode> = new Set(["token_revoked", "machine_deleted", "superseded"]);

/** Reads a frame's envelope; anything else is dropped by the caller. */
export function parseServerFrame(text: string): ServerFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { type, payload } = value as { type?: unknown; payload?: unknown };
  if (typeof type !== "string" || typeof payload !== "object" || payload === null) return undefined;
  return value as ServerFrame;
}
