import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import type { MachinesService } from "./service.js";
import { machinePath } from "./routes.js";
import * as s from "./schemas.js";
import { tokenView } from "./views.js";

/** Daemon tokens of a BYO machine (org.manage). A token is valid only on the machine daemon routes. */
export function tokenRoutes(app: HttpApp, deps: { machines: MachinesService }) {
  const { machines } = deps;

  app.get(
    "/orgs/:orgID/machines/:machineID/daemon-tokens",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listBYOMachineDaemonTokens",
        summary: "List a machine's daemon tokens",
        description: "Every daemon token of the machine, revoked ones included, by created_at descending, then id descending.",
        params: s.MachineParams,
        querystring: s.ListTokensQuery,
        response: { 200: Page(s.DaemonToken), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await machines.listTokens(request.principal!, ...machinePath(request.params), page);
      return toPage(rows, page.limit, page.sort, (t) => ({ value: t.createdAt, id: t.id }), tokenView);
    },
  );

  app.post(
    "/orgs/:orgID/machines/:machineID/daemon-tokens",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createBYOMachineDaemonToken",
        summary: "Create a daemon token",
        description:
          "Mints a daemon token (`svc_daemon_v1_…`, shown once; only its hash is kept). `name` defaults to daemon. At most 20 " +
          "active tokens per machine (409).",
        params: s.MachineParams,
        body: Type.Optional(s.CreateDaemonTokenRequest),
        response: { 201: s.CreateDaemonTokenResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { token, record } = await machines.createToken(request.principal!, ...machinePath(request.params), request.body);
      return reply.status(201).send({ token, token_record: tokenView(record) });
    },
  );

  app.post(
    "/orgs/:orgID/machines/:machineID/daemon-tokens/:tokenID/revoke",
    {
      schema: {
        tags: [s.TAG],
        operationId: "revokeMachineDaemonToken",
        summary: "Revoke a daemon token",
        description: "Revokes the token for good; a daemon using it is disconnected. Revoking a revoked token returns it unchanged.",
        params: s.TokenParams,
        response: { 200: s.DaemonToken, ...errorResponses() },
      },
    },
    async (request) => {
      const token = await machines.revokeToken(request.principal!, ...machinePath(request.params), pathId("daemonToken", request.params.tokenID));
      return tokenView(token);
    },
  );
}
