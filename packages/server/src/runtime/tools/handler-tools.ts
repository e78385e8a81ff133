import { inArray } from "drizzle-orm";
import { integrations } from "../../db/schema/index.js";
import { describeIssues, type KindCatalog } from "../../modules/integrations/capability-schemas.js";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { currentSelection, saveSelection } from "../../modules/integrations/handler-selection.js";
import { findAssignments } from "../../modules/integrations/launch-store.js";
import type { AgentDefinition } from "../definition.js";
import type { AgentRow } from "../store/journal.js";
import { completeToolCall, textBlock, type ToolCallRow } from "../store/tool-calls.js";

/** `list_interaction_handlers` and `set_interaction_handler` (catalog-handlers.ts), run in the tool work's transaction. */

const DEFAULT_PAGE = 20;

interface ListInput {
  limit?: number;
  cursor?: string;
}
interface SetInput {
  handler: string | null;
  args: Record<string, unknown>;
  auto_select?: boolean;
}

type Outcome = { outcome: "succeeded" | "failed"; blocks: unknown[] };
type Handler = NonNullable<AgentDefinition["interactionHandlers"]>[number];
type Catalog = Pick<KindCatalog, "catalog" | "capabilityIssues">;

export async function dispatchHandlerTool(tx: Tx, agent: AgentRow, call: ToolCallRow, definition: AgentDefinition, catalog: Catalog | undefined): Promise<void> {
  if (!catalog) {
    await completeToolCall(tx, agent, call, "failed", [textBlock(`The built-in tool ${call.name} cannot run in this deployment.`)]);
    return;
  }
  const handlers = [...(definition.interactionHandlers ?? [])].sort((a, b) => (a.integrationName < b.integrationName ? -1 : 1));
  const kinds = await kindsOf(tx, handlers.map((handler) => handler.integrationId));
  const { outcome, blocks } =
    call.name === "list_interaction_handlers"
      ? await listHandlers(tx, catalog, agent, handlers, kinds, call.input as unknown as ListInput)
      : await setHandler(tx, catalog, agent, handlers, kinds, call.input as unknown as SetInput);
  await completeToolCall(tx, agent, call, outcome, blocks);
}

async function listHandlers(tx: Tx, catalog: Catalog, agent: AgentRow, handlers: Handler[], kinds: Map<string, string>, input: ListInput): Promise<Outcome> {
  const after = handlers.filter((handler) => input.cursor === undefined || handler.integrationName > input.cursor);
  const page = after.slice(0, input.limit ?? DEFAULT_PAGE);
  const assignments = await findAssignments(tx, agent.id, page.map((handler) => handler.integrationId));
  const data = page.map((handler) => {
    const kind = kinds.get(handler.integrationId);
    const assignment = assignments.get(handler.integrationId);
    return {
      name: handler.integrationName,
      integration_id: encodeId("integration", handler.integrationId),
      integration_kind: kind ?? null,
      args_schema: (kind && catalog.catalog(kind)?.capabilities.interaction_handler?.input_schema) ?? null,
      destination: assignment ? { conversation: assignment.conversation } : null,
    };
  });
  const selection = await currentSelection(tx, agent.id, handlers);
  const next = after.length > page.length ? page[page.length - 1]!.integrationName : null;
  const value = { data, next_cursor: next, selected: selection.handler?.integrationName ?? null, auto_select: selection.autoSelect };
  return { outcome: "succeeded", blocks: [{ type: "structured_data", value }] };
}

async function setHandler(tx: Tx, catalog: Catalog, agent: AgentRow, handlers: Handler[], kinds: Map<string, string>, input: SetInput): Promise<Outcome> {
  const handler = input.handler === null ? null : handlers.find((candidate) => candidate.integrationName === input.handler);
  if (handler === undefined) {
    return { outcome: "failed", blocks: [textBlock(`No interaction handler named "${input.handler}"; list_interaction_handlers names them.`)] };
  }
  const problems = argsProblems(catalog, handler && kinds.get(handler.integrationId), input.args);
  if (problems) return { outcome: "failed", blocks: [textBlock(`Invalid args for ${input.handler ?? "the dashboard"}: ${problems}`)] };
  const autoSelect = await saveSelection(tx, agent, handler?.integrationId ?? null, input.auto_select);
  return { outcome: "succeeded", blocks: [{ type: "structured_data", value: { selected: handler?.integrationName ?? null, auto_select: autoSelect } }] };
}

/**
 * What is wrong with the arguments for a handler of `kind` (its published interaction_handler schema), or
 * for the dashboard (`null`: no arguments); undefined when they are right. A handler whose integration is
 * gone (`undefined` kind) takes none.
 */
function argsProblems(catalog: Catalog, kind: string | null | undefined, args: Record<string, unknown>): string | undefined {
  if (kind === undefined) return "the handler is gone";
  if (kind === null) return Object.keys(args).length === 0 ? undefined : "the dashboard takes no arguments";
  const issues = catalog.capabilityIssues(kind, "interaction_handler", args, "");
  return issues.length === 0 ? undefined : describeIssues(issues, "args");
}

async function kindsOf(tx: Tx, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.select({ id: integrations.id, kind: integrations.kind }).from(integrations).where(inArray(integrations.id, ids));
  return new Map(rows.map((row) => [row.id, row.kind]));
}
