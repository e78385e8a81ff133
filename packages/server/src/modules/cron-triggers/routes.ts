import { Type, type Static } from "typebox";
import { AppError } from "../../platform/errors.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, IdempotencyKeyHeader, Page } from "../../platform/http/schemas.js";
import { decodeId } from "../../platform/ids.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { CronTriggerService, Target } from "./service.js";
import { cronTriggerView } from "./views.js";

const NO_ROW = "00000000-0000-0000-0000-000000000000";

export function cronTriggerRoutes(app: HttpApp, deps: { cronTriggers: CronTriggerService }) {
  const { cronTriggers } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/cron-triggers",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listCronTriggers",
        summary: "List cron triggers",
        description: "The project's cron triggers (agent.read); by default created_at descending, then id descending.",
        params: ProjectParams,
        querystring: s.ListCronTriggersQuery,
        response: { 200: Page(s.CronTrigger), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const { agent_id: agentId, agent_profile_id: profileId } = request.query;
      // A filter id of the right shape that names no possible row matches nothing (the all-zero uuid is never made).
      const rows = await cronTriggers.list(request.principal!, ...projectPath(request.params), {
        name: request.query.name,
        agentId: agentId === undefined ? undefined : (decodeId("agent", agentId) ?? NO_ROW),
        profileId: profileId === undefined ? undefined : (decodeId("agentProfile", profileId) ?? NO_ROW),
        page,
      });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), cronTriggerView);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/cron-triggers",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createCronTrigger",
        summary: "Create a cron trigger",
        description:
          "Creates a cron trigger (project.manage). Firings missed while svc could not fire are coalesced: the trigger fires " +
          "once, for the oldest missed time, then resumes its schedule from the current time. With an Idempotency-Key, " +
          "repeating the request answers 200 with the same trigger; reusing the key for another request is a 409. message_template " +
          "is required, except for an integration target, whose settings carry it (reference docs: integrations/overview, " +
          "\"Start a new thread on a schedule\").",
        params: ProjectParams,
        headers: IdempotencyKeyHeader,
        body: s.CreateCronTriggerRequest,
        response: { 200: s.CronTrigger, 201: s.CronTrigger, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await cronTriggers.create(request.principal!, ...projectPath(request.params), {
        name: body.name,
        ...targetOf(body),
        cron: body.cron,
        timezone: body.timezone ?? "UTC",
        enabled: body.enabled ?? true,
        idempotencyKey: request.headers["idempotency-key"],
      });
      return reply.status(result.created ? 201 : 200).send(cronTriggerView(result.trigger));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/cron-triggers/:cronTriggerID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getCronTrigger",
        summary: "Get a cron trigger",
        description: "One cron trigger of the project (agent.read), with its next and last firing and the most recent failure, if any.",
        params: s.CronTriggerParams,
        response: { 200: s.CronTrigger, ...errorResponses() },
      },
    },
    async (request) => cronTriggerView(await cronTriggers.get(request.principal!, ...triggerPath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/projects/:projectID/cron-triggers/:cronTriggerID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateCronTrigger",
        summary: "Update a cron trigger",
        description:
          "Updates the name, schedule, timezone, message template or enabled state (project.manage). The target is " +
          "immutable. A new schedule, timezone or enabled state recomputes next_fire_at from now; disabling clears it.",
        params: s.CronTriggerParams,
        body: s.UpdateCronTriggerRequest,
        response: { 200: s.CronTrigger, ...errorResponses(409) },
      },
    },
    async (request) =>
      cronTriggerView(
        await cronTriggers.update(request.principal!, ...triggerPath(request.params), {
          name: request.body.name,
          cron: request.body.cron,
          timezone: request.body.timezone,
          messageTemplate: request.body.message_template,
          enabled: request.body.enabled,
        }),
      ),
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID/cron-triggers/:cronTriggerID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteCronTrigger",
        summary: "Delete a cron trigger",
        description: "Deletes the trigger (project.manage); it fires no more. Work a firing already started goes on.",
        params: s.CronTriggerParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await cronTriggers.remove(request.principal!, ...triggerPath(request.params));
      return reply.status(204).send(null);
    },
  );
}

function triggerPath(params: { orgID: string; projectID: string; cronTriggerID: string }): [string, string, string] {
  return [...projectPath(params), pathId("cronTrigger", params.cronTriggerID)];
}

/**
 * The target and the message template of a creation. An integration target's template is its settings'
 * message_template (reference docs: integrations/overview); a top-level one given beside it must equal it.
 */
function targetOf(body: Static<typeof s.CreateCronTriggerRequest>): { target: Target; messageTemplate: string } {
  const given = body.message_template;
  if (body.target.type === "integration") {
    const { settings } = body.target;
    const inSettings = typeof settings["message_template"] === "string" ? settings["message_template"] : "";
    if (given !== undefined && given !== inSettings) throw missing("must equal target.settings.message_template, or be left out");
    return { target: { kind: "integration", integrationId: pathId("integration", body.target.integration_id), settings }, messageTemplate: inSettings };
  }
  if (given === undefined) throw missing("is required for an agent or profile target");
  const target: Target =
    body.target.type === "agent"
      ? { kind: "agent", agentId: pathId("agent", body.target.agent_id) }
      : { kind: "profile", profileId: pathId("agentProfile", body.target.agent_profile_id) };
  return { target, messageTemplate: given };
}

const missing = (message: string) => new AppError("validation_failed", "request body failed validation", { issues: [{ path: "/message_template", message }] });
