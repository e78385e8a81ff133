import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { actors, agentConfigs, agentInputs, agents, contextCheckpoints, modelCallContexts, modelOutputs, toolCalls } from "../../src/db/schema/index.js";
import type { AgentDefinition } from "../../src/runtime/definition.js";
import type { Database, Tx } from "../../src/platform/db/index.js";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import { appendEvent, lockAgent, openTurn, type AgentRow } from "../../src/runtime/store/journal.js";
import { completeToolCall, setToolCallState, type ToolCallState, type ToolOutcome } from "../../src/runtime/store/tool-calls.js";
import type { TestServer } from "../support/server.js";

/** The token counts and cost every fixture model call records; its event shows them as `usage`. */
export const OUTPUT_USAGE = { inputTokens: 120, outputTokens: 30, cacheReadTokens: 20, cacheWriteTokens: 5, reasoningTokens: 10, costMicroUsd: 777 };

/*
 * Timelines written the way the runtime writes them. Agents are launched through the API elsewhere;
 * here the config and agent rows are inserted directly with Drizzle, so these tests depend only on the
 * timeline's own write path: every change locks the agent, writes its payload rows and appends its
 * event with journal.ts in one transaction, whose statements send the hints that announce it on commit.
 */

export interface TestAgent {
  id: string;
  orgId: string;
  projectId: string;
  publicId: string;
  /** `/api/v1/orgs/{org}/projects/{project}/agents/{agent}` */
  path: string;
}

const uuidOf = (kind: "org" | "project", publicId: string) => {
  const uuid = decodeId(kind, publicId);
  if (!uuid) throw new Error(`not a ${kind} id: ${publicId}`);
  return uuid;
};

export async function createTestAgent(server: TestServer, org: { id: string }, project: { id: string }): Promise<TestAgent> {
  const orgId = uuidOf("org", org.id);
  const projectId = uuidOf("project", project.id);
  const unique = randomBytes(8).toString("hex");
  const id = newUuid();
  await server.db.tx(async (tx) => {
    const [config] = await tx
      .insert(agentConfigs)
      .values({
        id: newUuid(),
        orgId,
        projectId,
        source: "version: v1",
        sourceFormat: "yaml",
        sourceHash: unique,
        compilerVersion: "test",
        // Stored only: the timeline never reads the definition.
        compiledDefinition: {} as AgentDefinition,
        effectiveDefinitionHash: unique,
        instructionHash: unique,
        configuredModelId: newUuid(),
        configuredModelRevisionId: newUuid(),
      })
      .returning();
    await tx.insert(agents).values({ id, orgId, projectId, currentConfigId: config!.id });
  });
  const publicId = encodeId("agent", id);
  return { id, orgId, projectId, publicId, path: `/api/v1/orgs/${org.id}/projects/${project.id}/agents/${publicId}` };
}

export const text = (value: string) => ({ type: "text", text: value });

export interface ToolCallSpec {
  name: string;
  input?: Record<string, unknown>;
  type?: "built_in" | "custom" | "mcp";
  state?: ToolCallState;
}

export interface WrittenEvent {
  sequence: number;
  eventId: string;
  turnId: string;
}

/** Writes one agent's timeline through journal.ts, one transaction per call, as the runtime does. */
export class TimelineWriter {
  /** `db` may be another process's handle: a write's hints go out in its own statements, on commit. */
  constructor(
    server: TestServer,
    readonly agent: TestAgent,
    private readonly db: Database = server.db,
  ) {}

  private locked<T>(work: (tx: Tx, agent: AgentRow) => Promise<T>): Promise<T> {
    return this.db.tx(async (tx) => {
      const agent = await lockAgent(tx, this.agent.id);
      if (!agent) throw new Error("the test agent is gone");
      return work(tx, agent);
    });
  }

  /** An actor of the agent's project, for attributed inputs. */
  async actor(): Promise<string> {
    const id = newUuid();
    await this.db.read
      .insert(actors)
      .values({ id, orgId: this.agent.orgId, projectId: this.agent.projectId, provider: "external", providerUserId: `user-${id}` });
    return id;
  }

  /**
   * An agent input: a content input opens a new turn unless `turnId` names the turn it joins; other
   * kinds (control, interaction_response, config_change) join `turnId`.
   */
  async input(
    options: {
      turnId?: string;
      kind?: "content" | "control" | "interaction_response" | "config_change";
      blocks?: unknown[];
      actorId?: string;
      key?: string;
      controlType?: "cancel_current";
      agentConfigId?: string;
      semantic?: boolean;
    } = {},
  ): Promise<WrittenEvent & { inputId: string }> {
    return this.locked(async (tx, agent) => {
      const kind = options.kind ?? "content";
      const opening = options.turnId === undefined;
      const turnId = options.turnId ?? (await openTurn(tx, agent.id)).id;
      const inputId = newUuid();
      await tx.insert(agentInputs).values({
        id: inputId,
        orgId: agent.orgId,
        agentId: agent.id,
        state: "resolved",
        inputKind: kind,
        deliveryMode: kind === "content" ? "queued" : "immediate",
        actorId: options.actorId ?? null,
        controlType: options.controlType ?? null,
        agentConfigId: options.agentConfigId ?? null,
        idempotencyScope: kind,
        inputIdempotencyKey: options.key ?? `key-${inputId}`,
        requestDigest: "test",
        contentBlocks: options.blocks ?? [],
      });
      const event = await appendEvent(tx, agent, {
        turnId,
        kind: "agent_input",
        agentInputId: inputId,
        opening,
        semantic: options.semantic ?? true,
      });
      await tx.update(agentInputs).set({ admittedEventId: event.id }).where(eq(agentInputs.id, inputId));
      return { sequence: event.sequence, eventId: event.id, turnId, inputId };
    });
  }

  /** A completed model response in `turnId` (its call's usage is OUTPUT_USAGE), with the tool calls it requested (recorded as the runtime does). */
  async output(
    turnId: string,
    options: { blocks?: unknown[]; stopReason?: string; toolCalls?: ToolCallSpec[]; semantic?: boolean; contextId?: string } = {},
  ): Promise<WrittenEvent & { contextId: string; toolCallIds: string[] }> {
    return this.locked(async (tx, agent) => {
      const contextId = options.contextId ?? newUuid();
      await tx.insert(modelCallContexts).values({
        id: contextId,
        agentId: agent.id,
        turnId,
        attemptNumber: 1,
        agentConfigId: agent.currentConfigId,
        inputEventSequence: agent.nextEventSequence - 1,
        state: "succeeded",
        ...OUTPUT_USAGE,
      });
      const calls = (options.toolCalls ?? []).map((spec) => ({ ...spec, id: newUuid() }));
      const outputId = newUuid();
      const blocks = [
        ...(options.blocks ?? []),
        ...calls.map((call) => ({
          type: "tool_call",
          tool_call_id: encodeId("toolCall", call.id),
          tool_type: call.type ?? "custom",
          name: call.name,
          input: call.input ?? {},
        })),
      ];
      const stopReason = options.stopReason ?? (calls.length > 0 ? "tool_use" : "end_turn");
      await tx.insert(modelOutputs).values({ id: outputId, agentId: agent.id, modelCallContextId: contextId, stopReason, contentBlocks: blocks });
      for (const [index, call] of calls.entries()) {
        await tx.insert(toolCalls).values({
          id: call.id,
          agentId: agent.id,
          turnId,
          modelOutputId: outputId,
          providerCallId: `call_${index}`,
          name: call.name,
          input: call.input ?? {},
          type: call.type ?? "custom",
          state: call.state ?? "awaiting_authorization",
          // A running call is owned by a runtime (a check constraint); no worker reads this one.
          ...(call.state === "running" ? { runtimeLockId: newUuid() } : {}),
        });
      }
      const event = await appendEvent(tx, agent, {
        turnId,
        kind: "model_output",
        modelOutputId: outputId,
        semantic: options.semantic ?? stopReason !== "tool_use",
      });
      return { sequence: event.sequence, eventId: event.id, turnId, contextId, toolCallIds: calls.map((call) => call.id) };
    });
  }

  /** Moves a tool call to another open state; stream followers get a tool_call_update. */
  async toolCallState(toolCallId: string, state: Exclude<ToolCallState, "completed">): Promise<void> {
    await this.locked(async (tx) => {
      const [call] = await tx.select().from(toolCalls).where(eq(toolCalls.id, toolCallId));
      await setToolCallState(tx, call!, state);
    });
  }

  /** Completes a tool call with its result and `tool_result` event. */
  async toolResult(toolCallId: string, outcome: ToolOutcome, blocks: unknown[]): Promise<WrittenEvent> {
    return this.locked(async (tx, agent) => {
      const [call] = await tx.select().from(toolCalls).where(eq(toolCalls.id, toolCallId));
      const { event } = await completeToolCall(tx, agent, call!, outcome, blocks);
      return { sequence: event.sequence, eventId: event.id, turnId: event.turnId };
    });
  }

  async checkpoint(turnId: string, through: number, summary: string): Promise<WrittenEvent & { checkpointId: string }> {
    return this.locked(async (tx, agent) => {
      const checkpointId = newUuid();
      await tx.insert(contextCheckpoints).values({
        id: checkpointId,
        agentId: agent.id,
        modelCallContextId: newUuid(),
        summarizedThroughEventSequence: through,
        summary,
      });
      const event = await appendEvent(tx, agent, { turnId, kind: "context_checkpoint", contextCheckpointId: checkpointId, semantic: false });
      return { sequence: event.sequence, eventId: event.id, turnId, checkpointId };
    });
  }

  /** `count` plain end-turn outputs in one turn, in one transaction (fast bulk history). */
  async outputs(turnId: string, count: number): Promise<void> {
    await this.locked(async (tx, agent) => {
      for (let i = 0; i < count; i++) {
        const contextId = newUuid();
        const outputId = newUuid();
        await tx.insert(modelCallContexts).values({
          id: contextId,
          agentId: agent.id,
          turnId,
          attemptNumber: 1,
          agentConfigId: agent.currentConfigId,
          inputEventSequence: agent.nextEventSequence - 1,
          state: "succeeded",
        });
        await tx.insert(modelOutputs).values({ id: outputId, agentId: agent.id, modelCallContextId: contextId, stopReason: "end_turn", contentBlocks: [text(`reply ${i}`)] });
        await appendEvent(tx, agent, { turnId, kind: "model_output", modelOutputId: outputId, semantic: true });
      }
    });
  }
}
