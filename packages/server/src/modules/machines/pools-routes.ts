import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import * as s from "./pools-schemas.js";
import { poolGrantView, poolSummaryView, poolView } from "./pools-views.js";
import { OrgParams, ProjectParams } from "./schemas.js";
import type { MachinesService } from "./service.js";

/** Machine pools (org.manage) and project machine pool grants (project.access_manage). */
export function poolRoutes(app: HttpApp, deps: { machines: MachinesService }) {
  const { machines } = deps;
  const TAG = s.POOLS_TAG;
  const poolPath = (params: { orgID: string; poolID: string }): [string, string] => [pathId("org", params.orgID), pathId("machinePool", params.poolID)];

  app.get(
    "/orgs/:orgID/machine-pools",
    {
      schema: {
        tags: [TAG],
        operationId: "listMachinePools",
        summary: "List machine pools",
        description: "The organization's machine pools with their usage. Newest first by default; `name` filters and sorts by name.",
        params: OrgParams,
        querystring: s.ListPoolsQuery,
        response: { 200: Page(s.MachinePool), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const { rows, usage } = await machines.listPools(request.principal!, pathId("org", request.params.orgID), { name: request.query.name, page });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (p) => ({ value: sortValue(page.sort, p), id: p.id }),
        (p) => poolView(p, usage.get(p.id) ?? { machines: 0, cpu: 0, memoryMb: 0 }),
      );
    },
  );

  app.post(
    "/orgs/:orgID/machine-pools",
    {
      schema: {
        tags: [TAG],
        operationId: "createMachinePool",
        summary: "Create a machine pool",
        description:
          "Creates a pool whose machines a provider creates on demand. svc runs the `local` provider. max_total_machines is " +
          "required; limits must be consistent (a default within its minimum and maximum, a per-machine maximum within the total). " +
          "Names are unique in the organization (409).",
        params: OrgParams,
        body: s.CreateMachinePoolRequest,
        response: { 201: s.MachinePool, ...errorResponses(409) },
      },
    },
    async (request, reply) => reply.status(201).send(poolView(await machines.createPool(request.principal!, pathId("org", request.params.orgID), request.body))),
  );

  app.get(
    "/orgs/:orgID/machine-pools/:poolID",
    { schema: { tags: [TAG], operationId: "getMachinePool", summary: "Get a machine pool", description: "One machine pool of the organization with its usage.", params: s.PoolParams, response: { 200: s.MachinePool, ...errorResponses() } } },
    async (request) => poolView(await machines.getPool(request.principal!, ...poolPath(request.params))),
  );

  app.put(
    "/orgs/:orgID/machine-pools/:poolID",
    {
      schema: {
        tags: [TAG],
        operationId: "updateMachinePool",
        summary: "Update a machine pool",
        description:
          "Changes the fields given; omitted fields keep their values and null clears a limit or default. The provider cannot " +
          "change. The result is checked as a whole.",
        params: s.PoolParams,
        body: s.UpdateMachinePoolRequest,
        response: { 200: s.MachinePool, ...errorResponses(409) },
      },
    },
    async (request) => poolView(await machines.updatePool(request.principal!, ...poolPath(request.params), request.body)),
  );

  app.delete(
    "/orgs/:orgID/machine-pools/:poolID",
    {
      schema: {
        tags: [TAG],
        operationId: "deleteMachinePool",
        summary: "Delete a machine pool",
        description: "Deletes the pool, its project grants and the machine grants they generated, and its machines.",
        params: s.PoolParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await machines.deletePool(request.principal!, ...poolPath(request.params));
      return reply.status(204).send(null);
    },
  );

  const grants = "/orgs/:orgID/projects/:projectID/machine-pool-grants";
  const grantPath = (params: { orgID: string; projectID: string; poolGrantID: string }): [string, string, string] => [
    ...projectPath(params),
    pathId("machinePoolGrant", params.poolGrantID),
  ];

  app.get(
    grants,
    {
      schema: {
        tags: [TAG],
        operationId: "listProjectMachinePoolGrants",
        summary: "List a project's pool grants",
        description: "The project's pool grants with their pools; `name` filters and sorts by the pool's name. Newest first by default.",
        params: ProjectParams,
        querystring: s.ListPoolGrantsQuery,
        response: { 200: Page(s.PoolGrantListItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await machines.listPoolGrants(request.principal!, ...projectPath(request.params), { name: request.query.name, page });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => ({ value: sortValue(page.sort, { name: r.pool.name, createdAt: r.grant.createdAt }), id: r.grant.id }),
        (r) => ({ grant: poolGrantView(r.grant), machine_pool: poolSummaryView(r.pool) }),
      );
    },
  );

  app.post(
    grants,
    {
      schema: {
        tags: [TAG],
        operationId: "createProjectMachinePoolGrant",
        summary: "Grant a machine pool to a project",
        description:
          "Lets the project's agents create machines from a pool, optionally with narrower limits (never wider than the pool's), " +
          "its own defaults and environment overlays (null removes an inherited name). One grant per project and pool (409).",
        params: ProjectParams,
        body: s.CreatePoolGrantRequest,
        response: { 201: s.PoolGrant, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { machine_pool_id, ...overrides } = request.body;
      const grant = await machines.createPoolGrant(request.principal!, ...projectPath(request.params), { ...overrides, poolId: pathId("machinePool", machine_pool_id) });
      return reply.status(201).send(poolGrantView(grant));
    },
  );

  app.get(
    `${grants}/:poolGrantID`,
    { schema: { tags: [TAG], operationId: "getProjectMachinePoolGrant", summary: "Get a project's pool grant", description: "One pool grant of the project with its pool.", params: s.PoolGrantParams, response: { 200: s.PoolGrant, ...errorResponses() } } },
    async (request) => poolGrantView(await machines.getPoolGrant(request.principal!, ...grantPath(request.params))),
  );

  app.patch(
    `${grants}/:poolGrantID`,
    {
      schema: {
        tags: [TAG],
        operationId: "updateProjectMachinePoolGrant",
        summary: "Update a project's pool grant",
        description:
          "Changes the grant's overrides and limits. Omitted fields keep their values; null clears an override so the grant " +
          "follows the pool again. Overlays and metadata are replaced whole. Existing machines keep their configuration.",
        params: s.PoolGrantParams,
        body: s.UpdatePoolGrantRequest,
        response: { 200: s.PoolGrant, ...errorResponses() },
      },
    },
    async (request) => poolGrantView(await machines.updatePoolGrant(request.principal!, ...grantPath(request.params), request.body)),
  );

  app.delete(
    `${grants}/:poolGrantID`,
    {
      schema: {
        tags: [TAG],
        operationId: "deleteProjectMachinePoolGrant",
        summary: "Revoke a project's pool grant",
        description: "Removes the project's access to the pool and the machine grants generated through it; the pool stays.",
        params: s.PoolGrantParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await machines.deletePoolGrant(request.principal!, ...grantPath(request.params));
      return reply.status(204).send(null);
    },
  );
}
