import type { Principal } from "../../platform/http/auth.js";
import type { AgentSignals } from "../../runtime/signals.js";
import type { AgentSnapshotView } from "../timeline/snapshot.js";
import type { EventPage } from "../timeline/service.js";
import type { AgentEventView } from "../timeline/views.js";

/** What the wait reads, narrowed to the timeline service's two reads (with the caller's own access). */
export interface TimelineReads {
  listEvents(principal: Principal, orgId: string, projectId: string, agentId: string, page: { after?: number; before?: number; limit: number }): Promise<EventPage>;
  snapshot(principal: Principal, orgId: string, projectId: string, agentId: string): Promise<AgentSnapshotView>;
}

/**
 * Whether a turn (its public id) can take no more model work: it is not the agent's latest turn, or the
 * engine says it settled. Asked only after the caller's timeline read of the agent succeeded. A snapshot's
 * `idle` is not enough: a model call that failed and waits for its retry leaves the agent looking idle.
 */
export type TurnSettled = (agentId: string, turnId: string) => Promise<boolean>;

/** A lost hint costs at most this long: the wait reads again even when nothing was announced. */
export const FALLBACK_READ_MS = 5_000;
const PAGE = 100;

export type TurnOutcome =
  /** The turn ended with a model answer (`stop_reason` end_turn, max_tokens, refusal or content_filter). */
  | { kind: "answered"; state: AgentSnapshotView["status"]; output: string; stopReason: string }
  /** The turn ended without one: its model call failed for good, or it was canceled mid-way. */
  | { kind: "failed"; state: AgentSnapshotView["status"]; message: string }
  /** Not over when the wait ended, or stopped by a question or an approval only a person can answer. */
  | { kind: "pending"; state: AgentSnapshotView["status"]; interactions: AgentSnapshotView["interactions"] };

export interface TurnWatch {
  principal: Principal;
  orgId: string;
  projectId: string;
  /** The agent's UUID, as the services take it. */
  agentId: string;
  /** The public id of the input whose turn to wait for (its `agent_input` event names the turn). */
  inputId: string;
  /** Its event comes after this sequence (0: from the beginning). */
  after: number;
  /** Milliseconds to wait at most. */
  waitMs: number;
  /** Ends the wait early (the client went away, svc shuts down): the outcome is then `pending`. */
  signal: AbortSignal;
  /** Called on each change seen while waiting (MCP progress notifications). */
  onProgress?: (state: string) => void;
}

/**
 * Waits, bounded by `waitMs`, for the turn an input opened (or joined) to end, and answers its last
 * model output. It never polls in a tight loop: it subscribes to the agent's hints (saved events and
 * tool-call changes, the event stream's own) before its first read, then reads only when a hint came or
 * FALLBACK_READ_MS passed. Every read goes through the timeline service with the caller's principal.
 *
 * The turn is over once an event of a later turn appears (a new turn opens only after the previous one
 * settled) or the engine says it settled; events are read once more after that, so the last output
 * committed before it is not missed. A turn stopped on an open interaction answers at once: only a
 * person can move it on (svc_resolve_interaction).
 */
export async function awaitTurn(deps: { timeline: TimelineReads; signals: AgentSignals; turnSettled: TurnSettled }, watch: TurnWatch): Promise<TurnOutcome> {
  const { timeline, signals } = deps;
  const { principal, orgId, projectId, agentId } = watch;
  const deadline = Date.now() + watch.waitMs;
  const bell = new Bell();
  const stops: Array<() => void> = [];
  const onAbort = () => bell.ring();
  watch.signal.addEventListener("abort", onAbort);
  const seen: { cursor: number; turnId: string | null; last: Extract<AgentEventView, { event_kind: "model_output" }> | null; ended: boolean } = {
    cursor: watch.after,
    turnId: null,
    last: null,
    ended: false,
  };

  async function readNewEvents(): Promise<void> {
    for (;;) {
      const page = await timeline.listEvents(principal, orgId, projectId, agentId, { after: seen.cursor, limit: PAGE });
      for (const event of page.data) {
        if (seen.turnId === null) {
          if (event.event_kind === "agent_input" && event.agent_input_id === watch.inputId) seen.turnId = event.turn_id;
          else continue;
        }
        if (event.turn_id !== seen.turnId) {
          seen.ended = true;
          return;
        }
        if (event.event_kind === "model_output") seen.last = event;
      }
      seen.cursor = page.next_after_sequence;
      if (!page.has_more) return;
    }
  }

  const ended = (state: AgentSnapshotView["status"]): TurnOutcome => outcomeOf(seen.last, state);

  try {
    // Subscribed before the first read: a change is either in a read or announced by a hint after it.
    stops.push(await signals.onEvents(agentId, bell.ring));
    stops.push(await signals.onToolCall(agentId, bell.ring));
    for (;;) {
      bell.reset();
      await readNewEvents();
      if (seen.ended) return ended((await timeline.snapshot(principal, orgId, projectId, agentId)).status);
      const timeUp = Date.now() >= deadline || watch.signal.aborted;
      let state = "queued";
      if (seen.turnId !== null && (await deps.turnSettled(agentId, seen.turnId))) {
        await readNewEvents();
        return ended((await timeline.snapshot(principal, orgId, projectId, agentId)).status);
      }
      if (seen.turnId !== null || timeUp) {
        const snapshot = await timeline.snapshot(principal, orgId, projectId, agentId);
        if (seen.turnId !== null && snapshot.status === "waiting" && snapshot.interactions.length > 0) {
          return { kind: "pending", state: snapshot.status, interactions: snapshot.interactions };
        }
        // Unsettled but idle-looking: a model call waits for its retry, which is svc's work in hand.
        state = seen.turnId !== null && snapshot.status === "idle" ? "working" : snapshot.status;
        if (timeUp) return { kind: "pending", state: state as AgentSnapshotView["status"], interactions: snapshot.interactions };
      }
      watch.onProgress?.(state);
      await bell.wait(Math.min(FALLBACK_READ_MS, Math.max(0, deadline - Date.now())));
    }
  } finally {
    watch.signal.removeEventListener("abort", onAbort);
    for (const stop of stops) stop();
  }
}

function outcomeOf(last: Extract<AgentEventView, { event_kind: "model_output" }> | null, state: AgentSnapshotView["status"]): TurnOutcome {
  if (!last || last.stop_reason === "tool_use") {
    return { kind: "failed", state, message: "the agent's turn ended without a final answer (it was canceled, or its agent archived)" };
  }
  if (last.stop_reason === "error") {
    const reason = last.content_blocks.flatMap((block) => (block.type === "error" ? [block.text] : [])).join("\n");
    return { kind: "failed", state, message: `the agent's model call failed: ${reason || "no reason given"}` };
  }
  const output = last.content_blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n\n");
  return { kind: "answered", state, output, stopReason: last.stop_reason };
}

/** A one-shot wake-up: `ring` ends the current `wait`, or the next one if none is under way. */
class Bell {
  private rung = false;
  private wake: (() => void) | null = null;

  readonly ring = (): void => {
    this.rung = true;
    this.wake?.();
  };

  reset(): void {
    this.rung = false;
  }

  wait(ms: number): Promise<void> {
    if (this.rung) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }
}
