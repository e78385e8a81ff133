import { forwardRef, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Field, useAction } from "../ui";
import type { Ids } from "./ids";

/**
 * A question or approval, answerable where it was asked: radio buttons or checkboxes per question (arrow
 * keys move between options, Space chooses, Enter answers), free text where an option allows it.
 */
export const InteractionForm = forwardRef<HTMLFormElement, { ids: Ids; interaction: Schemas["AgentInteraction"]; done: () => void }>(function InteractionForm(
  { ids, interaction, done },
  ref,
) {
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
      await call(
        api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions/{interactionID}/resolve", {
          params: { path: { ...ids, interactionID: interaction.id } },
          body: { answers },
        }),
      );
      done();
    });
  };
  return (
    <form ref={ref} className="card interaction" onSubmit={submit} aria-label={interaction.request.title} id={`interaction-${interaction.id}`} tabIndex={-1}>
      <h3>
        <span className="badge wait">{interaction.interaction_kind === "permission" ? "approval" : "question"}</span> {interaction.request.title}
      </h3>
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
});

/** What a person answered to a question or approval: "Permission requested for run_command: Allow". */
export function AnswerView({ interaction }: { interaction: Schemas["AgentInteraction"] | undefined }) {
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

/**
 * Which tool call an open interaction was asked about: a permission names its tool in its title
 * ("Permission requested for run_command"), a question is asked by an ask_question call. The oldest
 * matching call still waiting, each call used once; undefined places it at the end of the current turn.
 */
export function placeInteractions(open: readonly Schemas["AgentInteraction"][], calls: ReadonlyMap<string, Schemas["ToolCall"]>, states: ReadonlyMap<string, string>): Map<string, string> {
  const byInteraction = new Map<string, string>();
  const taken = new Set<string>();
  const waiting = [...calls.values()].filter((c) => {
    const state = states.get(c.id) ?? c.state;
    return state === "awaiting_permission" || state === "waiting" || state === "running";
  });
  for (const interaction of open) {
    const match = waiting.find((c) => {
      if (taken.has(c.id)) return false;
      if (interaction.interaction_kind === "question") return c.name === "ask_question";
      return interaction.request.title.includes(c.name) && (states.get(c.id) ?? c.state) === "awaiting_permission";
    });
    if (match) {
      taken.add(match.id);
      byInteraction.set(interaction.id, match.id);
    }
  }
  return byInteraction;
}
