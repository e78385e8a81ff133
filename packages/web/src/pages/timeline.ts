import { useCallback, useEffect, useRef, useState } from "react";
import { api, call, eventStreamUrl, type Schemas } from "../api/client";
import { keys, useInvalidate } from "../query";

export type AgentEvent = Schemas["AgentEvent"];

/** The agent's present as the stream's first frame says it (`event: snapshot`, modules/timeline/snapshot.ts). */
export interface Snapshot {
  status: "idle" | "working" | "waiting" | "archived";
  interactions: Schemas["AgentInteraction"][];
  pending_tool_calls: Schemas["ToolCall"][];
  backlog_count: number;
  last_sequence: number;
}

/**
 * A model call that failed and that svc tries again: read from the live `error` preview, whose message
 * runtime/outcomes.ts failureWithPlan words as "<reason> (attempt N of M; svc tries again in 2.0 s)".
 */
export interface Retry {
  contextId: string;
  turnId: string | undefined;
  attempt: number;
  maxAttempts: number;
  reason: string;
  /** What svc does next ("svc tries again in 2.0 s", or that the turn ends). */
  plan: string;
  /** False when no attempt is left (or the failure is not retried): the turn ends with this error. */
  retrying: boolean;
}

export interface Preview {
  turnId: string | undefined;
  text: string;
}

export interface Timeline {
  events: AgentEvent[];
  /** Live text of model calls still answering, by model_call_context_id (stream deltas; never saved). */
  previews: Map<string, Preview>;
  toolStates: Map<string, Schemas["ToolCallState"]>;
  toolCalls: Map<string, Schemas["ToolCall"]>;
  live: boolean;
  error: unknown;
  snapshot: Snapshot | undefined;
  /** The last failed model attempt, until a later call answers. */
  retry: Retry | undefined;
  /** Whether older events than the first shown exist, and loading them. */
  hasOlder: boolean;
  loadingOlder: boolean;
  loadOlder: () => Promise<void>;
}

type State = Omit<Timeline, "loadOlder">;

const PAGE = 100;
const PLAN = /^([\s\S]*) \(attempt (\d+) of (\d+); ([^)]*)\)$/;

/** The parts of a failureWithPlan message, or undefined for another wording. */
export function parseFailure(message: string): Omit<Retry, "contextId" | "turnId"> | undefined {
  const found = PLAN.exec(message);
  if (!found) return undefined;
  const plan = found[4]!;
  return { reason: found[1]!, attempt: Number(found[2]), maxAttempts: Number(found[3]), plan, retrying: plan.startsWith("svc tries again") };
}

/**
 * An agent's timeline, live: the newest saved page, then the event stream from the last sequence seen
 * (the spec's Events section) opened with `snapshot=true`, whose first frame gives the present (status,
 * open interactions, pending tool calls) on every connect and reconnect. Deltas build previews that the
 * completed model_output replaces; an `error` delta is a failed model attempt. Older pages load on demand.
 *
 * The stream also feeds the query cache: every saved event, snapshot, tool-call update and failed attempt
 * invalidates the agent's queries (the agent with its activity, its interactions, its backlog) and the
 * project's agents lists (the table's rows, the header's waiting count), which the pages showing them read
 * again. Nothing on the agent's page polls.
 */
export function useTimeline(org: string, project: string, agent: string): Timeline {
  const [state, setState] = useState<State>(() => initial());
  const oldest = useRef<number | null>(null);
  const busy = useRef(false);
  const invalidate = useInvalidate();
  useEffect(() => {
    setState(initial());
    oldest.current = null;
    const path = { orgID: org, projectID: project, agentID: agent };
    let source: EventSource | undefined;
    let closed = false;
    let last = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    /** What the stream said changed the agent: its cached queries and the lists it is in are stale. */
    const changed = () => {
      if (!closed) void invalidate(keys.agent(org, project, agent), keys.agents(org, project));
    };

    const addEvent = (event: AgentEvent) => {
      if (closed || event.sequence <= last) return;
      last = event.sequence;
      setState((s) => {
        // The state outlives this effect: an earlier run of it may have added this event already.
        if ((s.events.at(-1)?.sequence ?? 0) >= event.sequence) return s;
        const previews = new Map(s.previews);
        let retry = s.retry;
        if (event.event_kind === "model_output") {
          previews.delete(event.model_call_context_id);
          // A saved answer (or the terminal error) ends the retrying.
          retry = undefined;
        }
        return { ...s, events: [...s.events, event], previews, retry };
      });
      changed();
    };
    const loadToolCalls = async () => {
      const calls = await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/tool-calls", { params: { path, query: { limit: 100 } } }));
      if (closed) return;
      setState((s) => ({
        ...s,
        toolCalls: new Map([...s.toolCalls, ...calls.data.map((c) => [c.id, c] as const)]),
        toolStates: new Map([...s.toolStates, ...calls.data.map((c) => [c.id, c.state] as const)]),
      }));
    };
    const connect = () => {
      if (closed) return;
      source = new EventSource(`${eventStreamUrl(org, project, agent, last)}&snapshot=true`);
      source.onopen = () => {
        // Whatever changed before the stream was open sent no update: count the connection as a change.
        setState((s) => ({ ...s, live: true, error: undefined }));
        changed();
        loadToolCalls().catch((error: unknown) => setState((s) => ({ ...s, error })));
      };
      source.addEventListener("snapshot", (frame) => {
        const snapshot = JSON.parse((frame as MessageEvent<string>).data) as Snapshot;
        setState((s) => {
          const toolCalls = new Map(s.toolCalls);
          const toolStates = new Map(s.toolStates);
          for (const c of snapshot.pending_tool_calls) {
            toolCalls.set(c.id, c);
            toolStates.set(c.id, c.state);
          }
          return { ...s, snapshot, toolCalls, toolStates };
        });
        changed();
      });
      for (const kind of ["agent_input", "model_output", "tool_result", "context_checkpoint"]) {
        source.addEventListener(kind, (frame) => addEvent(JSON.parse((frame as MessageEvent<string>).data) as AgentEvent));
      }
      source.addEventListener("model_output_delta", (frame) => {
        const delta = JSON.parse((frame as MessageEvent<string>).data) as {
          model_call_context_id: string;
          turn_id?: string;
          event: { kind: string; delta?: string; error?: { message?: string } };
        };
        const contextId = delta.model_call_context_id;
        if (delta.event.kind === "error") {
          const parsed = parseFailure(delta.event.error?.message ?? "");
          const reason = delta.event.error?.message ?? "the model call failed";
          const retry: Retry = { contextId, turnId: delta.turn_id, ...(parsed ?? { reason, attempt: 1, maxAttempts: 1, plan: "", retrying: false }) };
          setState((s) => {
            const previews = new Map(s.previews);
            previews.delete(contextId);
            return { ...s, previews, retry };
          });
          // The server's `activity` says retrying too: the header, the list and the bell read it again.
          changed();
          return;
        }
        if (delta.event.kind !== "text_delta" || typeof delta.event.delta !== "string") return;
        const text = delta.event.delta;
        setState((s) => {
          const previews = new Map(s.previews);
          previews.set(contextId, { turnId: delta.turn_id, text: (previews.get(contextId)?.text ?? "") + text });
          // Text from a later call: the retry worked.
          const retry = s.retry && s.retry.contextId !== contextId ? undefined : s.retry;
          return { ...s, previews, retry };
        });
      });
      source.addEventListener("tool_call_update", (frame) => {
        const update = JSON.parse((frame as MessageEvent<string>).data) as Schemas["ToolCallUpdate"];
        setState((s) => ({ ...s, toolStates: new Map(s.toolStates).set(update.tool_call_id, update.state) }));
        changed();
        // A call new to this page (a custom tool call now ready, say) needs its name and input.
        void loadToolCalls().catch(() => undefined);
      });
      source.addEventListener("error", (frame) => {
        setState((s) => ({ ...s, live: false }));
        // An `error` frame from svc: reconnect from the last saved sequence (the browser retries a
        // dropped connection by itself, with Last-Event-ID).
        if (frame instanceof MessageEvent) {
          source?.close();
          retryTimer = setTimeout(connect, 1000);
        }
      });
    };

    call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/events", { params: { path, query: { before_sequence: 0, limit: PAGE } } }))
      .then((page) => {
        if (closed) return;
        oldest.current = page.next_before_sequence ?? null;
        setState((s) => ({ ...s, hasOlder: page.next_before_sequence != null }));
        for (const event of page.data) addEvent(event);
        connect();
      })
      .catch((error: unknown) => setState((s) => ({ ...s, error })));
    return () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      source?.close();
    };
  }, [org, project, agent, invalidate]);

  const loadOlder = useCallback(async () => {
    const before = oldest.current;
    if (before === null || busy.current) return;
    busy.current = true;
    setState((s) => ({ ...s, loadingOlder: true }));
    try {
      const path = { orgID: org, projectID: project, agentID: agent };
      const page = await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/events", { params: { path, query: { before_sequence: before, limit: PAGE } } }));
      oldest.current = page.next_before_sequence ?? null;
      setState((s) => {
        const first = s.events[0]?.sequence ?? Infinity;
        const older = page.data.filter((e) => e.sequence < first);
        return { ...s, events: [...older, ...s.events], hasOlder: page.next_before_sequence != null, loadingOlder: false };
      });
    } catch (error) {
      setState((s) => ({ ...s, error, loadingOlder: false }));
    } finally {
      busy.current = false;
    }
  }, [org, project, agent]);

  return { ...state, loadOlder };
}

function initial(): State {
  return {
    events: [],
    previews: new Map(),
    toolStates: new Map(),
    toolCalls: new Map(),
    live: false,
    error: undefined,
    snapshot: undefined,
    retry: undefined,
    hasOlder: false,
    loadingOlder: false,
  };
}
