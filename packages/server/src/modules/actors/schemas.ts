import { Type, type Static } from "typebox";
import { Cursor, Limit } from "../../platform/http/lists.js";
import { Id, Metadata, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;
export const TAG = "Actors";

export const ACTOR_PROVIDERS = ["svc", "integration", "external"] as const;
export type ActorProvider = (typeof ACTOR_PROVIDERS)[number];

export const ActorProviderSchema = component("ActorProvider", Type.Enum([...ACTOR_PROVIDERS], {
  description: "`svc`: a user of this service; `integration`: a sender seen by an integration; `external`: managed through the API.",
}));

/** An external identity to attribute work to, upserted by (provider_tenant_id, provider_user_id). */
export const ExternalActorParams = component("ExternalActorParams", Type.Object(
  {
    provider_tenant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Scopes provider_user_id, e.g. a workspace." })),
    provider_user_id: Type.String({ minLength: 1, maxLength: 128 }),
    display_name: Type.Optional(Type.String({ maxLength: 256 })),
    metadata: Type.Optional(Metadata),
  },
  strict,
));

export type ExternalActorInput = Static<typeof ExternalActorParams>;

export const Actor = component("Actor", Type.Object(
  {
    id: Id("actor"),
    org_id: Id("org"),
    project_id: Id("project"),
    provider: ActorProviderSchema,
    provider_tenant_id: Type.Optional(Type.String({ description: "Omitted when the actor has no tenant." })),
    provider_user_id: Type.String({ description: "For `svc` actors, the user's id (`usr_…`)." }),
    display_name: Type.Optional(Type.String()),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

export const ActorParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), actorID: Id("actor") }, strict);

export const ListActorsQuery = Type.Object(
  {
    provider: Type.Optional(ActorProviderSchema),
    provider_tenant_id: Type.Optional(Type.String({ maxLength: 128, description: "Exact match; empty matches actors without a tenant." })),
    provider_user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Exact match." })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);
