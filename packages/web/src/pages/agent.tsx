import { lazy, Suspense, useEffect, useState, type FormEvent } from "react";
import { AgentFamily } from "../agent/family";
import { useQuery } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { TimelineView, type Asked } from "../agent/events";
import type { Ids } from "../agent/ids";
import { placeInteractions } from "../agent/interactions";
import { useBudgetNames, whatItDoes } from "../agent/status";
import { relative } from "../agent/turns";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Link, Page, useAction, when } from "../ui";
import { useTimeline, type Timeline } from "./timeline";
import "../agent/agent.css";

// Drag and drop comes with the backlog, loaded when an agent page opens (console-common.md: heavy parts lazily).
const Backlog = lazy(() => import("../agent/backlog").then((m) => ({ default: m.Backlog })));

/**
 * One agent: what it does now (header), its timeline by turn with questions and approvals answerable where
 * they were asked, a message box, the custom tool calls waiting for a result, and the backlog.
 */
export function AgentView({ org, project, agent }: { org: string; project: string; agent: string }) {
  const path: Ids = { orgID: org, projectID: project, agentID: agent };
  const timeline = useTimeline(org, project, agent);
  // The agent, its interactions and its backlog are queries under the agent's key; the timeline's stream
  // invalidates them on every saved event and tool-call change (a permission question opens with one,
  // before any event is saved), and a sent message invalidates the backlog.
  const current = useQuery({
    queryKey: keys.agent(org, project, agent, "detail"),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path } })),
  });
  const controls = useAction({ invalidates: [keys.agent(org, project, agent), keys.agents(org, project)] });
  const invalidate = useInvalidate();
  const info = current.data?.agent;
  // Resolved interactions name what each Answer in the timeline chose ("Allow").
  const resolved = useQuery({
    queryKey: keys.agent(org, project, agent, "interactions", "resolved"),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path, query: { state: "resolved", limit: 100 } } })),
  });
  const open = useQuery({
    queryKey: keys.agent(org, project, agent, "interactions", "open"),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path, query: { state: "open", limit: 100 } } })),
  });
  // Until the list has loaded, the stream's snapshot already lists what is open.
  const openItems = open.data?.data ?? timeline.snapshot?.interactions ?? [];
  const placed = placeInteractions(openItems, timeline.toolCalls, timeline.toolStates);
  const answered = () => void invalidate(keys.agent(org, project, agent, "interactions"), keys.agents(org, project));
  const asked: Asked = { atCall: new Map(), unplaced: [], answered: new Map((resolved.data?.data ?? []).map((i) => [i.id, i])), done: answered };
  for (const interaction of openItems) {
    const at = placed.get(interaction.id);
    if (at) asked.atCall.set(at, [...(asked.atCall.get(at) ?? []), interaction]);
    else asked.unplaced.push(interaction);
  }
  const doing = whatItDoes(info, timeline, openItems, useBudgetNames(org, info));

  const control = (kind: "cancel" | "archive") =>
    void controls.run(async () => {
      if (kind === "cancel") await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/cancel", { params: { path }, body: {} }));
      else await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/archive", { params: { path } }));
    });

  return (
    <Page
      title={info?.name || "Agent"}
      actions={
        <div className="actions">
          <button type="button" className="secondary" disabled={controls.busy || info?.state === "archived"} onClick={() => control("cancel")}>
            Cancel current turn
          </button>
          <button type="button" className="secondary" disabled={controls.busy || info?.state === "archived"} onClick={() => control("archive")}>
            Archive
          </button>
        </div>
      }
    >
      <ErrorNotice error={current.error ?? controls.error} />
      <div className="agent-now">
        <p className={`doing doing-${doing.status}`} role="status" aria-label="What the agent is doing">
          <span className={`badge doing-badge doing-${doing.status}`}>{doing.status}</span> <span className="doing-text">{doing.text}</span>
          {doing.since ? (
            <span className="muted small">
              {" "}
              · since{" "}
              <time dateTime={doing.since} title={when(doing.since)}>
                {relative(doing.since)}
              </time>
            </span>
          ) : null}
        </p>
        {info ? (
          <p className="muted small">
            <span className={`badge state-${info.state}`}>{info.state}</span> {info.model.provider_config}/{info.model.name} · created{" "}
            <time dateTime={info.created_at} title={when(info.created_at)}>
              {relative(info.created_at)}
            </time>
            {info.parent_agent_id ? (
              <>
                {" "}
                · launched by <Link to={`/orgs/${org}/projects/${project}/agents/${info.parent_agent_id}`}>its coordinator</Link>
              </>
            ) : null}{" "}
            · <Link to={`/orgs/${org}/projects/${project}/agents?parent=${agent}`}>agents it delegated to</Link>
          </p>
        ) : null}
      </div>
      {openItems.length > 0 ? (
        // The questions are in the timeline, where they were asked: say at the top that one waits, and go to it.
        <p className="card attention" role="status">
          <a
            href={`#interaction-${openItems[0]!.id}`}
            onClick={(event) => {
              event.preventDefault();
              focusInteraction(openItems[0]!.id);
            }}
          >
            {openItems.length === 1 ? "A question or approval waits for your answer." : `${openItems.length} questions or approvals wait for your answer.`}
          </a>
        </p>
      ) : null}
      <div className="agent-grid">
        <section aria-labelledby="timeline-title">
          <h2 id="timeline-title">
            Timeline <span className={timeline.live ? "badge ok" : "badge"}>{timeline.live ? "live" : "connecting"}</span>
          </h2>
          <ErrorNotice error={timeline.error} />
          <TimelineView ids={path} timeline={timeline} asked={asked} />
          <SendMessage ids={path} />
        </section>
        <aside>
          <AgentFamily org={org} project={project} agent={info} />
          <section aria-labelledby="interactions-title">
            <h2 id="interactions-title" tabIndex={-1}>
              Questions and approvals
            </h2>
            <ErrorNotice error={open.error} />
            {openItems.length === 0 ? (
              <p className="muted">Nothing waits for an answer.</p>
            ) : (
              <ul className="list">
                {openItems.map((interaction) => (
                  <li key={interaction.id}>
                    <a
                      href={`#interaction-${interaction.id}`}
                      onClick={(event) => {
                        event.preventDefault();
                        focusInteraction(interaction.id);
                      }}
                    >
                      {interaction.request.title}
                    </a>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <CustomToolCalls ids={path} timeline={timeline} />
          <Suspense fallback={<p className="muted">Loading the backlog…</p>}>
            <Backlog ids={path} />
          </Suspense>
        </aside>
      </div>
    </Page>
  );
}

/** Scrolls a question into view and puts the keyboard on its first choice. */
function focusInteraction(id: string): void {
  const form = document.getElementById(`interaction-${id}`);
  if (!form) return;
  form.scrollIntoView({ block: "center" });
  const first = form.querySelector<HTMLElement>("input, textarea, select, button");
  (first ?? form).focus();
}

function SendMessage({ ids }: { ids: Ids }) {
  // A queued message changes the backlog without any event.
  const action = useAction({ invalidates: [keys.agent(ids.orgID, ids.projectID, ids.agentID, "backlog")] });
  const [text, setText] = useState("");
  const send = (mode: "queued" | "steering") => {
    if (!text.trim()) return;
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs", { params: { path: ids }, body: { content_blocks: [{ type: "text", text }], delivery_mode: mode } }));
      setText("");
    });
  };
  return (
    <form
      className="send"
      onSubmit={(event) => {
        event.preventDefault();
        send("queued");
      }}
    >
      <Field label="Message" id="message">
        <textarea id="message" rows={3} value={text} onChange={(event) => setText(event.target.value)} />
      </Field>
      <ErrorNotice error={action.error} />
      <div className="actions">
        <button className="primary" disabled={action.busy}>
          Send
        </button>
        <button type="button" className="secondary" disabled={action.busy} onClick={() => send("steering")}>
          Send as steering
        </button>
      </div>
    </form>
  );
}

/** Custom tool calls are run by the caller's own system; from here a person can post their result. */
function CustomToolCalls({ ids, timeline }: { ids: Ids; timeline: Timeline }) {
  const ready = [...timeline.toolCalls.values()].filter((c) => c.type === "custom" && (timeline.toolStates.get(c.id) ?? c.state) === "ready");
  if (ready.length === 0) return null;
  return (
    <section aria-labelledby="custom-title">
      <h2 id="custom-title">Custom tool calls</h2>
      {ready.map((toolCall) => (
        <ToolResultForm key={toolCall.id} ids={ids} toolCall={toolCall} />
      ))}
    </section>
  );
}

function ToolResultForm({ ids, toolCall }: { ids: Ids; toolCall: Schemas["ToolCall"] }) {
  const action = useAction();
  const [sent, setSent] = useState(false);
  useEffect(() => setSent(false), [toolCall.id]);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const outcome = form.get("outcome") === "failed" ? "failed" : "succeeded";
    void action.run(async () => {
      const body = { outcome: outcome as "succeeded" | "failed", content_blocks: [{ type: "text" as const, text: String(form.get("result") ?? "") }] };
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/tool-calls/{toolCallID}/result", { params: { path: { ...ids, toolCallID: toolCall.id } }, body }));
      setSent(true);
    });
  };
  if (sent) return <p role="status">Result sent for {toolCall.name}.</p>;
  return (
    <form className="card" onSubmit={submit} aria-label={`Result for ${toolCall.name}`}>
      <h3>
        <code>{toolCall.name}</code>
      </h3>
      <pre>{JSON.stringify(toolCall.input, null, 2)}</pre>
      <Field label="Result" id={`${toolCall.id}-result`}>
        <textarea id={`${toolCall.id}-result`} name="result" rows={3} required />
      </Field>
      <Field label="Outcome" id={`${toolCall.id}-outcome`}>
        <select id={`${toolCall.id}-outcome`} name="outcome">
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
      </Field>
      <ErrorNotice error={action.error} />
      <button className="primary" disabled={action.busy}>
        Send result
      </button>
    </form>
  );
}
