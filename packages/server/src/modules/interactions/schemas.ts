import { Type } from "typebox";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { pageQuery } from "../../platform/http/lists.js";
import { ExternalActorParams } from "../actors/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;

export const InteractionParams = Type.Object(
  { orgID: Id("org"), projectID: Id("project"), agentID: Id("agent"), interactionID: Id("interaction") },
  strict,
);

export const InteractionForm = component("InteractionForm", Type.Object(
  {
    title: Type.String({ minLength: 1 }),
    context: Type.Optional(Type.Array(Type.Object({ label: Type.String({ minLength: 1 }), value: Type.String({ minLength: 1 }) }, strict))),
    questions: Type.Array(
      Type.Object(
        {
          prompt: Type.String({ minLength: 1 }),
          multiple: Type.Optional(Type.Boolean({ default: false })),
          options: Type.Array(
            Type.Object({ label: Type.String({ minLength: 1 }), allows_text: Type.Optional(Type.Boolean({ default: false })) }, strict),
            { minItems: 1 },
          ),
        },
        strict,
      ),
      { minItems: 1 },
    ),
  },
  strict,
));

export const InteractionAnswer = component("InteractionAnswer", Type.Object(
  {
    option_indices: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, uniqueItems: true }),
    text: Type.Optional(Type.String({ maxLength: 65536 })),
  },
  strict,
));

export const AgentInteraction = component("AgentInteraction", Type.Object(
  {
    id: Id("interaction"),
    org_id: Id("org"),
    project_id: Id("project"),
    agent_id: Id("agent"),
    interaction_kind: Type.Enum(["permission", "question"]),
    state: Type.Enum(["open", "resolved", "canceled"]),
    request: InteractionForm,
    resolution: Type.Optional(Type.Object({ answers: Type.Array(InteractionAnswer, { minItems: 1 }) }, strict)),
    resolved_by_input_id: Type.Optional(Id("agentInput")),
    created_at: Timestamp,
    resolved_at: Type.Optional(Timestamp),
  },
  strict,
));

export const ListInteractionsQuery = Type.Object({ ...pageQuery, state: Type.Optional(Type.Enum(["open", "resolved", "canceled"])) }, strict);

export const ResolveAgentInteractionRequest = component("ResolveAgentInteractionRequest", Type.Object(
  { answers: Type.Array(InteractionAnswer, { minItems: 1 }), actor: Type.Optional(ExternalActorParams) },
  strict,
));
