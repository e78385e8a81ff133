import { InvalidArgumentError, type Command } from "commander";
import { unwrap, type SvcClient } from "@svc/sdk";
import { context, UsageError } from "../context.js";
import { agentPath } from "./agents.js";

export function interactionCommands(program: Command): void {
  program
    .command("approve <agent> [interaction]")
    .description("approve a permission request: its first option (the only open one when no id is given)")
    .action(async (agent: string, interaction: string | undefined, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await agentPath(ctx, agent);
      const interactionID = interaction ?? (await onlyOpen(ctx.client(), path));
      const resolved = await resolve(ctx.client(), { ...path, interactionID }, [{ option_indices: [0] }]);
      ctx.print(resolved, () => `Approved ${interactionID}.`);
    });
  program
    .command("answer <agent> <interaction>")
    .description("answer a question: one --option per question, in order (comma-separate several choices)")
    .requiredOption("--option <indices>", "the chosen option numbers (0-based) of one question; repeat for the next", collectOptions, [])
    .option("--text <text>", "free text for an option that allows it (the last question's)")
    .action(async (agent: string, interactionID: string, options: { option: number[][]; text?: string }, command: Command) => {
      const ctx = await context(command);
      const answers = options.option.map((indices, i) => ({ option_indices: indices, ...(options.text && i === options.option.length - 1 ? { text: options.text } : {}) }));
      const resolved = await resolve(ctx.client(), { ...(await agentPath(ctx, agent)), interactionID }, answers);
      ctx.print(resolved, () => `Answered ${interactionID}.`);
    });
}

type Path = { orgID: string; projectID: string; agentID: string };

function resolve(client: SvcClient, path: Path & { interactionID: string }, answers: Array<{ option_indices: number[]; text?: string }>) {
  return unwrap(client.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions/{interactionID}/resolve", { params: { path }, body: { answers } }));
}

async function onlyOpen(client: SvcClient, path: Path): Promise<string> {
  const open = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path, query: { state: "open", limit: 2 } } }));
  const [first, ...rest] = open.data;
  if (!first || rest.length > 0) throw new UsageError(`the agent has ${open.data.length === 0 ? "no" : "several"} open interactions: name one`);
  return first.id;
}

function collectOptions(value: string, previous: number[][]): number[][] {
  const indices = value.split(",").map((part) => Number(part.trim()));
  if (indices.some((n) => !Number.isSafeInteger(n) || n < 0)) throw new InvalidArgumentError(`not option numbers: ${value}`);
  return [...previous, indices];
}
