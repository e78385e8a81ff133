import { Type, type Static } from "typebox";
import type { AppDb } from "../../platform/db/index.js";
import { component } from "../../platform/http/components.js";
import { backlogCount } from "../../runtime/store/inputs.js";
import { listInteractions } from "../../runtime/store/interactions.js";
import { latestSequence, type AgentRow } from "../../runtime/store/journal.js";
import { AgentInteraction } from "../interactions/schemas.js";
import { interactionView } from "../interactions/views.js";
import { modelCallStarted, pendingToolCalls } from "./store.js";
import { ToolCall, toolCallView, type ToolCallView } from "./views.js";

/** Open interactions and pending tool calls a snapshot lists at most, each (a turn's batch is far smaller). */
const SNAPSHOT_LIMIT = 100;

export const AgentStatus = component("AgentStatus", Type.Enum(["idle", "working", "waiting", "archived"], {
  description:
    "`working`: svc has work in hand (a model call under way, tool calls to authorize or run, or inputs in the backlog). " +
    "`waiting`: nothing moves until someone answers an interaction or approves a call, a client submits a custom tool's " +
    "result, or a machine finishes a command. " +
    "`idle`: nothing to do. `archived`: the agent is archived.",
}));

export const AgentSnapshot = component("AgentSnapshot", Type.Object(
  {
    status: AgentStatus,
    interactions: Type.Array(AgentInteraction, { description: "Open interactions, oldest first, as the interactions list answers them (at most 100)." }),
    pending_tool_calls: Type.Array(ToolCall, { description: "Tool calls still waiting for a result, oldest first, as the tool-calls list answers them (at most 100)." }),
    backlog_count: Type.Integer({ minimum: 0, description: "Content inputs waiting in the backlog." }),
    last_sequence: Type.Integer({ minimum: 0, description: "The sequence of the agent's newest saved event (0 before the first)." }),
  },
  {
    additionalProperties: false,
    description: "The agent's present, sent as the first frame (`event: snapshot`, no id) of a stream opened with snapshot=true.",
  },
));
export type AgentSnapshotView = Static<typeof AgentSnapshot>;

/**
 * What a client needs to render the agent now, without replaying its past. Read after the stream subscribed
 * to the agent's hints, so whatever changes later reaches the client as ordinary frames.
 */
export async function loadSnapshot(db: AppDb, agent: AgentRow): Promise<AgentSnapshotView> {
  const [interactions, calls, backlog, calling] = await Promise.all([
    listInteractions(db, agent.id, "open", { limit: SNAPSHOT_LIMIT, sort: "created_at" }),
    pendingToolCalls(db, agent.id, SNAPSHOT_LIMIT),
    backlogCount(db, agent.id),
    modelCallStarted(db, agent.id),
  ]);
  // listInteractions reads one extra row to tell whether more follow; a snapshot keeps the first ones.
  const open = interactions.slice(0, SNAPSHOT_LIMIT);
  const pending = calls.map(toolCallView);
  return {
    status: statusOf(agent, { calling, open: open.length, pending, backlog }),
    interactions: open.map((row) => interactionView(agent, row)),
    pending_tool_calls: pending,
    backlog_count: backlog,
    last_sequence: latestSequence(agent),
  };
}

/**
 * Whether svc itself moves a pending call on: it authorizes and runs them, except a ready custom call, whose
 * result a client submits, and calls waiting on a person (`awaiting_permission`) or on a machine or process (`waiting`).
 */
function svcMoves(call: Pick<ToolCallView, "state" | "type">): boolean {
  return call.state === "awaiting_authorization" || call.state === "running" || (call.state === "ready" && call.type !== "custom");
}

function statusOf(agent: AgentRow, facts: { calling: boolean; open: number; pending: ToolCallView[]; backlog: number }): AgentSnapshotView["status"] {
  if (agent.state === "archived") return "archived";
  if (facts.calling || facts.pending.some(svcMoves)) return "working";
  if (facts.open > 0 || facts.pending.length > 0) return "waiting";
  return facts.backlog > 0 ? "working" : "idle";
}
