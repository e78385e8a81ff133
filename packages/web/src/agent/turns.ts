import type { AgentEvent, Preview } from "../pages/timeline";

/** A turn of the timeline as the page shows it: its saved events in order, and what is still streaming. */
export interface TurnGroup {
  turnId: string;
  /** The turn's number for the agent (the spec's turn_sequence). */
  sequence: number;
  events: AgentEvent[];
  previews: Array<[string, Preview]>;
}

/**
 * Groups events by turn, in order. Events carry their turn (turn_id, turn_sequence); a turn's events are
 * contiguous on the timeline, so grouping consecutive events by turn keeps the timeline's order.
 * Previews join their turn, or the last one when their turn has no saved event yet.
 */
export function groupByTurn(events: readonly AgentEvent[], previews: ReadonlyMap<string, Preview>): TurnGroup[] {
  const groups: TurnGroup[] = [];
  for (const event of events) {
    const last = groups.at(-1);
    if (last && last.turnId === event.turn_id) last.events.push(event);
    else groups.push({ turnId: event.turn_id, sequence: event.turn_sequence, events: [event], previews: [] });
  }
  for (const entry of previews) {
    const group = groups.find((g) => g.turnId === entry[1].turnId) ?? groups.at(-1);
    if (group) group.previews.push(entry);
    else groups.push({ turnId: entry[1].turnId ?? "live", sequence: 0, events: [], previews: [entry] });
  }
  return groups;
}

/** "1.2 s", "3 min 4 s": how long a tool call took, from its created_at to completed_at. */
export function duration(from: string | undefined, to: string | undefined): string {
  if (!from || !to) return "";
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** "just now", "5 min ago", "3 h ago", "2 d ago"; the exact time goes in a title beside it. */
export function relative(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return "";
  const seconds = Math.round((now - Date.parse(timestamp)) / 1000);
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}
