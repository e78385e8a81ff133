import type { Database } from "../../platform/db/index.js";
import { notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { toPage } from "../../platform/http/lists.js";
import { requireAgent, requireAgentAlongside } from "../agents/access.js";
import type { AgentRow } from "../../runtime/store/journal.js";
import * as store from "./store.js";
import { loadSnapshot, type AgentSnapshotView } from "./snapshot.js";
import { eventViews, loadEventRows, loadEventsBySequence, toolCallView, turnView, type AgentEventView, type SequenceRange, type AgentTurnView, type ToolCallView } from "./views.js";

/** Page sizes of the timeline lists (the spec's for events, the reference's for turns). */
export const EVENT_PAGE = { default: 100, max: 500 } as const;
export const TURN_PAGE = { default: 25, max: 100 } as const;

export interface EventPage {
  data: AgentEventView[];
  next_after_sequence: number;
  next_before_sequence?: number | null;
  has_more: boolean;
}

/**
 * A backward page from rows loaded with one extra (`limit + 1`, oldest first): the extra, oldest row
 * only tells whether older events remain.
 */
function olderPage(events: AgentEventView[], limit: number) {
  const hasOlder = events.length > limit;
  const data = hasOlder ? events.slice(1) : events;
  return { data, nextBefore: hasOlder ? data[0]!.sequence : null };
}

/** Reading an agent's timeline: every operation needs `agent.read` on the agent's project. */
export function createTimelineService(deps: { db: Database }) {
  const { db } = deps;

  async function readableAgent(principal: Principal, orgId: string, projectId: string, agentId: string): Promise<AgentRow> {
    return (await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.read")).agent;
  }

  return {
    /**
     * A page of events. With `before` (0: from the newest) the page walks backward and `has_more`
     * says whether older events remain; otherwise it walks forward from `after` (0: the beginning)
     * and `has_more` says whether newer ones do.
     */
    async listEvents(
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      page: { after?: number; before?: number; limit: number },
    ): Promise<EventPage> {
      // The page is read together with the agent's lookup (one wait on the database, not two).
      const range: SequenceRange =
        page.before !== undefined ? { before: page.before === 0 ? null : page.before, limit: page.limit + 1 } : { after: page.after ?? 0, limit: page.limit + 1 };
      const { agent, alongside: rows } = await requireAgentAlongside(db.read, principal, orgId, projectId, agentId, "agent.read", (id) =>
        loadEventRows(db.read, id, range),
      );
      const events = eventViews(agent, rows);
      if (page.before !== undefined) {
        const { data, nextBefore } = olderPage(events, page.limit);
        // Sequences are dense, so an empty backward page means nothing exists below the bound: forward
        // reading then starts at the beginning.
        return { data, next_after_sequence: data.at(-1)?.sequence ?? 0, next_before_sequence: nextBefore, has_more: nextBefore !== null };
      }
      const after = page.after ?? 0;
      const data = events.slice(0, page.limit);
      return { data, next_after_sequence: data.at(-1)?.sequence ?? after, has_more: events.length > page.limit };
    },

    /** Turns newest first, each with its opening events and its latest (semantic) event. */
    async listTurns(
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      page: { before?: number; limit: number },
    ): Promise<{ data: AgentTurnView[]; next_before_turn_sequence: number | null }> {
      const agent = await readableAgent(principal, orgId, projectId, agentId);
      const rows = await store.turnsBefore(db.read, agent.id, page.before ? page.before : null, page.limit + 1);
      const turns = rows.slice(0, page.limit);
      const latestIds = turns.flatMap((turn) => [turn.latestEventId, turn.latestSemanticEventId].filter((id): id is string => id !== null));
      const boundary = await store.turnBoundaryEvents(db.read, agent.id, turns.map((turn) => turn.id), latestIds);
      const byId = new Map<string, AgentEventView>();
      const opening = new Map<string, AgentEventView[]>();
      const views = eventViews(agent, boundary);
      for (const [index, row] of boundary.entries()) {
        const view = views[index]!;
        byId.set(row.id, view);
        if (row.isOpeningEvent) opening.set(row.turnId, [...(opening.get(row.turnId) ?? []), view]);
      }
      const pick = (id: string | null) => (id === null ? undefined : byId.get(id));
      return {
        data: turns.map((turn) =>
          turnView(agent, turn, { opening: opening.get(turn.id) ?? [], latest: pick(turn.latestEventId), latestSemantic: pick(turn.latestSemanticEventId) }),
        ),
        next_before_turn_sequence: rows.length > page.limit ? turns.at(-1)!.turnSequence : null,
      };
    },

    /** One turn's events, paged backward from its newest (`before` 0 or absent). Another agent's turn: 404. */
    async listTurnEvents(
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      turnId: string,
      page: { before?: number; limit: number },
    ): Promise<{ data: AgentEventView[]; next_before_sequence: number | null }> {
      const agent = await readableAgent(principal, orgId, projectId, agentId);
      if (!(await store.findTurn(db.read, agent.id, turnId))) throw notFound("turn");
      const events = await loadEventsBySequence(db.read, agent, { before: page.before ? page.before : null, limit: page.limit + 1, turnId });
      const { data, nextBefore } = olderPage(events, page.limit);
      return { data, next_before_sequence: nextBefore };
    },

    /** The agent's tool calls with their current state, oldest first. */
    async listToolCalls(
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      filter: store.ToolCallFilter,
      page: { limit: number; cursor?: string },
    ): Promise<{ data: ToolCallView[]; next_cursor: string | null }> {
      const agent = await readableAgent(principal, orgId, projectId, agentId);
      const rows = await store.toolCallsPage(db.read, agent.id, filter, page.limit, page.cursor);
      return toPage(rows, page.limit, "created_at", (row) => ({ value: row.createdAt, id: row.id }), toolCallView);
    },

    /** The agent a stream follows, once the caller may read it (checked before the stream starts). */
    streamTarget: readableAgent,

    /** The agent's present for a stream's first frame, read afresh once the stream has subscribed. */
    async snapshot(principal: Principal, orgId: string, projectId: string, agentId: string): Promise<AgentSnapshotView> {
      return loadSnapshot(db.read, await readableAgent(principal, orgId, projectId, agentId));
    },
  };
}

export type TimelineService = ReturnType<typeof createTimelineService>;
