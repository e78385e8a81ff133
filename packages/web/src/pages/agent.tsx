import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Field, Page, useAction, useLoad, when } from "../ui";
import { ArtifactView } from "./artifact";
import { useTimeline, type AgentEvent, type Timeline } from "./timeline";

type Block = { type: string; [key: string]: unknown };
interface Ids {
  orgID: string;
  projectID: string;
  agentID: string;
}

/** One agent: live timeline, open questions and approvals, ready custom tool calls, backlog, and controls. */
export function AgentView({ org, project, agent }: { org: string; project: string; agent: string }) {
  const path: Ids = { orgID: org, projectID: project, agentID: agent };
  const current = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path } })), [agent]);
  const timeline = useTimeline(org, project, agent);
  // Backlog and interactions change with the timeline: load them again on every saved event and every
  // tool-call state change (a permission question opens with one, before any event is saved).
  // A queued message changes the backlog without any event: sending counts as a change too.
  const [sent, setSent] = useState(0);
  const version = timeline.changes + sent;
  const controls = useAction();
  const info = current.data?.agent;
  // Resolved interactions name what each Answer in the timeline chose ("Allow").
  const resolved = useLoad(
    () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path, query: { state: "resolved", limit: 100 } } })),
    [agent, version],
  );
  const open = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path, query: { state: "open", limit: 100 } } })), [agent, version]);
  const waiting = open.data?.data.length ?? 0;
  const answered = new Map((resolved.data?.data ?? []).map((i) => [i.id, i]));

  const control = (kind: "cancel" | "archive") =>
    void controls.run(async () => {
      if (kind === "cancel") await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/cancel", { params: { path }, body: {} }));
      else await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/archive", { params: { path } }));
      current.reload();
    });

  return (
    <Page
      title={info?.name ?? "Agent"}
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
      {info ? (
        <p className="muted">
          <span className={`badge state-${info.state}`}>{info.state}</span> {info.model.provider_config}/{info.model.name} · created {when(info.created_at)}
        </p>
      ) : null}
      {waiting > 0 ? (
        // At phone width the questions come after the timeline: say at the top that one waits, and link to it.
        <p className="card attention" role="status">
          <a href="#interactions-title">{waiting === 1 ? "A question or approval waits for your answer." : `${waiting} questions or approvals wait for your answer.`}</a>
        </p>
      ) : null}
      <div className="agent-grid">
        <section aria-labelledby="timeline-title">
          <h2 id="timeline-title">
            Timeline <span className={timeline.live ? "badge ok" : "badge"}>{timeline.live ? "live" : "connecting"}</span>
          </h2>
          <ErrorNotice error={timeline.error} />
          <TimelineView ids={path} timeline={timeline} answered={answered} />
          <SendMessage ids={path} sent={() => setSent((n) => n + 1)} />
        </section>
        <aside>
          <Interactions ids={path} open={open} />
          <CustomToolCalls ids={path} timeline={timeline} />
          <Backlog ids={path} version={version} />
        </aside>
      </div>
    </Page>
  );
}

function TimelineView({ ids, timeline, answered }: { ids: Ids; timeline: Timeline; answered: Map<string, Schemas["AgentInteraction"]> }) {
  return (
    <ol className="timeline" aria-label="Timeline" aria-live="polite">
      {timeline.events.map((event) => (
        <li key={event.id} className={`event ${event.event_kind}`} data-sequence={event.sequence}>
          <div className="event-head">
            <strong>{title(event, timeline)}</strong> <span className="muted small">#{event.sequence} · {when(event.created_at)}</span>
          </div>
          {event.event_kind === "context_checkpoint" ? <p className="text muted">{event.summary}</p> : null}
          {event.event_kind === "agent_input" && event.interaction_id ? <AnswerView interaction={answered.get(event.interaction_id)} /> : null}
          {("content_blocks" in event ? (event.content_blocks as Block[]) : []).map((block, i) => (
            <BlockView key={i} block={block} ids={ids} timeline={timeline} />
          ))}
        </li>
      ))}
      {[...timeline.previews].map(([id, text]) => (
        <li key={id} className="event preview" aria-busy="true">
          <div className="event-head">
            <strong>Model is answering…</strong>
          </div>
          <p className="text">{text}</p>
        </li>
      ))}
    </ol>
  );
}

function title(event: AgentEvent, timeline: Timeline): string {
  switch (event.event_kind) {
    case "agent_input":
      return event.control_type === "cancel_current" ? "Cancel" : event.input_kind === "interaction_response" ? "Answer" : event.input_kind === "config_change" ? "Config change" : "Input";
    case "model_output":
      return `Model (${event.stop_reason})`;
    case "tool_result": {
      // The tool's name, once the page has loaded the agent's tool calls.
      const name = timeline.toolCalls.get(event.tool_call_id)?.name;
      return name ? `Tool result: ${name} ${event.outcome}` : `Tool result: ${event.outcome}`;
    }
    default:
      return "Context checkpoint";
  }
}

function BlockView({ block, ids, timeline }: { block: Block; ids: Ids; timeline: Timeline }) {
  switch (block.type) {
    case "text":
      return <p className="text">{String(block.text)}</p>;
    case "reasoning":
      return <p className="text muted">{String(block.text)}</p>;
    case "error":
      return <p className="text error">{String(block.text)}</p>;
    case "tool_call": {
      const id = String(block.tool_call_id);
      // Unknown until the page has loaded the agent's tool calls: no badge rather than a wrong one.
      const state = timeline.toolStates.get(id);
      return (
        <div className="tool-call">
          Tool call <code>{String(block.name)}</code> {state && <span className={`badge tool-${state}`}>{state}</span>}
          <pre>{JSON.stringify(block.input, null, 2)}</pre>
        </div>
      );
    }
    case "structured_data":
      return isCommandOutput(block.value) ? <CommandOutput result={block.value} /> : <pre>{JSON.stringify(block.value, null, 2)}</pre>;
    case "media_ref":
      return <ArtifactView ids={ids} artifactID={String(block.artifact_id)} />;
    default:
      return <pre>{JSON.stringify(block)}</pre>;
  }
}

/** What a person answered to a question or approval: "Permission requested for run_command: Allow". */
function AnswerView({ interaction }: { interaction: Schemas["AgentInteraction"] | undefined }) {
  if (!interaction?.resolution) return null;
  const chosen = interaction.resolution.answers.map((answer, q) => {
    const labels = answer.option_indices.map((i) => interaction.request.questions[q]?.options[i]?.label ?? String(i));
    return [...labels, ...(answer.text ? [`“${answer.text}”`] : [])].join(", ");
  });
  return (
    <p className="text">
      {interaction.request.title}: <strong>{chosen.join("; ")}</strong>
    </p>
  );
}

interface CommandResult {
  command?: unknown;
  output?: unknown;
  stderr?: unknown;
  exit_code?: unknown;
  exit_signal?: unknown;
  done?: unknown;
}

/** run_command and the process tools answer `{command, output, stderr, exit_code, …}` (docs/machines.md). */
function isCommandOutput(value: unknown): value is CommandResult {
  return typeof value === "object" && value !== null && (typeof (value as CommandResult).output === "string" || typeof (value as CommandResult).stderr === "string");
}

/** A command's result as a terminal shows it: the command, its output, its errors, how it ended. */
function CommandOutput({ result }: { result: CommandResult }) {
  const ended = typeof result.exit_code === "number" ? `exit ${result.exit_code}` : typeof result.exit_signal === "string" ? `killed by ${result.exit_signal}` : result.done === false ? "still running" : "";
  return (
    <figure className="command-output">
      {typeof result.command === "string" ? (
        <figcaption>
          <code>$ {result.command}</code>
        </figcaption>
      ) : null}
      {typeof result.output === "string" && result.output ? <pre aria-label="Output">{result.output}</pre> : null}
      {typeof result.stderr === "string" && result.stderr ? (
        <pre className="stderr" aria-label="Errors">
          {result.stderr}
        </pre>
      ) : null}
      {ended ? <p className={`small ${result.exit_code === 0 ? "muted" : "error"}`}>{ended}</p> : null}
    </figure>
  );
}

function SendMessage({ ids, sent }: { ids: Ids; sent: () => void }) {
  const action = useAction();
  const [text, setText] = useState("");
  const send = (mode: "queued" | "steering") => {
    if (!text.trim()) return;
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs", { params: { path: ids }, body: { content_blocks: [{ type: "text", text }], delivery_mode: mode } }));
      setText("");
      sent();
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

function Interactions({ ids, open }: { ids: Ids; open: { data: { data: Schemas["AgentInteraction"][] } | undefined; error: unknown; reload: () => void } }) {
  const items = open.data?.data ?? [];
  return (
    <section aria-labelledby="interactions-title">
      <h2 id="interactions-title" tabIndex={-1}>
        Questions and approvals
      </h2>
      <ErrorNotice error={open.error} />
      {items.length === 0 ? <p className="muted">Nothing waits for an answer.</p> : null}
      {items.map((interaction) => (
        <InteractionForm key={interaction.id} ids={ids} interaction={interaction} done={open.reload} />
      ))}
    </section>
  );
}

function InteractionForm({ ids, interaction, done }: { ids: Ids; interaction: Schemas["AgentInteraction"]; done: () => void }) {
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const answers = interaction.request.questions.map((_, q) => {
      const chosen = form.getAll(`q${q}`).map((value) => Number(value));
      const text = String(form.get(`q${q}-text`) ?? "");
      return { option_indices: chosen, ...(text ? { text } : {}) };
    });
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions/{interactionID}/resolve", { params: { path: { ...ids, interactionID: interaction.id } }, body: { answers } }));
      done();
    });
  };
  return (
    <form className="card interaction" onSubmit={submit} aria-label={interaction.request.title}>
      <h3>{interaction.request.title}</h3>
      {interaction.request.context?.length ? (
        <dl>
          {interaction.request.context.map((item, i) => (
            <div key={i}>
              <dt>{item.label}</dt>
              <dd>{item.value}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {interaction.request.questions.map((question, q) => (
        <fieldset key={q}>
          <legend>{question.prompt}</legend>
          {question.options.map((option, o) => (
            <label key={o} className="inline">
              <input type={question.multiple ? "checkbox" : "radio"} name={`q${q}`} value={o} required={!question.multiple} /> {option.label}
            </label>
          ))}
          {question.options.some((option) => option.allows_text) ? (
            <Field label="Details" id={`${interaction.id}-q${q}-text`}>
              <input id={`${interaction.id}-q${q}-text`} name={`q${q}-text`} />
            </Field>
          ) : null}
        </fieldset>
      ))}
      <ErrorNotice error={action.error} />
      <button className="primary" disabled={action.busy}>
        Answer
      </button>
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

function Backlog({ ids, version }: { ids: Ids; version: number }) {
  const backlog = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs/backlog", { params: { path: ids, query: { limit: 100 } } })), [ids.agentID, version]);
  const action = useAction();
  const items = backlog.data?.data ?? [];
  const base = "/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs/{inputID}" as const;
  const act = (input: Schemas["AgentInput"], what: "cancel" | "promote" | "demote" | "up" | "down", anchor?: string) =>
    void action.run(async () => {
      const params = { path: { ...ids, inputID: input.id } };
      if (what === "cancel") await call(api.POST(`${base}/cancel`, { params }));
      if (what === "promote") await call(api.POST(`${base}/promote_to_steering`, { params, body: { cancel_open_interactions: false } }));
      if (what === "demote") await call(api.POST(`${base}/demote_to_queued`, { params }));
      if ((what === "up" || what === "down") && anchor) {
        await call(api.POST(`${base}/move`, { params, body: { position: what === "up" ? "before" : "after", anchor_input_id: anchor } }));
      }
      backlog.reload();
    });
  return (
    <section aria-labelledby="backlog-title">
      <h2 id="backlog-title">Backlog</h2>
      <ErrorNotice error={backlog.error ?? action.error} />
      {items.length === 0 ? <p className="muted">No input waits.</p> : null}
      <ol className="list backlog" aria-label="Backlog">
        {items.map((input, i) => {
          const text = (input.content_blocks ?? []).map((b) => ("text" in b ? b.text : b.type)).join(" ");
          const sameMode = (other: Schemas["AgentInput"] | undefined) => other && other.delivery_mode === input.delivery_mode ? other.id : undefined;
          const previous = sameMode(items[i - 1]);
          const next = sameMode(items[i + 1]);
          return (
            <li key={input.id}>
              <span className="badge">{input.delivery_mode}</span> <span className="clip">{text}</span>
              <div className="actions small">
                <button type="button" className="secondary" disabled={action.busy || !previous} onClick={() => act(input, "up", previous)} aria-label={`Move up: ${text}`}>↑</button>
                <button type="button" className="secondary" disabled={action.busy || !next} onClick={() => act(input, "down", next)} aria-label={`Move down: ${text}`}>↓</button>
                {input.delivery_mode === "queued" ? (
                  <button type="button" className="secondary" disabled={action.busy} onClick={() => act(input, "promote")} aria-label={`Promote: ${text}`}>Promote</button>
                ) : (
                  <button type="button" className="secondary" disabled={action.busy} onClick={() => act(input, "demote")} aria-label={`Demote: ${text}`}>Demote</button>
                )}
                <button type="button" className="secondary" disabled={action.busy} onClick={() => act(input, "cancel")} aria-label={`Cancel: ${text}`}>Cancel</button>
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
