import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, IdempotencyKeyHeader, Page } from "../../platform/http/schemas.js";
import { grantRoutes } from "./grants-routes.js";
import { poolRoutes } from "./pools-routes.js";
import * as s from "./schemas.js";
import type { MachinesService } from "./service.js";
import type { MachineRow } from "./store.js";
import { tokenRoutes } from "./tokens-routes.js";
import { grantView, machineView, tokenView, visibleMachineView } from "./views.js";

/** Every machines route: machines and their daemon tokens, project machine grants, pools and pool grants. */
export function machineRoutes(app: HttpApp, deps: { machines: MachinesService }) {
  byoMachineRoutes(app, deps);
  tokenRoutes(app, deps);
  grantRoutes(app, deps);
  poolRoutes(app, deps);
}

const machinePosition = (sort: ReturnType<typeof pageOf>["sort"]) => (m: MachineRow) => ({
  value: sortValue(sort, { name: m.displayName, createdAt: m.createdAt, updatedAt: m.updatedAt }),
  id: m.id,
});

function byoMachineRoutes(app: HttpApp, deps: { machines: MachinesService }) {
  const { machines } = deps;

  app.get(
    "/orgs/:orgID/machines",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listVisibleMachines",
        summary: "List machines",
        description:
          "The organization's live machines the caller sees: every one for org owners and admins, else those granted to a " +
          "project the caller can read. Each says why (`access.sources`). Newest first by default; `name` filters and sorts by display_name.",
        params: s.OrgParams,
        querystring: s.ListMachinesQuery,
        response: { 200: Page(s.VisibleMachine), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const { rows, canManage, sources } = await machines.listMachines(request.principal!, pathId("org", request.params.orgID), {
        filters: { name: request.query.name, sourceKind: request.query.source_kind },
        page,
      });
      return toPage(rows, page.limit, page.sort, machinePosition(page.sort), (m) =>
        visibleMachineView(m, { canManage, viaOrgRole: canManage }, sources.filter((g) => g.machineId === m.id)),
      );
    },
  );

  app.post(
    "/orgs/:orgID/machines",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createMachine",
        summary: "Create a machine",
        description:
          "Creates a BYO machine record without a token (org.manage); mint one with the daemon-tokens route. display_name is " +
          "unique among the org's live BYO machines (409). A repeated Idempotency-Key returns the first machine with 200.",
        params: s.OrgParams,
        headers: IdempotencyKeyHeader,
        body: s.CreateMachineRequest,
        response: { 200: s.Machine, 201: s.Machine, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const orgId = pathId("org", request.params.orgID);
      const { created, machine } = await machines.createMachine(request.principal!, orgId, request.body, request.headers["idempotency-key"]);
      return reply.status(created ? 201 : 200).send(machineView(machine));
    },
  );

  app.post(
    "/orgs/:orgID/machines/connect",
    {
      schema: {
        tags: [s.TAG],
        operationId: "connectBYOMachine",
        summary: "Connect your own machine",
        description:
          "Creates a BYO machine, its first daemon token (shown once; `token_name` defaults to daemon) and grants to the " +
          "given projects, in one step. Needs org.manage and project.access_manage on each project.",
        params: s.OrgParams,
        body: s.ConnectMachineRequest,
        response: { 201: s.ConnectMachineResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { project_ids, token_name, ...machine } = request.body;
      const result = await machines.connectMachine(request.principal!, pathId("org", request.params.orgID), {
        ...machine,
        projectIds: (project_ids ?? []).map((id) => pathId("project", id)),
        tokenName: token_name,
      });
      return reply.status(201).send({
        machine: machineView(result.machine),
        token: result.token,
        token_record: tokenView(result.tokenRecord),
        project_grants: result.projectGrants.map(grantView),
      });
    },
  );

  app.get(
    "/orgs/:orgID/machines/:machineID",
    { schema: { tags: [s.TAG], operationId: "getMachine", summary: "Get a machine", description: "One machine the caller can see, with its connection state and the caller's access.", params: s.MachineParams, response: { 200: s.Machine, ...errorResponses() } } },
    async (request) => machineView(await machines.getMachine(request.principal!, ...machinePath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/machines/:machineID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateMachine",
        summary: "Update a machine's execution defaults",
        description: "Replaces the execution defaults given (cwd, env, secret_env); they apply to processes started afterwards. Names cannot change.",
        params: s.MachineParams,
        body: s.UpdateMachineRequest,
        response: { 200: s.Machine, ...errorResponses(409) },
      },
    },
    async (request) => machineView(await machines.updateMachine(request.principal!, ...machinePath(request.params), request.body)),
  );

  app.delete(
    "/orgs/:orgID/machines/:machineID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteMachine",
        summary: "Delete a machine",
        description:
          "Deletes a BYO machine: its daemon tokens are revoked, its project grants removed, its name freed, and a connected " +
          "daemon is told to stop. Pool machines belong to their pool (409).",
        params: s.MachineParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await machines.deleteMachine(request.principal!, ...machinePath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/machines",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listVisibleProjectMachines",
        summary: "List a project's machines",
        description: "The live machines the project's agents may use (project.read), explicitly or through a pool grant. Newest first by default.",
        params: s.ProjectParams,
        querystring: s.ListMachinesQuery,
        response: { 200: Page(s.VisibleMachine), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const { rows, canManage } = await machines.listProjectMachines(request.principal!, ...projectPath(request.params), {
        filters: { name: request.query.name, sourceKind: request.query.source_kind },
        page,
      });
      const position = machinePosition(page.sort);
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => position(r.machine),
        (r) => visibleMachineView(r.machine, { canManage, viaOrgRole: false }, [r.grant]),
      );
    },
  );
}

export function machinePath(params: { orgID: string; machineID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("machine", params.machineID)];
}
