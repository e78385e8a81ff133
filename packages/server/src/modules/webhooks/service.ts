import { sql } from "drizzle-orm";
import type { Database, Tx } from "../../platform/db/index.js";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import { AppError, conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import type { OutboundPolicy } from "../../platform/net/outbound.js";
import { requireOrg, requireProject } from "../orgs/access.js";
import { WEBHOOK_CHANNEL } from "./channel.js";
import { destinationProblem } from "./destination.js";
import { MAX_ENDPOINTS_PER_ORG } from "./schemas.js";
import { newWebhookSecret } from "./signing.js";
import * as store from "./store.js";

/** After a rotation, how long the previous secret keeps signing beside the new one (docs/webhooks.md). */
export const PREVIOUS_SECRET_SECONDS = 24 * 60 * 60;

export interface EndpointInput {
  url: string;
  description?: string;
  eventTypes?: string[];
  projectIds?: string[];
  disabled?: boolean;
}

/** The associated data that binds a sealed secret to its endpoint, so rows cannot be swapped. */
export const secretAad = (endpointId: string) => `webhook_endpoint:${endpointId}`;

/**
 * Webhook endpoints and their deliveries. Only organization owners and admins (org.manage) see or change
 * them: an endpoint receives events of every project it names, and its URL may carry a credential.
 */
export function createWebhooksService(deps: { db: Database; cipher: EnvelopeCipher; outbound: OutboundPolicy }) {
  const { db, cipher, outbound } = deps;

  async function checkUrl(url: string): Promise<void> {
    const problem = await destinationProblem(url, outbound);
    if (problem) throw invalidField("/url", problem);
  }

  /** Every project must be the organization's; a bad one is a 400 at its index. */
  async function checkProjects(tx: Tx, principal: Principal, orgId: string, projectIds: readonly string[]): Promise<void> {
    for (const [index, projectId] of projectIds.entries()) {
      try {
        await requireProject(tx, principal, orgId, projectId, "project.read");
      } catch (err) {
        if (err instanceof AppError && (err.code === "not_found" || err.code === "forbidden")) throw invalidField(`/project_ids/${index}`, "names no project of this organization");
        throw err;
      }
    }
  }

  async function requireEndpoint(tx: Tx, principal: Principal, orgId: string, id: string, lock?: "update"): Promise<store.EndpointRow> {
    await requireOrg(tx, principal, orgId, "org.manage");
    const endpoint = await store.findEndpoint(tx, orgId, id, lock);
    if (!endpoint) throw notFound("webhook endpoint");
    return endpoint;
  }

  return {
    async create(principal: Principal, orgId: string, input: EndpointInput): Promise<{ endpoint: store.EndpointRow; secret: string }> {
      // Resolving the host happens before the transaction: nothing waits on the network inside one.
      await checkUrl(input.url);
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        await checkProjects(tx, principal, orgId, input.projectIds ?? []);
        // Counted under a per-organization lock, so concurrent creations cannot pass the limit together.
        await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`webhook_endpoints:${orgId}`}))`);
        if ((await store.countInOrg(tx, orgId)) >= MAX_ENDPOINTS_PER_ORG) {
          throw conflict(`an organization has at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints; delete one first`);
        }
        const id = newUuid();
        const secret = newWebhookSecret();
        const endpoint = await store.insertEndpoint(tx, {
          id,
          orgId,
          url: input.url,
          description: input.description ?? "",
          eventTypes: input.eventTypes ?? [],
          projectIds: input.projectIds ?? [],
          disabled: input.disabled ?? false,
          secret: cipher.seal(Buffer.from(secret), secretAad(id)),
        });
        return { endpoint, secret };
      });
    },

    async list(principal: Principal, orgId: string, page: PageRequest): Promise<store.EndpointRow[]> {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        return store.listEndpoints(tx, orgId, page);
      });
    },

    async get(principal: Principal, orgId: string, id: string): Promise<store.EndpointRow> {
      return db.tx((tx) => requireEndpoint(tx, principal, orgId, id));
    },

    /**
     * Disabling ends the endpoint's pending deliveries as failed (redeliver sends one again); enabling
     * clears the reason svc gave and starts its count of failing days afresh.
     */
    async update(principal: Principal, orgId: string, id: string, input: Partial<EndpointInput>): Promise<store.EndpointRow> {
      if (input.url !== undefined) await checkUrl(input.url);
      return db.tx(async (tx) => {
        const current = await requireEndpoint(tx, principal, orgId, id, "update");
        if (input.projectIds !== undefined) await checkProjects(tx, principal, orgId, input.projectIds);
        const disabling = input.disabled === true && !current.disabled;
        const enabling = input.disabled === false && current.disabled;
        if (disabling) await store.failPendingOf(tx, id, "the endpoint was disabled");
        return store.updateEndpoint(tx, id, {
          ...(input.url !== undefined ? { url: input.url } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.eventTypes !== undefined ? { eventTypes: input.eventTypes } : {}),
          ...(input.projectIds !== undefined ? { projectIds: input.projectIds } : {}),
          ...(input.disabled !== undefined ? { disabled: input.disabled } : {}),
          ...(enabling ? { disabledReason: null, failingSince: null } : {}),
        });
      });
    },

    async remove(principal: Principal, orgId: string, id: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        if (!(await store.deleteEndpoint(tx, orgId, id))) throw notFound("webhook endpoint");
      });
    },

    /** A new secret; the previous one keeps signing beside it for PREVIOUS_SECRET_SECONDS (any older one stops now). */
    async rotateSecret(principal: Principal, orgId: string, id: string): Promise<{ endpoint: store.EndpointRow; secret: string }> {
      return db.tx(async (tx) => {
        await requireEndpoint(tx, principal, orgId, id, "update");
        const secret = newWebhookSecret();
        // The previous secret moves over sealed as it is: the same endpoint, so the same associated data.
        const endpoint = await store.rotateSecret(tx, id, cipher.seal(Buffer.from(secret), secretAad(id)), PREVIOUS_SECRET_SECONDS);
        return { endpoint, secret };
      });
    },

    /** Sends `webhook.test` to this endpoint alone, whatever its event_types. */
    async sendTest(principal: Principal, orgId: string, id: string): Promise<store.DeliveryRow> {
      return db.tx(async (tx) => {
        const endpoint = await requireEndpoint(tx, principal, orgId, id);
        if (endpoint.disabled) throw conflict("the endpoint is disabled; enable it first");
        const delivery = await store.insertDelivery(tx, {
          id: newUuid(),
          orgId,
          endpointId: id,
          messageId: newUuid(),
          eventType: "webhook.test",
          occurredAt: sql`date_trunc('milliseconds', statement_timestamp())` as never,
          data: { endpoint_id: encodeId("webhookEndpoint", id), org_id: encodeId("org", orgId) },
          nextAttemptAt: sql`date_trunc('milliseconds', statement_timestamp())` as never,
        });
        await wakeSender(tx);
        return delivery;
      });
    },

    async listDeliveries(principal: Principal, orgId: string, id: string, filter: { status?: string }, page: PageRequest): Promise<store.DeliveryRow[]> {
      return db.tx(async (tx) => {
        await requireEndpoint(tx, principal, orgId, id);
        return store.listDeliveries(tx, id, filter, page);
      });
    },

    /**
     * Sends a delivery's event again as a new delivery with the same `webhook-id` (Standard Webhooks: the id
     * stays when a message is sent again), so a receiver that already handled it can tell.
     */
    async redeliver(principal: Principal, orgId: string, endpointId: string, deliveryId: string): Promise<store.DeliveryRow> {
      return db.tx(async (tx) => {
        const endpoint = await requireEndpoint(tx, principal, orgId, endpointId);
        const original = await store.findDelivery(tx, endpointId, deliveryId);
        if (!original) throw notFound("webhook delivery");
        if (endpoint.disabled) throw conflict("the endpoint is disabled; enable it first");
        const delivery = await store.insertDelivery(tx, {
          id: newUuid(),
          orgId,
          endpointId,
          messageId: original.messageId,
          eventType: original.eventType,
          occurredAt: original.occurredAt,
          data: original.data,
          nextAttemptAt: sql`date_trunc('milliseconds', statement_timestamp())` as never,
        });
        await wakeSender(tx);
        return delivery;
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** NOTIFY the sender, delivered on commit. */
async function wakeSender(tx: Tx): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${WEBHOOK_CHANNEL}, '')`);
}

const invalidField = (path: string, message: string) => new AppError("validation_failed", "request body failed validation", { issues: [{ path, message }] });
