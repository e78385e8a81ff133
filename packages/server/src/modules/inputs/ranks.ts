import { invalidRequest, stateConflict } from "../../platform/errors.js";
import type { Tx } from "../../platform/db/index.js";
import * as store from "../../runtime/store/inputs.js";

export interface Placement {
  position: "front" | "back" | "before" | "after";
  anchorId?: string;
}

/**
 * Puts a waiting input at a place in a backlog group (reference design-brief.md §3.2): ranks keep a stride between
 * neighbours so a move rewrites one row; when two neighbours have no room left, the group is
 * renumbered first. The input may come from the other group (promote / demote).
 */
export async function placeInput(tx: Tx, agentId: string, input: store.InputRow, mode: store.DeliveryMode, placement: Placement): Promise<void> {
  const anchored = placement.position === "before" || placement.position === "after";
  if (anchored !== (placement.anchorId !== undefined)) {
    throw invalidRequest("anchor_input_id is required with before and after, and only with them");
  }
  if (!anchored) {
    const others = (await store.group(tx, agentId, mode)).filter((row) => row.id !== input.id);
    const rank = others.length === 0 ? 0 : placement.position === "front" ? others[0]!.inputRank - store.RANK_STRIDE : others.at(-1)!.inputRank + store.RANK_STRIDE;
    await store.setPlacement(tx, input.id, mode, rank);
    return;
  }
  if (placement.anchorId === input.id) throw invalidRequest("an input cannot be placed relative to itself");
  let others = (await store.group(tx, agentId, mode)).filter((row) => row.id !== input.id);
  let index = others.findIndex((row) => row.id === placement.anchorId);
  if (index < 0) throw stateConflict("the anchor input is not waiting in the same backlog group");
  const side = placement.position as "before" | "after";
  let rank = between(others, index, side);
  if (rank === null) {
    await store.rebalance(tx, others);
    others = (await store.group(tx, agentId, mode)).filter((row) => row.id !== input.id);
    index = others.findIndex((row) => row.id === placement.anchorId);
    rank = between(others, index, side)!;
  }
  await store.setPlacement(tx, input.id, mode, rank);
}

/** A rank strictly between the anchor and its neighbour on the chosen side, or null when there is no room. */
function between(ordered: store.InputRow[], anchorIndex: number, side: "before" | "after"): number | null {
  const anchor = ordered[anchorIndex]!.inputRank;
  const neighbour = side === "before" ? ordered[anchorIndex - 1] : ordered[anchorIndex + 1];
  if (!neighbour) return side === "before" ? anchor - store.RANK_STRIDE : anchor + store.RANK_STRIDE;
  const gap = Math.abs(neighbour.inputRank - anchor);
  if (gap < 2) return null;
  return Math.floor((anchor + neighbour.inputRank) / 2);
}
