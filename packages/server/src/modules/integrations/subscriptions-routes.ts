import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, iso, Page } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import * as s from "./schemas.js";
import type { IntegrationPath } from "./setup-service.js";
import type { SubscriptionsService } from "./subscriptions-service.js";
import type { SubscriptionWithAgent } from "./subscriptions-store.js";

const OLDEST_FIRST = "created_at" as const;

/** `…/integrations/{integrationID}/subscriptions` (reference docs: integrations/overview, "Subscribe a conversation"). */
export function subscriptionRoutes(app: HttpApp, deps: { subscriptions: SubscriptionsService }) {
  const { subscriptions } = deps;
  const base = "/orgs/:orgID/projects/:projectID/integrations/:integrationID/subscriptions";

  app.post(
    base,
    {
      schema: {
        tags: [s.TAG],
        operationId: "createIntegrationSubscription",
        summary: "Subscribe an agent to a conversation",
        description:
          "Forwards one provider conversation to an active agent of the project (project manage), every event or those " +
          "`events` selects. Repeating an active attachment answers it with 200 (with `events` as this request says); a new " +
          "one is 201. At most 16 agents per conversation and integration (409).",
        params: s.IntegrationParams,
        body: s.CreateSubscriptionRequest,
        response: { 200: s.Subscription, 201: s.Subscription, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const result = await subscriptions.create(request.principal!, pathOf(request.params), {
        agentId: pathId("agent", request.body.agent_id),
        conversation: request.body.conversation,
        events: request.body.events ?? null,
      });
      return reply.status(result.created ? 201 : 200).send(subscriptionView(result.subscription));
    },
  );

  app.get(
    base,
    {
      schema: {
        tags: [s.TAG],
        operationId: "listIntegrationSubscriptions",
        summary: "List an integration's subscriptions",
        description: "The integration's subscriptions, created_at ascending, then id ascending (project read).",
        params: s.IntegrationParams,
        querystring: s.ListSubscriptionsQuery,
        response: { 200: Page(s.Subscription), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query, OLDEST_FIRST);
      const rows = await subscriptions.list(request.principal!, pathOf(request.params), page);
      return toPage(rows, page.limit, OLDEST_FIRST, (r) => ({ value: r.createdAt, id: r.id }), subscriptionView);
    },
  );

  app.delete(
    `${base}/:subscriptionID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteIntegrationSubscription",
        summary: "Delete a subscription",
        description: "Stops forwarding the conversation to the agent (project manage); the agent and its history stay.",
        params: s.SubscriptionParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await subscriptions.remove(request.principal!, pathOf(request.params), pathId("integrationSubscription", request.params.subscriptionID));
      return reply.status(204).send(null);
    },
  );
}

function pathOf(params: { orgID: string; projectID: string; integrationID: string }): IntegrationPath {
  const [orgId, projectId] = projectPath(params);
  return { orgId, projectId, integrationId: pathId("integration", params.integrationID) };
}

export function subscriptionView(row: SubscriptionWithAgent) {
  return {
    id: encodeId("integrationSubscription", row.id),
    integration_id: encodeId("integration", row.integrationId),
    project_id: encodeId("project", row.projectId),
    agent_id: encodeId("agent", row.agentId),
    agent_name: row.agentName,
    conversation: row.conversation,
    ...(row.events === null ? {} : { events: row.events }),
    created_at: iso(row.createdAt),
  };
}
