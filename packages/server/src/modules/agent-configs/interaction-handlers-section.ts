import { and, eq } from "drizzle-orm";
import { integrations } from "../../db/schema/index.js";
import { describeIssues, type KindCatalog } from "../integrations/capability-schemas.js";
import type { Tx } from "../../platform/db/index.js";
import type { InteractionHandlerDefinition } from "../../runtime/definition.js";
import { describe, isObject } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * The `interaction_handlers` section: `{<integration name>: {<handler arguments>}}`, the integrations of
 * the project that may show this agent's questions and approvals (reference docs: integrations/overview,
 * "Route questions and approvals"). Each must exist when the config is compiled, its kind must publish an
 * `interaction_handler`, and the arguments must match that capability's `input_schema`.
 */

export interface InteractionHandlerChoice {
  integrationName: string;
  args: Record<string, unknown>;
}

/** More handlers than integrations a project reasonably connects is a mistake. */
const MAX_HANDLERS = 16;

export function readInteractionHandlersSection(issues: ConfigIssues, value: unknown): InteractionHandlerChoice[] {
  if (!isObject(value)) {
    issues.add(["interaction_handlers"], `must be an object from integration names to handler arguments, such as {eng-slack: {}}; got ${describe(value)}`);
    return [];
  }
  const names = Object.keys(value);
  if (names.length > MAX_HANDLERS) issues.add(["interaction_handlers"], `at most ${MAX_HANDLERS} interaction handlers; got ${names.length}`);
  return names.flatMap((name) => {
    const args = value[name];
    if (isObject(args)) return [{ integrationName: name, args }];
    issues.add(["interaction_handlers", name], `must be an object of handler arguments ({} for the shipped handlers); got ${describe(args)}`);
    return [];
  });
}

/** Checks each handler against the project's integrations; answers the valid ones, in the order written. */
export async function resolveInteractionHandlers(
  tx: Tx,
  catalog: KindCatalog,
  orgId: string,
  projectId: string,
  choices: readonly InteractionHandlerChoice[],
  issues: ConfigIssues,
): Promise<InteractionHandlerDefinition[]> {
  const handlers: InteractionHandlerDefinition[] = [];
  for (const choice of choices) {
    const path = ["interaction_handlers", choice.integrationName];
    const [row] = await tx
      .select({ id: integrations.id, kind: integrations.kind })
      .from(integrations)
      .where(and(eq(integrations.orgId, orgId), eq(integrations.projectId, projectId), eq(integrations.name, choice.integrationName)));
    if (!row) {
      issues.addAtKey(path, `no integration named "${choice.integrationName}" in this project`);
      continue;
    }
    if (!catalog.hasCapability(row.kind, "interaction_handler")) {
      issues.addAtKey(path, `integration "${choice.integrationName}" (${row.kind}) has no interaction handler`);
      continue;
    }
    const problems = catalog.capabilityIssues(row.kind, "interaction_handler", choice.args, "");
    if (problems.length > 0) {
      issues.add(path, `handler arguments do not match the ${row.kind} interaction handler: ${describeIssues(problems, "arguments")}`);
      continue;
    }
    handlers.push({ integrationName: choice.integrationName, integrationId: row.id, args: choice.args });
  }
  return handlers;
}
