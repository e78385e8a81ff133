import { Type } from "typebox";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { InlineMediaContentBlock, MediaRefContentBlock, StructuredDataContentBlock, TextContentBlock } from "../artifacts/schemas.js";
import { ToolCall } from "../timeline/views.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;

export const ToolCallParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentID: Id("agent"), toolCallID: Id("toolCall") }, strict);

export const SubmitToolCallResultRequest = component("SubmitToolCallResultRequest", Type.Object(
  {
    outcome: Type.Enum(["succeeded", "failed"]),
    content_blocks: Type.Array(Type.Union([TextContentBlock, InlineMediaContentBlock, StructuredDataContentBlock]), {
      description:
        "At most 20 inline media blocks, each up to 10 MiB decoded and 24 MiB decoded together; non-media blocks up to 1 MiB " +
        "combined; the whole body up to 48 MiB. Media is stored as artifacts and read back as media_ref blocks.",
    }),
  },
  strict,
));

export const ToolResult = component("ToolResult", Type.Object(
  {
    event_id: Id("event"),
    agent_id: Id("agent"),
    tool_call_id: Id("toolCall"),
    outcome: Type.Enum(["succeeded", "failed", "denied", "canceled"]),
    content_blocks: Type.Array(Type.Union([TextContentBlock, MediaRefContentBlock, StructuredDataContentBlock])),
    created_at: Timestamp,
  },
  strict,
));

export const SubmitToolCallResultResponse = component("SubmitToolCallResultResponse", Type.Object({ tool_call: ToolCall, tool_result: ToolResult }, strict));
