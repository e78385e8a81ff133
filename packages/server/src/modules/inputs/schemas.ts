import { Type } from "typebox";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { pageQuery } from "../../platform/http/lists.js";
import { ExternalActorParams } from "../actors/schemas.js";
import { InlineMediaContentBlock, MediaRefContentBlock, TextContentBlock } from "../artifacts/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;
export const TAG = "Agents";

export const AgentInputParams = Type.Object(
  { orgID: Id("org"), projectID: Id("project"), agentID: Id("agent"), inputID: Id("agentInput") },
  strict,
);

export const AgentInput = component("AgentInput", Type.Object(
  {
    id: Id("agentInput"),
    agent_id: Id("agent"),
    state: Type.String({ description: "`received` (waiting in the backlog), `resolved`, `rejected` or `canceled`; tolerate new values." }),
    delivery_mode: Type.Enum(["queued", "steering", "immediate"]),
    input_kind: Type.Enum(["content", "control", "interaction_response", "config_change"]),
    actor_id: Type.Optional(Id("actor")),
    input_idempotency_key: Type.Optional(Type.String()),
    content_blocks: Type.Optional(Type.Array(Type.Union([TextContentBlock, MediaRefContentBlock]))),
    queued_at: Timestamp,
  },
  strict,
));

export const AgentInputEnvelope = component("AgentInputEnvelope", Type.Object({ agent_input: AgentInput }, strict));

export const CreateAgentInputRequest = component("CreateAgentInputRequest", Type.Object(
  {
    content_blocks: Type.Array(Type.Union([TextContentBlock, InlineMediaContentBlock]), {
      minItems: 1,
      description:
        "At most 20 inline media blocks, each up to 10 MiB decoded and 24 MiB decoded together; non-media blocks up to 1 MiB " +
        "combined; the whole body up to 48 MiB.",
    }),
    delivery_mode: Type.Optional(
      Type.Enum(["queued", "steering"], {
        description: "`queued` (default) waits for the current turn to end; `steering` joins at the next model call.",
      }),
    ),
    cancel_open_interactions: Type.Optional(
      Type.Boolean({
        description:
          "Only with steering: cancels open interactions of the current turn's unfinished tool calls first; their tool calls " +
          "complete as canceled, the turn, runtime and unrelated tool calls are kept.",
      }),
    ),
    actor: Type.Optional(ExternalActorParams),
  },
  strict,
));

export const BacklogQuery = Type.Object(pageQuery, strict);

export const MoveQueuedBacklogInputRequest = component("MoveQueuedBacklogInputRequest", Type.Object(
  {
    position: Type.Enum(["front", "back", "before", "after"]),
    anchor_input_id: Type.Optional(Id("agentInput")),
  },
  strict,
));

export const PromoteQueuedInputToSteeringRequest = component("PromoteQueuedInputToSteeringRequest", Type.Object({ cancel_open_interactions: Type.Optional(Type.Boolean()) }, strict));
