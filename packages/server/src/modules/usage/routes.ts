import type { HttpApp } from "../../platform/http/app.js";
import { DEFAULT_PAGE_SIZE } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses } from "../../platform/http/schemas.js";
import { decodeId, type IdKind } from "../../platform/ids.js";
import { OrgParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { UsageService } from "./service.js";
import { usageView } from "./views.js";

export function usageRoutes(app: HttpApp, deps: { usage: UsageService }) {
  const { usage } = deps;

  app.get(
    "/orgs/:orgID/usage",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getOrgUsage",
        summary: "Get model usage",
        description:
          "Model calls, tokens and cost of the organization's agents over whole UTC days, grouped by the keys in group_by and " +
          "sorted by them, with the totals over every group (org.read; owners and admins see every project, others the projects " +
          "they can read). Usage belongs to the actor of the input that opened the turn. Read from daily rollups kept as calls are " +
          "recorded (docs/usage-and-budgets.md). 400 when to is not after from or they are more than 366 days apart.",
        params: OrgParams,
        querystring: s.UsageQuery,
        response: { 200: s.UsageResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const answer = await usage.usage(request.principal!, pathId("org", request.params.orgID), {
        ...(q.from !== undefined ? { from: q.from } : {}),
        ...(q.to !== undefined ? { to: q.to } : {}),
        groupBy: (q.group_by?.split(",") ?? []) as s.UsageKey[],
        ...filter("projectId", "project", q.project_id),
        ...filter("agentId", "agent", q.agent_id),
        ...filter("actorId", "actor", q.actor_id),
        ...filter("modelId", "configuredModel", q.model_id),
        limit: q.limit ?? DEFAULT_PAGE_SIZE,
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
      return usageView(answer);
    },
  );
}

/** A filter's UUID (the schema checked the id's shape, so it decodes), or nothing when absent. */
function filter<K extends string>(name: K, kind: IdKind, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [name]: decodeId(kind, value)! } as Partial<Record<K, string>>);
}
