import { useEffect, useState } from "react";
import { api, call, eventStreamUrl, type Schemas } from "../api/client";

export type AgentEvent = Schemas["AgentEvent"];

export interface Timeline {
  events: AgentEvent[];
  /** Live text of model calls still answering, by model_call_context_id (stream deltas; never saved). */
  previews: Map<string, string>;
  toolStates: Map<string, Schemas["ToolCallState"]>;
  toolCalls: Map<string, Schemas["ToolCall"]>;
  live: boolean;
  error: unknown;
  /** Counts saved events and tool-call state changes: what else the page shows (questions, backlog) may have changed. */
  changes: number;
}

const PAGE = 100;

/**
 * An agent's timeline, live: the newest saved page, then the event stream from the last sequence seen
 * (the spec's Events section). Deltas build previews that the completed model_output replaces; after
 * connecting the tool-call list gives current states, which tool_call_update frames then move on.
 */
export function useTimeline(org: string, project: string, agent: string): Timeline {
  const [state, setState] = useState<Timeline>({ events: [], previews: new Map(), toolStates: new Map(), toolCalls: new Map(), live: false, error: undefined, changes: 0 });
  useEffect(() => {
    const path = { orgID: org, projectID: project, agentID: agent };
    let source: EventSource | undefined;
    let closed = false;
    let last = 0;

    const addEvent = (event: AgentEvent) => {
      if (closed || event.sequence <= last) return;
      last = event.sequence;
      setState((s) => {
        // The state outlives this effect: an earlier run of it may have added this event already.
        if ((s.events.at(-1)?.sequence ?? 0) >= event.sequence) return s;
        const previews = new Map(s.previews);
        if (event.event_kind === "model_output") previews.delete(event.model_call_context_id);
        return { ...s, events: [...s.events, event], previews, changes: s.changes + 1 };
      });
    };
    const loadToolCalls = async () => {
      const calls = await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/tool-calls", { params: { path, query: { limit: 100 } } }));
      setState((s) => ({
        ...s,
        toolCalls: new Map(calls.data.map((c) => [c.id, c])),
        toolStates: new Map(calls.data.map((c) => [c.id, c.state])),
      }));
    };
    const connect = () => {
      if (closed) return;
      source = new EventSource(eventStreamUrl(org, project, agent, last));
      source.onopen = () => {
        // Whatever changed before the stream was open sent no update: count the connection as a change.
        setState((s) => ({ ...s, live: true, error: undefined, changes: s.changes + 1 }));
        loadToolCalls().catch((error: unknown) => setState((s) => ({ ...s, error })));
      };
      for (const kind of ["agent_input", "model_output", "tool_result", "context_checkpoint"]) {
        source.addEventListener(kind, (frame) => addEvent(JSON.parse((frame as MessageEvent<string>).data) as AgentEvent));
      }
      source.addEventListener("model_output_delta", (frame) => {
        const delta = JSON.parse((frame as MessageEvent<string>).data) as { model_call_context_id: string; event: { kind: string; delta?: string } };
        if (delta.event.kind !== "text_delta" || typeof delta.event.delta !== "string") return;
        setState((s) => {
          const previews = new Map(s.previews);
          previews.set(delta.model_call_context_id, (previews.get(delta.model_call_context_id) ?? "") + delta.event.delta);
          return { ...s, previews };
        });
      });
      source.addEventListener("tool_call_update", (frame) => {
        const update = JSON.parse((frame as MessageEvent<string>).data) as Schemas["ToolCallUpdate"];
        setState((s) => ({ ...s, toolStates: new Map(s.toolStates).set(update.tool_call_id, update.state), changes: s.changes + 1 }));
        // A call new to this page (a custom tool call now ready, say) needs its name and input.
        void loadToolCalls().catch(() => undefined);
      });
      source.addEventListener("error", (frame) => {
        setState((s) => ({ ...s, live: false }));
        // An `error` frame from svc: reconnect from the last saved sequence (the browser retries a
        // dropped connection by itself, with Last-Event-ID).
        if (frame instanceof MessageEvent) {
          source?.close();
          setTimeout(connect, 1000);
        }
      });
    };

    call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/events", { params: { path, query: { before_sequence: 0, limit: PAGE } } }))
      .then((page) => {
        if (closed) return;
        for (const event of page.data) addEvent(event);
        connect();
      })
      .catch((error: unknown) => setState((s) => ({ ...s, error })));
    return () => {
      closed = true;
      source?.close();
    };
  }, [org, project, agent]);
  return state;
}
