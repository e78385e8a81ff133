import type { Static } from "typebox";
import { conflict, notFound } from "../../platform/errors.js";
import type { Database } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { requireAgentAlongside } from "../agents/access.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { lockAgent } from "../../runtime/store/journal.js";
import { completeToolCall } from "../../runtime/store/tool-calls.js";
import type { SubmitToolCallResultRequest } from "./schemas.js";
import { findToolCall } from "./store.js";

type SubmitBody = Static<typeof SubmitToolCallResultRequest>;

export function createToolsService(deps: { db: Database; artifacts: ArtifactsService }) {
  const { db } = deps;

  return {
    /**
     * Completes a ready custom tool call with the client's result (spec: Tool call state table). Only a
     * `ready` call of type `custom` accepts one; the first accepted result wins and any later one, or a
     * result for another kind of call, is 409. Media is stored before the transaction. The access check
     * and the call's first read go out together; the completion is one statement that takes its COMMIT along.
     */
    async submitResult(principal: Principal, orgId: string, projectId: string, agentId: string, toolCallId: string, body: SubmitBody) {
      const { alongside: before } = await requireAgentAlongside(db.read, principal, orgId, projectId, agentId, "agent.operate", (id) => findToolCall(db.read, id, toolCallId));
      if (!before) throw notFound("tool call");
      assertAcceptsResult(before);
      const prepared = await deps.artifacts.prepareContentBlocks(body.content_blocks, new Set(["text", "media", "structured_data"]));
      return db.tx(async (tx) => {
        const agent = await lockAgent(tx, agentId);
        if (!agent) throw notFound("agent");
        const call = await findToolCall(tx, agentId, toolCallId);
        if (!call) throw notFound("tool call");
        assertAcceptsResult(call);
        await deps.artifacts.recordArtifacts(tx, prepared, { orgId, projectId, agentId });
        return tx.commitWith(() => completeToolCall(tx, agent, call, body.outcome, prepared.blocks, { wake: "tool_result" }));
      });
    },
  };
}

function assertAcceptsResult(call: { type: string; state: string }): void {
  if (call.type !== "custom") throw conflict(`only custom tool calls accept a result; this is a ${call.type} tool call`);
  if (call.state !== "ready") throw conflict(`custom tool call is not ready for a result (it is ${call.state})`);
}

export type ToolsService = ReturnType<typeof createToolsService>;
