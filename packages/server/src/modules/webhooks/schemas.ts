import { Type } from "typebox";
import { Cursor, Limit } from "../../platform/http/lists.js";
import { Id, NullableTimestamp, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";
import { WEBHOOK_EVENT_TYPES } from "./enqueue.js";

const strict = { additionalProperties: false } as const;

export const TAG = "Webhooks";

/** How many endpoints an organization may have. */
export const MAX_ENDPOINTS_PER_ORG = 50;

export const WebhookEventType = component("WebhookEventType", Type.Enum([...WEBHOOK_EVENT_TYPES], {
  description:
    "`agent.waiting`: a permission or question interaction opened (data: agent_id, project_id, interaction {id, kind, request}). " +
    "`agent.idle`: the agent finished its work and has no queued input (data: agent_id, project_id, turn_id). " +
    "`agent.failed`: a turn ended with an error svc will not retry (data: agent_id, project_id, turn_id, error {code, message}). " +
    "`budget.warning` / `budget.exceeded`: a budget passed one of its notify_at_percent thresholds or its limit (data: budget_id, " +
    "scope, period_end, spent_micro_usd, limit_micro_usd, spent_tokens, limit_tokens, percent). " +
    "`integration.failed`: an integration's provider failed while svc handled its event (data: integration_id, kind, project_id, message). " +
    "`machine.offline`: a connected machine's daemon went away (data: machine_id, name, reason). " +
    "`webhook.test` is sent only by the test operation.",
}));

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "Where deliveries are POSTed. Must be https; plain http only to a private or loopback address, and only while the " +
    "server allows the private network (SVC_ALLOW_PRIVATE_NETWORK).",
});
const Description = Type.String({ maxLength: 1000 });
const EventTypes = Type.Array(WebhookEventType, {
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: "The event types it gets; empty (the default) means every type.",
});
const ProjectIds = Type.Array(Id("project"), {
  maxItems: 100,
  uniqueItems: true,
  description: "The projects whose events it gets; empty (the default) means every project and the organization's own events.",
});

const DisabledReason = component(
  "WebhookEndpointDisabledReason",
  Type.Union([Type.String(), Type.Null()], { description: "Why svc disabled it (five days of failed deliveries), or null." }),
);
const PreviousSecretExpiresAt = component(
  "WebhookPreviousSecretExpiresAt",
  Type.Union([Timestamp, Type.Null()], { description: "After a rotation, until when the previous secret still signs beside the new one; null otherwise." }),
);

const endpointFields = {
  id: Id("webhookEndpoint"),
  org_id: Id("org"),
  url: Type.String(),
  description: Type.String(),
  event_types: Type.Array(WebhookEventType),
  project_ids: Type.Array(Id("project")),
  disabled: Type.Boolean(),
  disabled_reason: DisabledReason,
  previous_secret_expires_at: PreviousSecretExpiresAt,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookEndpoint = component("WebhookEndpoint", Type.Object(endpointFields, strict));

export const WebhookEndpointWithSecret = component(
  "WebhookEndpointWithSecret",
  Type.Object(
    {
      ...endpointFields,
      secret: Type.String({ description: "The signing secret (`whsec_…`). Shown only here: at creation and by rotate-secret." }),
    },
    strict,
  ),
);

export const CreateWebhookEndpointRequest = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    event_types: Type.Optional(EventTypes),
    project_ids: Type.Optional(ProjectIds),
    disabled: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const UpdateWebhookEndpointRequest = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    event_types: Type.Optional(EventTypes),
    project_ids: Type.Optional(ProjectIds),
    disabled: Type.Optional(Type.Boolean({ description: "false enables a disabled endpoint again and clears disabled_reason." })),
  },
  strict,
);

export const WebhookDeliveryStatus = component("WebhookDeliveryStatus", Type.Enum(["pending", "succeeded", "failed"]));

export const WebhookDelivery = component(
  "WebhookDelivery",
  Type.Object(
    {
      id: Id("webhookDelivery"),
      webhook_id: Type.String({ description: "The `webhook-id` header: the same on every attempt and on a redelivery." }),
      endpoint_id: Id("webhookEndpoint"),
      event_type: Type.String(),
      status: WebhookDeliveryStatus,
      attempts: Type.Integer({ minimum: 0 }),
      last_status_code: Type.Union([Type.Integer(), Type.Null()]),
      last_error: Type.Union([Type.String(), Type.Null()]),
      next_attempt_at: NullableTimestamp,
      created_at: Timestamp,
    },
    strict,
  ),
);

export const EndpointParams = Type.Object({ orgID: Id("org"), endpointID: Id("webhookEndpoint") });
export const DeliveryParams = Type.Object({ orgID: Id("org"), endpointID: Id("webhookEndpoint"), deliveryID: Id("webhookDelivery") });

export const ListWebhookEndpointsQuery = Type.Object(
  {
    sort: Type.Optional(Type.Enum(["-created_at", "created_at", "-updated_at", "updated_at"], { default: "-created_at" })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const ListWebhookDeliveriesQuery = Type.Object(
  {
    status: Type.Optional(WebhookDeliveryStatus),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);
