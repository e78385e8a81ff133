import type { Schemas } from "../api/client";
import type { Timeline } from "../pages/timeline";
import { useBudgets } from "../widgets";
import { retryText } from "./events";

/** What the agent does now, in a word (the badge) and a sentence (beside it). */
export interface Doing {
  status: "running" | "retrying" | "waiting" | "paused" | "idle" | "failed" | "cancelled" | "archived" | "connecting";
  text: string;
  since?: string;
}

/** `agent.activity` as the server words it (console-common.md); read defensively until the SDK has it. */
interface Activity {
  status: string;
  since?: string;
  detail?: string;
  attempt?: number;
  max_attempts?: number;
  open_interactions?: number;
}

const STATUSES: ReadonlySet<string> = new Set(["running", "retrying", "waiting", "paused", "idle", "failed", "cancelled", "archived"]);

function activityOf(agent: unknown): Activity | undefined {
  const activity = (agent as { activity?: unknown } | undefined)?.activity;
  if (typeof activity !== "object" || activity === null) return undefined;
  const status = (activity as { status?: unknown }).status;
  return typeof status === "string" && STATUSES.has(status) ? (activity as Activity) : undefined;
}

/**
 * The agent's present, most immediate source first: a failed model attempt seen on the live stream
 * (shown the moment it is streamed), then what people must answer, then the live timeline (a model
 * answering, tools running), then the server's `activity`, then the stream's snapshot.
 */
export function whatItDoes(
  agent: Schemas["Agent"] | undefined,
  timeline: Timeline,
  open: readonly Schemas["AgentInteraction"][],
  budgetNames: ReadonlyMap<string, string> = new Map(),
): Doing {
  if (agent?.state === "archived") return { status: "archived", text: "archived" };
  if (timeline.retry) return { status: timeline.retry.retrying ? "retrying" : "failed", text: retryText(timeline.retry) };
  if (open.length > 0) {
    const first = open[0]!;
    const more = open.length > 1 ? ` (and ${open.length - 1} more)` : "";
    return { status: "waiting", text: `waiting for you: ${first.request.title}${more}`, since: first.created_at };
  }
  if (timeline.previews.size > 0) return { status: "running", text: "running: the model is answering" };
  const moving = [...timeline.toolStates].find(([, state]) => state === "running" || state === "awaiting_authorization");
  if (moving) return { status: "running", text: `running: ${timeline.toolCalls.get(moving[0])?.name ?? "a tool"}` };
  const custom = [...timeline.toolCalls.values()].find((c) => c.type === "custom" && (timeline.toolStates.get(c.id) ?? c.state) === "ready");
  if (custom) return { status: "waiting", text: `waiting for the result of ${custom.name}`, since: custom.created_at };

  const activity = activityOf(agent);
  if (activity?.status === "paused") return { status: "paused", text: pausedText(timeline, budgetNames), ...(activity.since ? { since: activity.since } : {}) };
  if (activity) {
    const attempt = activity.status === "retrying" && activity.attempt ? ` (attempt ${activity.attempt} of ${activity.max_attempts ?? "?"})` : "";
    const detail = activity.detail ? `: ${activity.detail}` : "";
    return { status: activity.status as Doing["status"], text: `${activity.status}${attempt}${detail}`, since: activity.since };
  }

  const last = timeline.events.at(-1);
  if (last?.event_kind === "model_output" && last.stop_reason === "error") {
    const error = (last.content_blocks ?? []).find((b) => b.type === "error");
    return { status: "failed", text: `failed: ${error && "text" in error ? String(error.text) : "the model call failed"}`, since: last.created_at };
  }
  if (last?.event_kind === "agent_input" && last.control_type === "cancel_current") return { status: "cancelled", text: "cancelled", since: last.created_at };
  // The snapshot tells the present only until a later event moves it on.
  const fresh = timeline.snapshot && (last?.sequence ?? 0) <= timeline.snapshot.last_sequence;
  const snapshot = fresh ? timeline.snapshot?.status : undefined;
  if (snapshot === "working") return { status: "running", text: "running" };
  if (snapshot === "waiting") return { status: "waiting", text: "waiting" };
  if (!timeline.live && !timeline.snapshot) return { status: "connecting", text: "connecting…" };
  if (last?.event_kind === "model_output" && last.stop_reason === "tool_use") return { status: "running", text: "running" };
  return { status: "idle", text: "idle: waiting for a message", ...(last ? { since: last.created_at } : {}) };
}

/**
 * Why a paused agent waits: the budget its latest `budget_exceeded` event names (docs/usage-and-budgets.md),
 * by name when the caller may read it (`budgetNames`), and until when.
 */
export function pausedText(timeline: Timeline, budgetNames: ReadonlyMap<string, string> = new Map()): string {
  const stop = [...timeline.events].reverse().find((e) => e.event_kind === "budget_exceeded") as { budget_id?: string; period_end?: string | null } | undefined;
  if (!stop?.budget_id) return "paused by a budget";
  const until = stop.period_end ? ` until ${new Date(stop.period_end).toLocaleString()} or the budget is raised` : " until the budget is raised";
  return `paused by budget ${budgetNames.get(stop.budget_id) ?? stop.budget_id}${until}`;
}

/** The organization's budgets by id, read only while the agent is paused (members see the ones they may read). */
export function useBudgetNames(org: string, agent: Schemas["Agent"] | undefined): ReadonlyMap<string, string> {
  const paused = activityOf(agent)?.status === "paused";
  const budgets = useBudgets(org, { enabled: paused });
  return new Map((budgets.data ?? []).map((b) => [b.id, b.name]));
}
