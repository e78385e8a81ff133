import { Ajv2020 } from "ajv/dist/2020.js";
import { inArray } from "drizzle-orm";
import { integrations } from "../../db/schema/index.js";
import { KIND_CATALOGS } from "../../integrations/registry.js";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { currentSelection, saveSelection } from "../../modules/integrations/handler-selection.js";
import { findAssignment } from "../../modules/integrations/launch-store.js";
import type { AgentDefinition } from "../definition.js";
import type { AgentRow } from "../store/journal.js";
import { completeToolCall, textBlock, type ToolCallRow } from "../store/tool-calls.js";

/** `list_interaction_handlers` and `set_interaction_handler` (catalog-handlers.ts), run in the tool work's transaction. */

const DEFAULT_PAGE = 20;
const argsChecker = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

interface ListInput {
  limit?: number;
  cursor?: string;
}
interface SetInput {
  handler: string | null;
  args: Record<string, unknown>;
  auto_select?: boolean;
}

export async function dispatchHandlerTool(tx: Tx, agent: AgentRow, call: ToolCallRow, definition: AgentDefinition): Promise<void> {
  const handlers = [...(definition.interactionHandlers ?? [])].sort((a, b) => (a.integrationName < b.integrationName ? -1 : 1));
  const kinds = await kindsOf(tx, handlers.map((handler) => handler.integrationId));
  if (call.name === "list_interaction_handlers") {
    const input = call.input as unknown as ListInput;
    const after = handlers.filter((handler) => input.cursor === undefined || handler.integrationName > input.cursor);
    const page = after.slice(0, input.limit ?? DEFAULT_PAGE);
    const data = [];
    for (const handler of page) {
      const kind = kinds.get(handler.integrationId);
      const assignment = await findAssignment(tx, agent.id, handler.integrationId);
      data.push({
        name: handler.integrationName,
        integration_id: encodeId("integration", handler.integrationId),
        integration_kind: kind ?? null,
        args_schema: (kind && KIND_CATALOGS[kind]?.capabilities.interaction_handler?.input_schema) ?? null,
        destination: assignment ? { conversation: assignment.conversation } : null,
      });
    }
    const selection = await currentSelection(tx, agent.id, handlers);
    const next = after.length > page.length ? page[page.length - 1]!.integrationName : null;
    const value = { data, next_cursor: next, selected: selection.handler?.integrationName ?? null, auto_select: selection.autoSelect };
    return finish(tx, agent, call, "succeeded", [{ type: "structured_data", value }]);
  }
  const input = call.input as unknown as SetInput;
  const handler = input.handler === null ? null : handlers.find((candidate) => candidate.integrationName === input.handler);
  if (handler === undefined) {
    return finish(tx, agent, call, "failed", [textBlock(`No interaction handler named "${input.handler}"; list_interaction_handlers names them.`)]);
  }
  const schema = handler ? KIND_CATALOGS[kinds.get(handler.integrationId) ?? ""]?.capabilities.interaction_handler?.input_schema : { type: "object", maxProperties: 0 };
  const validate = schema && argsChecker.compile(schema);
  if (!validate || !validate(input.args)) {
    const problems = (validate?.errors ?? []).map((e) => `${e.instancePath || "args"} ${e.message ?? "is invalid"}`).join("; ");
    return finish(tx, agent, call, "failed", [textBlock(`Invalid args for ${input.handler ?? "the dashboard"}: ${problems || "the handler is gone"}`)]);
  }
  const autoSelect = await saveSelection(tx, agent, handler?.integrationId ?? null, input.auto_select);
  return finish(tx, agent, call, "succeeded", [{ type: "structured_data", value: { selected: handler?.integrationName ?? null, auto_select: autoSelect } }]);
}

async function finish(tx: Tx, agent: AgentRow, call: ToolCallRow, outcome: "succeeded" | "failed", blocks: Parameters<typeof completeToolCall>[4]): Promise<void> {
  await completeToolCall(tx, agent, call, outcome, blocks);
}

async function kindsOf(tx: Tx, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.select({ id: integrations.id, kind: integrations.kind }).from(integrations).where(inArray(integrations.id, ids));
  return new Map(rows.map((row) => [row.id, row.kind]));
}
