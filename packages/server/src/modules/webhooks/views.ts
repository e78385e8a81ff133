import { iso, isoOrNull } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { DeliveryRow, EndpointRow } from "./store.js";
import type { WebhookEventType } from "./enqueue.js";

export function endpointView(row: EndpointRow) {
  return {
    id: encodeId("webhookEndpoint", row.id),
    org_id: encodeId("org", row.orgId),
    url: row.url,
    description: row.description,
    event_types: row.eventTypes as WebhookEventType[],
    project_ids: row.projectIds.map((id) => encodeId("project", id)),
    disabled: row.disabled,
    disabled_reason: row.disabledReason,
    previous_secret_expires_at: row.previousSecretExpiresAt && row.previousSecret ? iso(row.previousSecretExpiresAt) : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function endpointWithSecretView(row: EndpointRow, secret: string) {
  return { ...endpointView(row), secret };
}

export function deliveryView(row: DeliveryRow) {
  return {
    id: encodeId("webhookDelivery", row.id),
    webhook_id: encodeId("webhookMessage", row.messageId),
    endpoint_id: encodeId("webhookEndpoint", row.endpointId),
    event_type: row.eventType,
    status: row.status as "pending" | "succeeded" | "failed",
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at: isoOrNull(row.nextAttemptAt),
    created_at: iso(row.createdAt),
  };
}
