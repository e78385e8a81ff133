import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import { CONTENT_BODY_LIMIT } from "../artifacts/service.js";
import { TAG } from "../agents/schemas.js";
import { toolCallView } from "../timeline/views.js";
import * as s from "./schemas.js";
import type { ToolsService } from "./service.js";

export function toolRoutes(app: HttpApp, deps: { tools: ToolsService }) {
  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/tool-calls/:toolCallID/result",
    {
      bodyLimit: CONTENT_BODY_LIMIT,
      schema: {
        tags: [TAG],
        operationId: "submitToolCallResult",
        summary: "Submit a custom tool call's result",
        description:
          "Submits the result of a ready custom tool call (agent.operate). The first accepted result completes the call and " +
          "records a tool_result event; any later submission, or a result for a call that is not a ready custom call, is 409. " +
          "An invalid result is 400 and leaves the call ready.",
        params: s.ToolCallParams,
        body: s.SubmitToolCallResultRequest,
        response: { 200: s.SubmitToolCallResultResponse, ...errorResponses(409, 413) },
      },
    },
    async (request) => {
      const { call, result, event } = await deps.tools.submitResult(
        request.principal!,
        ...projectPath(request.params),
        pathId("agent", request.params.agentID),
        pathId("toolCall", request.params.toolCallID),
        request.body,
      );
      return {
        tool_call: toolCallView(call),
        tool_result: {
          event_id: encodeId("event", event.id),
          agent_id: encodeId("agent", result.agentId),
          tool_call_id: encodeId("toolCall", call.id),
          outcome: result.outcome as "succeeded" | "failed" | "denied" | "canceled",
          content_blocks: result.contentBlocks as never[],
          created_at: iso(result.createdAt),
        },
      };
    },
  );
}
