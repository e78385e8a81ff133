import "@fastify/websocket";
import { BootstrapDaemonResponse, DaemonRuntime, RegisterDaemonRuntimeRequest, RegisterDaemonRuntimeResponse } from "@svc/protocol";
import type { HttpApp } from "../../platform/http/app.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, iso, isoOrNull } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import { RuntimeParams, TAG } from "./schemas.js";
import { HEARTBEAT_MS, type DaemonService } from "./service.js";
import { DaemonSession, type DaemonHub } from "./socket.js";
import type { RuntimeRow } from "./store.js";

/**
 * The machine daemon routes (reference operations 4, 137 to 140). They take a daemon token and nothing
 * else (`auth: "daemon"`), and act as the token's machine: a runtime of another machine is not found.
 */
export function daemonRoutes(app: HttpApp, deps: { daemon: DaemonService; hub: DaemonHub }) {
  const { daemon, hub } = deps;
  const config = { auth: "daemon" as const };
  const caller = (request: { daemon: DaemonPrincipal | null }) => request.daemon!;

  app.post(
    "/daemon/bootstrap",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "bootstrapDaemon",
        summary: "Identify a daemon token",
        description: "Who the daemon token is: its machine, and an installation id (one per token). svcd calls it first; a refused token stops it.",
        response: { 200: BootstrapDaemonResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const d = caller(request);
      return { installation_id: encodeId("installation", d.tokenId), machine_id: encodeId("machine", d.machineId) };
    },
  );

  app.post(
    "/daemon/runtimes",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "registerMachineDaemonRuntime",
        summary: "Register a daemon runtime",
        description:
          "Registers a daemon runtime with a two-minute lease and answers each process claim with a directive. A new " +
          "daemon_instance_id ends the machine's previous runtime (replaced); a replaced instance registering again is 410 gone.",
        body: RegisterDaemonRuntimeRequest,
        response: { 201: RegisterDaemonRuntimeResponse, ...errorResponses(409, 410) },
      },
    },
    async (request, reply) => {
      const { runtime, directives } = await daemon.register(caller(request), request.body);
      return reply.status(201).send({ runtime: runtimeView(runtime), reconciliation: { processes: directives } });
    },
  );

  app.post(
    "/daemon/runtimes/:runtimeID/end",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "endMachineDaemonRuntime",
        summary: "End a daemon runtime",
        description: "Ends the runtime (svcd on SIGTERM); the machine is offline at once. Ending an ended runtime returns it.",
        params: RuntimeParams,
        response: { 200: DaemonRuntime, ...errorResponses(409, 410) },
      },
    },
    async (request) => {
      const runtimeId = pathId("daemonRuntime", request.params.runtimeID);
      return runtimeView(await daemon.end(caller(request), runtimeId, { code: "daemon_ended", message: "the daemon ended its runtime" }));
    },
  );

  app.post(
    "/daemon/runtimes/:runtimeID/sleep",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "sleepMachineDaemonRuntime",
        summary: "Put a daemon runtime to sleep",
        description:
          "Ends the runtime and marks the machine asleep, for pool machines svc can wake (their token is revoked; waking " +
          "starts the daemon again with a new one). 409 pending_work while process work is queued or running; 409 " +
          "not_wake_capable for connected (BYO) machines, which svc cannot wake.",
        params: RuntimeParams,
        response: { 200: DaemonRuntime, ...errorResponses(409, 410) },
      },
    },
    async (request) => runtimeView(await daemon.sleep(caller(request), pathId("daemonRuntime", request.params.runtimeID))),
  );

  app.get(
    "/daemon/runtimes/:runtimeID/socket",
    {
      config,
      websocket: true,
      schema: {
        tags: [TAG],
        operationId: "socketMachineDaemonRuntime",
        summary: "Open a daemon runtime's socket",
        description:
          "The runtime's WebSocket (101 on upgrade): JSON {type, payload} frames of at most 1 MiB. See docs/architecture.md, " +
          "The daemon protocol. An ended runtime is 410 gone before the upgrade.",
        params: RuntimeParams,
        response: errorResponses(409, 410),
      },
      // Checked before the upgrade, so a refusal is an HTTP answer in the error envelope.
      preHandler: async (request) => {
        await daemon.activeRuntime(caller(request), pathId("daemonRuntime", request.params.runtimeID));
      },
    },
    (socket, request) => {
      const session = new DaemonSession(socket, caller(request), pathId("daemonRuntime", request.params.runtimeID), daemon, hub, request.log);
      session.start().catch((err: unknown) => {
        request.log.warn({ err }, "daemon socket could not start");
        session.close(1011, "svc could not follow this runtime");
      });
    },
  );
}

function runtimeView(runtime: RuntimeRow) {
  return {
    id: encodeId("daemonRuntime", runtime.id),
    org_id: encodeId("org", runtime.orgId),
    machine_id: encodeId("machine", runtime.machineId),
    daemon_instance_id: runtime.daemonInstanceId,
    daemon_version: runtime.daemonVersion,
    state: runtime.state as "active" | "ended",
    state_reason_code: runtime.stateReasonCode,
    state_reason_message: runtime.stateReasonMessage,
    created_at: iso(runtime.createdAt),
    last_seen_at: iso(runtime.lastSeenAt),
    lease_expires_at: iso(runtime.leaseExpiresAt),
    next_heartbeat_after_ms: HEARTBEAT_MS,
    ended_at: isoOrNull(runtime.endedAt),
    capacity: runtime.capacity,
  };
}
