import type { InteractionForm } from "../store/interactions.js";

/** The approval form of an `always_ask` tool call: Allow at index 0, Deny (with an optional reason) at 1. */
export function permissionForm(toolName: string, input: Record<string, unknown>, details: Array<{ label: string; value: string }> = []): InteractionForm {
  const shown = JSON.stringify(input, null, 2);
  return {
    title: `Permission requested for ${toolName}`,
    context: [
      { label: "Tool", value: toolName },
      ...details,
      { label: "Input", value: shown.length > 4000 ? `${shown.slice(0, 4000)}…` : shown },
    ],
    questions: [{ prompt: `Allow ${toolName} to run with this input?`, multiple: false, options: [{ label: "Allow" }, { label: "Deny", allows_text: true }] }],
  };
}

export interface AskQuestionInput {
  questions: Array<{ prompt: string; multiple?: boolean; options: Array<{ label: string }> }>;
}

/** `ask_question`'s questions, each with an "Other" option that takes free text. */
export function questionForm(input: AskQuestionInput): InteractionForm {
  return {
    title: "The agent has a question",
    questions: input.questions.map((q) => ({
      prompt: q.prompt,
      multiple: q.multiple ?? false,
      options: [...q.options.map((o) => ({ label: o.label })), { label: "Other", allows_text: true }],
    })),
  };
}
