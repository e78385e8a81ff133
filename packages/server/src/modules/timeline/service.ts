import type { Database } from "../../platform/db/index.js";
import { notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { toPage } from "../../platform/http/lists.js";
import { requireAgent } from "../agents/access.js";
import type { AgentRow } from "../../runtime/store/journal.js";
import * as store from "./store.js";
import { eventViews, loadEventsBySequence, toolCallView, turnView, type AgentEventView, type AgentTurnView, type ToolCallView } from "./views.js";

/** Page sizes of the timeline lists (the spec's for events, the reference's for turns). */
export const EVENT_PAGE = { default: 100, max: 500 } as const;
export const TURN_PAGE = { default: 25, max: 100 } as const;

export interface EventPage {
  data: AgentEventView[];
  next_after_sequence: number;
  next_before_sequence?: number | null;
  has_more: boolean;
}

/** Reading an agent's timeline: every operation needs `agent.read` on the agent's project. */
export function createTimelineService(deps: { db: Database }) {
  const { db } = deps;

  async function readableAgent(principal: Principal, orgId: string, projectId: string, agentId: string): Promise<AgentRow> {
    return (await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.read")).agent;
  }

  /**
   * Backward from `before` (exclusive, null: the newest): the newest `limit` events older than the
   * bound, oldest first. One extra row tells whether older events remain.
   */
  async function olderPage(agent: AgentRow, before: number | null, limit: number, turnId?: string) {
    const rows = await loadEventsBySequence(db.read, agent, { before, limit: limit + 1, turnId });
    const hasOlder = rows.length > limit;
    const data = hasOlder ? rows.slice(1) : rows;
    return { data, nextBefore: hasOlder ? data[0]!.sequence : null };
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
      const agent = await readableAgent(principal, orgId, projectId, agentId);
      if (page.before !== undefined) {
        const { data, nextBefore } = await olderPage(agent, page.before === 0 ? null : page.before, page.limit);
        // Sequences are dense, so an empty backward page means nothing exists below the bound: forward
        // reading then starts at the beginning.
        return { data, next_after_sequence: data.at(-1)?.sequence ?? 0, next_before_sequence: nextBefore, has_more: nextBefore !== null };
      }
      const after = page.after ?? 0;
      const rows = await loadEventsBySequence(db.read, agent, { after, limit: page.limit + 1 });
      const data = rows.slice(0, page.limit);
      return { data, next_after_sequence: data.at(-1)?.sequence ?? after, has_more: rows.length > page.limit };
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
      const { data, nextBefore } = await olderPage(agent, page.before ? page.before : null, page.limit, turnId);
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
  };
}

export type TimelineService = ReturnType<typeof createTimelineService>;
