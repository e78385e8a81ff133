import type { FastifyBaseLogger } from "fastify";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Database } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { decodeId } from "../../platform/ids.js";
import { turnIsSettled } from "../../runtime/claim.js";
import { readTurnProgress } from "../../runtime/store/claim.js";
import { API_VERSION } from "../../platform/http/app.js";
import type { AgentProfileService } from "../agent-profiles/service.js";
import { profileToolNames } from "./tool-names.js";
import { registerProfileTools, registerSvcTools, type ToolServices } from "./tools.js";

/**
 * How many opted-in profiles of a project the endpoint offers, by name: tools/list is not paged here,
 * and clients put every tool's description before their model, so a long list costs on every call.
 */
export const MAX_PROFILE_TOOLS = 100;

export interface McpEndpointDeps extends Omit<ToolServices, "turnSettled"> {
  db: Database;
  profiles: Pick<AgentProfileService, "listMcpToolProfiles">;
}

/**
 * svc as an MCP server (issue 31, item 4; docs/mcp.md). Each HTTP request gets its own MCP server,
 * built for the caller and the project: the transport runs stateless (no `Mcp-Session-Id`), because
 * nothing that matters may live in one svc process (any `svc api` behind a balancer must be able to
 * answer any request) and svc never sends a client requests of its own (sampling, elicitation) that
 * would need a session to come back on. The tools are read afresh per request, so switching a
 * profile's `mcp_tool` shows in the next tools/list.
 */
export function createMcpEndpointService(deps: McpEndpointDeps) {
  const shutdown = new AbortController();
  const services: ToolServices = { ...deps, turnSettled };

  /** The engine's own answer (the claim's rule), read in one short transaction: the turn can take no more model work. */
  async function turnSettled(agentId: string, turnId: string): Promise<boolean> {
    const progress = await deps.db.tx((tx) => readTurnProgress(tx, agentId));
    return progress.turnId !== decodeId("turn", turnId) || turnIsSettled(progress);
  }

  return {
    /**
     * The MCP server for one request, with the caller's access checked first (agent.read on the project:
     * another org's token is a 404, as on every route), so a refusal is an HTTP error before any MCP.
     */
    async open(principal: Principal, orgId: string, projectId: string, log: FastifyBaseLogger): Promise<McpServer> {
      const profiles = await deps.profiles.listMcpToolProfiles(principal, orgId, projectId, MAX_PROFILE_TOOLS);
      const server = new McpServer(
        { name: "svc", title: "svc agents", version: API_VERSION },
        {
          instructions:
            "Tools of this server run svc agents. A tool named after an agent profile launches a new agent with your message " +
            "and answers its reply; the svc_ tools follow up on agents (send input, read state and events, answer approvals).",
        },
      );
      const ctx = { principal, orgId, projectId, shutdown: shutdown.signal, log };
      registerSvcTools(server, services, ctx);
      registerProfileTools(server, services, ctx, profileToolNames(profiles));
      // Stateless: there is no session a list-changed notification could reach, so none is promised.
      server.server.registerCapabilities({ tools: { listChanged: false } });
      return server;
    },

    /** Server shutdown: every wait under way ends now and answers the agent's state. */
    close(): void {
      shutdown.abort();
    },
  };
}

export type McpEndpointService = ReturnType<typeof createMcpEndpointService>;
