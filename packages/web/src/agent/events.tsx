import { useRef, useState, type ReactNode } from "react";
import type { Schemas } from "../api/client";
import type { AgentEvent, Retry, Timeline } from "../pages/timeline";
import { ArtifactView } from "../pages/artifact";
import { when } from "../ui";
import type { Ids } from "./ids";
import { AnswerView, InteractionForm } from "./interactions";
import { Markdown } from "./markdown";
import { useStickyScroll } from "./scroll";
import { duration, groupByTurn, relative } from "./turns";

type Block = { type: string; [key: string]: unknown };

export interface Asked {
  /** Open interactions by the tool call they were asked about. */
  atCall: Map<string, Schemas["AgentInteraction"][]>;
  /** Open interactions no call was found for: shown at the end of the current turn. */
  unplaced: Schemas["AgentInteraction"][];
  answered: Map<string, Schemas["AgentInteraction"]>;
  done: () => void;
}

/**
 * The timeline read by turn: each turn a section of its events, model output as markdown (live while it
 * streams), a tool call as one line that opens to its arguments and result, questions and approvals where
 * they were asked. The box stays at the bottom while live, keeps its place when older events load, and
 * offers a jump to the latest when scrolled up.
 */
export function TimelineView({ ids, timeline, asked }: { ids: Ids; timeline: Timeline; asked: Asked }) {
  const box = useRef<HTMLDivElement>(null);
  const groups = groupByTurn(timeline.events, timeline.previews);
  const previewText = [...timeline.previews.values()].map((p) => p.text.length).join(",");
  const scroll = useStickyScroll(box, timeline.events[0]?.sequence, `${timeline.events.length}/${previewText}/${asked.unplaced.length}/${timeline.retry?.attempt ?? 0}`);
  const results = new Map<string, Extract<AgentEvent, { event_kind: "tool_result" }>>();
  for (const event of timeline.events) if (event.event_kind === "tool_result") results.set(event.tool_call_id, event);
  const lastTurn = groups.at(-1)?.turnId;
  const retryTurn = timeline.retry ? (groups.find((g) => g.turnId === timeline.retry!.turnId)?.turnId ?? lastTurn) : undefined;

  return (
    <div className="timeline-frame">
      <div className="timeline-box" ref={box} onScroll={scroll.onScroll} tabIndex={0} role="region" aria-label="Timeline, scrollable">
        <div>
          {timeline.hasOlder ? (
            <button type="button" className="secondary older" disabled={timeline.loadingOlder} onClick={() => void timeline.loadOlder()}>
              {timeline.loadingOlder ? "Loading older events…" : "Load older events"}
            </button>
          ) : timeline.events.length > 0 ? (
            <p className="muted small start">The agent's first event.</p>
          ) : null}
          <ol className="timeline" aria-label="Timeline">
            {groups.map((group) => (
              <li key={group.turnId} className="turn">
                <section aria-label={group.sequence ? `Turn ${group.sequence}` : "Current turn"}>
                  <h3 className="turn-head small muted">
                    {group.sequence ? `Turn ${group.sequence}` : "Current turn"}
                    {group.events[0] ? <Time at={group.events[0].created_at} /> : null}
                  </h3>
                  <ol className="turn-events">
                    {group.events.map((event) => (
                      <EventView key={event.id} event={event} ids={ids} timeline={timeline} results={results} asked={asked} />
                    ))}
                    {group.previews.map(([id, preview]) => (
                      <li key={id} className="event preview" aria-busy="true">
                        <div className="event-head">
                          <strong>Model is answering…</strong>
                        </div>
                        <Markdown text={preview.text} streaming />
                      </li>
                    ))}
                    {group.turnId === retryTurn && timeline.retry ? <RetryNotice retry={timeline.retry} /> : null}
                    {group.turnId === lastTurn
                      ? asked.unplaced.map((interaction) => (
                          <li key={interaction.id} className="notice asked">
                            <InteractionForm ids={ids} interaction={interaction} done={asked.done} />
                          </li>
                        ))
                      : null}
                  </ol>
                </section>
              </li>
            ))}
          </ol>
        </div>
      </div>
      {scroll.away ? (
        <button type="button" className="primary jump" onClick={scroll.jump}>
          Jump to latest ↓
        </button>
      ) : null}
    </div>
  );
}

/** "retrying (attempt 3 of 8): connection refused" in the turn it happened in; or why the turn ends. */
export function retryText(retry: Retry): string {
  return retry.retrying ? `retrying (attempt ${retry.attempt} of ${retry.maxAttempts}): ${retry.reason}` : `failed (attempt ${retry.attempt} of ${retry.maxAttempts}): ${retry.reason}`;
}

function RetryNotice({ retry }: { retry: Retry }) {
  return (
    <li className="notice retry">
      <strong>{retryText(retry)}</strong>
      {retry.plan ? <span className="small muted"> · {retry.plan}</span> : null}
    </li>
  );
}

function Time({ at }: { at: string }) {
  return (
    <time dateTime={at} title={when(at)}>
      {" · "}
      {relative(at)}
    </time>
  );
}

function EventView(props: { event: AgentEvent; ids: Ids; timeline: Timeline; results: Map<string, AgentEvent>; asked: Asked }) {
  const { event, ids, timeline, asked } = props;
  const blocks = "content_blocks" in event ? ((event.content_blocks ?? []) as Block[]) : [];
  let extra: ReactNode = null;
  if (event.event_kind === "tool_result") {
    const c = timeline.toolCalls.get(event.tool_call_id);
    const took = duration(c?.created_at, c?.completed_at);
    extra = took ? <span className="muted small"> · took {took}</span> : null;
  }
  return (
    <li className={`event ${event.event_kind}`} data-sequence={event.sequence}>
      <div className="event-head">
        <strong>{title(event, timeline)}</strong>
        {extra}
        <span className="muted small">
          {" "}
          · #{event.sequence}
          <Time at={event.created_at} />
        </span>
      </div>
      {event.event_kind === "context_checkpoint" ? <p className="text muted">{event.summary}</p> : null}
      {event.event_kind === "agent_input" && event.interaction_id ? <AnswerView interaction={asked.answered.get(event.interaction_id)} /> : null}
      {blocks.map((block, i) => (
        <BlockView key={i} block={block} ids={ids} timeline={timeline} results={props.results} asked={asked} markdown={event.event_kind === "model_output"} />
      ))}
    </li>
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

function BlockView(props: { block: Block; ids: Ids; timeline: Timeline; results: Map<string, AgentEvent>; asked: Asked; markdown: boolean }) {
  const { block, ids, timeline } = props;
  switch (block.type) {
    case "text":
      return props.markdown ? <Markdown text={String(block.text)} /> : <p className="text">{String(block.text)}</p>;
    case "reasoning":
      return (
        <details className="reasoning">
          <summary className="small muted">Reasoning</summary>
          <p className="text muted">{String(block.text)}</p>
        </details>
      );
    case "error":
      return <p className="text error">{String(block.text)}</p>;
    case "tool_call": {
      const id = String(block.tool_call_id);
      return (
        <>
          <ToolCallLine id={id} name={String(block.name)} input={block.input} ids={ids} timeline={timeline} result={props.results.get(id)} />
          {(props.asked.atCall.get(id) ?? []).map((interaction) => (
            <InteractionForm key={interaction.id} ids={ids} interaction={interaction} done={props.asked.done} />
          ))}
        </>
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

/**
 * One line per tool call: its name, state and how long it took; opened, its arguments and its result.
 * The opened part is rendered only while open, so the result is not in the page twice (its own event
 * shows it too).
 */
function ToolCallLine(props: { id: string; name: string; input: unknown; ids: Ids; timeline: Timeline; result: AgentEvent | undefined }) {
  const { id, name, timeline, result } = props;
  const [open, setOpen] = useState(false);
  const call = timeline.toolCalls.get(id);
  // Unknown until the page has loaded the agent's tool calls: no badge rather than a wrong one.
  const state = timeline.toolStates.get(id) ?? call?.state;
  const outcome = result && "outcome" in result ? result.outcome : call?.outcome;
  const took = duration(call?.created_at, call?.completed_at);
  const shown = outcome ?? state;
  return (
    <details className="tool-call" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        <span aria-hidden="true" className="tool-icon">
          ⚙
        </span>{" "}
        <code>{name}</code> {shown ? <span className={`badge tool-${shown}`}>{shown}</span> : null}
        {took ? <span className="muted small"> {took}</span> : null}
      </summary>
      {open ? (
        <div className="tool-body">
          <h4 className="small muted">Arguments</h4>
          <pre>{JSON.stringify(props.input, null, 2)}</pre>
          <h4 className="small muted">Result</h4>
          {result && "content_blocks" in result ? (
            ((result.content_blocks ?? []) as Block[]).map((block, i) => <ResultBlock key={i} block={block} ids={props.ids} />)
          ) : (
            <p className="muted small">No result yet.</p>
          )}
        </div>
      ) : null}
    </details>
  );
}

function ResultBlock({ block, ids }: { block: Block; ids: Ids }) {
  if (block.type === "text") return <p className="text">{String(block.text)}</p>;
  if (block.type === "structured_data") return isCommandOutput(block.value) ? <CommandOutput result={block.value} /> : <pre>{JSON.stringify(block.value, null, 2)}</pre>;
  if (block.type === "media_ref") return <ArtifactView ids={ids} artifactID={String(block.artifact_id)} />;
  return <pre>{JSON.stringify(block)}</pre>;
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
