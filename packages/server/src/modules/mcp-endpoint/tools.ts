import type { FastifyBaseLogger } from "fastify";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import * as z from "zod";
import { AppError } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { encodeId } from "../../platform/ids.js";
import type { AgentsService } from "../agents/service.js";
import { agentView } from "../agents/views.js";
import type { ProfileRow } from "../agent-profiles/service.js";
import type { InputsService } from "../inputs/service.js";
import type { InteractionsService } from "../interactions/service.js";
import { interactionView } from "../interactions/views.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { awaitTurn, type TimelineReads, type TurnOutcome, type TurnSettled } from "./turn-wait.js";

/*
 * The MCP endpoint's tools (docs/mcp.md, "Tools"). Each is an edge like a route: it decodes ids, calls one
 * of svc's services with the caller's own principal and maps the answer to the API's views. What a
 * service refuses (an AppError: 403, 404, 409…) is a tool error carrying its message, never an HTTP error.
 */

/** The services the tools call, each narrowed to what they use. */
export interface ToolServices {
  agents: Pick<AgentsService, "launch" | "get" | "list">;
  inputs: Pick<InputsService, "sendInput">;
  interactions: Pick<InteractionsService, "resolve">;
  timeline: TimelineReads;
  signals: AgentSignals;
  turnSettled: TurnSettled;
}

/** One request's context: who calls, in which project, and what ends its waits. */
export interface ToolContext {
  principal: Principal;
  orgId: string;
  projectId: string;
  /** Aborted when svc shuts down: waits end at once and answer the agent's state. */
  shutdown: AbortSignal;
  log: FastifyBaseLogger;
}

export const DEFAULT_WAIT_SECONDS = 60;
export const MAX_WAIT_SECONDS = 600;
const AGENTS_PAGE = 50;
const EVENTS_PAGE = { default: 100, max: 500 } as const;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const AgentIdArg = z.string().describe("An agent id (agt_…).");
const WaitArg = z
  .number()
  .int()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe(`Seconds to wait for the agent's answer (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}); 0 answers at once.`);
const MessageArg = z.string().min(1).describe("The message for the agent.");

const TURN_NOTE =
  `Waits up to wait_seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}) for the agent's final answer of the turn. ` +
  "If the agent is not done by then, or a person must answer one of its questions or approvals, it answers {agent_id, state} " +
  "instead (and the open interactions): follow up with svc_get_agent, svc_read_events, svc_resolve_interaction and svc_send_input.";

/** svc's own tools, offered in every project. */
export function registerSvcTools(server: McpServer, services: ToolServices, ctx: ToolContext): void {
  const { principal, orgId, projectId } = ctx;
  const agentOf = (id: string) => pathId("agent", id);

  server.registerTool(
    "svc_send_input",
    {
      title: "Send an agent a message",
      description: `Sends a message to one of the project's agents (queued behind its current turn, if any). ${TURN_NOTE}`,
      inputSchema: { agent_id: AgentIdArg, message: MessageArg, wait_seconds: WaitArg },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args, extra) =>
      answering(ctx, async () => {
        const agentId = agentOf(args.agent_id);
        const after = await latestSequence(services.timeline, ctx, agentId);
        const { input } = await services.inputs.sendInput(principal, orgId, projectId, agentId, { content_blocks: [{ type: "text", text: args.message }] }, undefined);
        return turnResult(services, ctx, extra, { agentId, inputId: input.id, after, waitSeconds: args.wait_seconds });
      }),
  );

  server.registerTool(
    "svc_get_agent",
    {
      title: "Get an agent",
      description:
        "One agent of the project and its present: status (idle, working, waiting or archived), open interactions (questions and " +
        "approvals to answer with svc_resolve_interaction), pending tool calls, backlog count and the sequence of its newest event.",
      inputSchema: { agent_id: AgentIdArg },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answering(ctx, async () => {
        const agentId = agentOf(args.agent_id);
        const agent = await services.agents.get(principal, orgId, projectId, agentId);
        const snapshot = await services.timeline.snapshot(principal, orgId, projectId, agentId);
        return json({ agent: agentView(agent), ...snapshot });
      }),
  );

  server.registerTool(
    "svc_list_agents",
    {
      title: "List agents",
      description: `The project's active agents, newest first, ${AGENTS_PAGE} a page; pass next_cursor as cursor for the next page.`,
      inputSchema: { cursor: z.string().min(1).max(1024).optional().describe("next_cursor of the previous page.") },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answering(ctx, async () => {
        const page = pageOf({ limit: AGENTS_PAGE, cursor: args.cursor });
        const rows = await services.agents.list(principal, orgId, projectId, { page });
        return json(toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r.agent), id: r.agent.id }), agentView));
      }),
  );

  server.registerTool(
    "svc_read_events",
    {
      title: "Read an agent's events",
      description:
        "A page of the agent's timeline (inputs, model outputs, tool results), oldest first, after the sequence `after` (0: from " +
        `the beginning). Pass next_after_sequence as after while has_more is true. limit: default ${EVENTS_PAGE.default}, at most ${EVENTS_PAGE.max}.`,
      inputSchema: {
        agent_id: AgentIdArg,
        after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe("Events after this sequence (default 0)."),
        limit: z.number().int().min(1).max(EVENTS_PAGE.max).optional().describe(`At most this many events (default ${EVENTS_PAGE.default}).`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answering(ctx, async () =>
        json(await services.timeline.listEvents(principal, orgId, projectId, agentOf(args.agent_id), { after: args.after ?? 0, limit: args.limit ?? EVENTS_PAGE.default })),
      ),
  );

  server.registerTool(
    "svc_resolve_interaction",
    {
      title: "Answer an agent's question or approval",
      description:
        "Answers an open interaction of an agent (svc_get_agent lists them), one answer per question. For an approval " +
        "(interaction_kind permission) option 0 allows the tool call and option 1 denies it, with optional text as the reason. " +
        "The first answer wins; the same answers again are accepted, different ones refused.",
      inputSchema: {
        agent_id: AgentIdArg,
        interaction_id: z.string().describe("An interaction id (int_…)."),
        answers: z
          .array(
            z.object({
              option_indices: z.array(z.number().int().min(0)).min(1).describe("The chosen options' indices (one unless the question allows several)."),
              text: z.string().max(65536).optional().describe("Free text, where the chosen option allows it; a denial's reason."),
            }),
          )
          .min(1)
          .describe("One answer per question, in order."),
        actor: z
          .object({
            provider_user_id: z.string().min(1).max(128),
            provider_tenant_id: z.string().min(1).max(128).optional(),
            display_name: z.string().max(256).optional(),
          })
          .optional()
          .describe("Org API keys only: the external person answering."),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      answering(ctx, async () => {
        const { agent, interaction } = await services.interactions.resolve(
          principal,
          orgId,
          projectId,
          agentOf(args.agent_id),
          pathId("interaction", args.interaction_id),
          { answers: args.answers.map((a) => ({ option_indices: a.option_indices, ...(a.text !== undefined ? { text: a.text } : {}) })), ...(args.actor ? { actor: args.actor } : {}) },
        );
        return json(interactionView(agent, interaction));
      }),
  );
}

/** One tool per profile that opted in (`mcp_tool`), named by `profileToolNames`. */
export function registerProfileTools(server: McpServer, services: ToolServices, ctx: ToolContext, profiles: Map<string, ProfileRow>): void {
  for (const [name, profile] of profiles) {
    const lead = profile.description.trim() || `Runs an agent of the svc agent profile "${profile.name}" with your message and answers its reply.`;
    server.registerTool(
      name,
      {
        title: profile.name,
        description: `${lead}\n\nEach call launches a new agent. ${TURN_NOTE}`,
        inputSchema: { message: MessageArg, wait_seconds: WaitArg },
        annotations: { title: profile.name, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      (args, extra) =>
        answering(ctx, async () => {
          const launched = await services.agents.launch(ctx.principal, ctx.orgId, ctx.projectId, { profile: profile.id, message: args.message }, undefined);
          if (!launched.created || !launched.input) throw new AppError("internal_error", "the launch recorded no opening message");
          return turnResult(services, ctx, extra, { agentId: launched.agent.agent.id, inputId: launched.input.id, after: 0, waitSeconds: args.wait_seconds });
        }),
    );
  }
}

/** Waits for the input's turn (bounded) and answers its final output, or the agent's id and state. */
async function turnResult(
  services: ToolServices,
  ctx: ToolContext,
  extra: Extra,
  turn: { agentId: string; inputId: string; after: number; waitSeconds: number | undefined },
): Promise<CallToolResult> {
  const agentId = encodeId("agent", turn.agentId);
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  const outcome: TurnOutcome = await awaitTurn(services, {
    principal: ctx.principal,
    orgId: ctx.orgId,
    projectId: ctx.projectId,
    agentId: turn.agentId,
    inputId: encodeId("agentInput", turn.inputId),
    after: turn.after,
    waitMs: (turn.waitSeconds ?? DEFAULT_WAIT_SECONDS) * 1000,
    signal: AbortSignal.any([extra.signal, ctx.shutdown]),
    // Progress notifications keep a client that resets its timeout on progress waiting (MCP, "Progress").
    onProgress:
      progressToken === undefined
        ? undefined
        : (state) => {
            progress += 1;
            extra
              .sendNotification({ method: "notifications/progress", params: { progressToken, progress, message: `agent ${agentId} is ${state}` } })
              .catch(() => {});
          },
  });
  if (outcome.kind === "answered") {
    const facts = { agent_id: agentId, state: outcome.state, stop_reason: outcome.stopReason, output: outcome.output };
    return {
      content: [
        { type: "text", text: outcome.output },
        { type: "text", text: `(svc agent ${agentId}, now ${outcome.state}; continue the conversation with svc_send_input.)` },
      ],
      structuredContent: facts,
    };
  }
  if (outcome.kind === "failed") {
    return { content: [{ type: "text", text: `${outcome.message} (svc agent ${agentId}, now ${outcome.state})` }], structuredContent: { agent_id: agentId, state: outcome.state }, isError: true };
  }
  const pending = { agent_id: agentId, state: outcome.state, ...(outcome.interactions.length > 0 ? { interactions: outcome.interactions } : {}) };
  return json(pending);
}

/** The newest sequence of the agent's timeline (0 before the first event): its next input's event comes after it. */
async function latestSequence(timeline: TimelineReads, ctx: ToolContext, agentId: string): Promise<number> {
  const page = await timeline.listEvents(ctx.principal, ctx.orgId, ctx.projectId, agentId, { before: 0, limit: 1 });
  return page.data.at(-1)?.sequence ?? 0;
}

function json(value: object): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

/**
 * Runs a tool: svc's refusals (AppError) become tool errors with their message and code; anything else is
 * logged and answered as an opaque internal error, as the HTTP edge answers a 500 (never with its detail).
 */
async function answering(ctx: ToolContext, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return toolError(describeRefusal(err));
    if (err instanceof AppError && err.code !== "internal_error") return toolError(`${err.message} (${err.code}); try again later`);
    ctx.log.error({ err }, "MCP tool failed");
    return toolError("internal error (internal_error)");
  }
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** A refusal as a client should read it; a 403 says what the caller's token lacks. */
function describeRefusal(err: AppError): string {
  if (err.code === "forbidden") {
    return `forbidden: ${err.message}. Your token's role in this project lets it list and read agents but not launch them, send them input or answer their interactions (that takes the operator role or above).`;
  }
  return `${err.code}: ${err.message}`;
}
