import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { decodeId } from "../../platform/ids.js";
import { OrgParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { WebhooksService } from "./service.js";
import { deliveryView, endpointView, endpointWithSecretView } from "./views.js";

/** A project id of the right shape that names no possible row (the all-zero uuid is never made): refused as not the org's. */
const NO_ROW = "00000000-0000-0000-0000-000000000000";

const MANAGE = "Organization owners and admins only (org.manage).";

export function webhookRoutes(app: HttpApp, deps: { webhooks: WebhooksService }) {
  const { webhooks } = deps;

  app.post(
    "/orgs/:orgID/webhook-endpoints",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createWebhookEndpoint",
        summary: "Create a webhook endpoint",
        description:
          `Registers a URL that receives the organization's events as Standard Webhooks (docs/webhooks.md). ${MANAGE} The answer ` +
          "carries the signing secret, shown only here and by rotate-secret. At most 50 endpoints an organization (409).",
        params: OrgParams,
        body: s.CreateWebhookEndpointRequest,
        response: { 201: s.WebhookEndpointWithSecret, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { endpoint, secret } = await webhooks.create(request.principal!, pathId("org", request.params.orgID), {
        url: body.url,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
        ...(body.project_ids !== undefined ? { projectIds: projectIds(body.project_ids) } : {}),
        ...(body.disabled !== undefined ? { disabled: body.disabled } : {}),
      });
      return reply.status(201).send(endpointWithSecretView(endpoint, secret));
    },
  );

  app.get(
    "/orgs/:orgID/webhook-endpoints",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listWebhookEndpoints",
        summary: "List webhook endpoints",
        description: `The organization's webhook endpoints, newest first by default. ${MANAGE}`,
        params: OrgParams,
        querystring: s.ListWebhookEndpointsQuery,
        response: { 200: Page(s.WebhookEndpoint), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await webhooks.list(request.principal!, pathId("org", request.params.orgID), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), endpointView);
    },
  );

  app.get(
    "/orgs/:orgID/webhook-endpoints/:endpointID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getWebhookEndpoint",
        summary: "Get a webhook endpoint",
        description: `One webhook endpoint, without its secret. ${MANAGE}`,
        params: s.EndpointParams,
        response: { 200: s.WebhookEndpoint, ...errorResponses() },
      },
    },
    async (request) => endpointView(await webhooks.get(request.principal!, ...endpointPath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/webhook-endpoints/:endpointID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateWebhookEndpoint",
        summary: "Update a webhook endpoint",
        description:
          `Changes the URL, description, event types, projects or disabled state. ${MANAGE} Disabling ends its pending deliveries ` +
          "as failed; enabling clears disabled_reason.",
        params: s.EndpointParams,
        body: s.UpdateWebhookEndpointRequest,
        response: { 200: s.WebhookEndpoint, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body;
      return endpointView(
        await webhooks.update(request.principal!, ...endpointPath(request.params), {
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
          ...(body.project_ids !== undefined ? { projectIds: projectIds(body.project_ids) } : {}),
          ...(body.disabled !== undefined ? { disabled: body.disabled } : {}),
        }),
      );
    },
  );

  app.delete(
    "/orgs/:orgID/webhook-endpoints/:endpointID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteWebhookEndpoint",
        summary: "Delete a webhook endpoint",
        description: `Deletes the endpoint and its deliveries; nothing more is sent to it. ${MANAGE}`,
        params: s.EndpointParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await webhooks.remove(request.principal!, ...endpointPath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/orgs/:orgID/webhook-endpoints/:endpointID/rotate-secret",
    {
      schema: {
        tags: [s.TAG],
        operationId: "rotateWebhookEndpointSecret",
        summary: "Rotate a webhook endpoint's secret",
        description:
          `Makes a new signing secret and answers it (shown only here). ${MANAGE} For 24 hours the previous secret keeps signing: ` +
          "each delivery carries both signatures, space-separated in webhook-signature, so a receiver can switch without losing one.",
        params: s.EndpointParams,
        response: { 200: s.WebhookEndpointWithSecret, ...errorResponses() },
      },
    },
    async (request) => {
      const { endpoint, secret } = await webhooks.rotateSecret(request.principal!, ...endpointPath(request.params));
      return endpointWithSecretView(endpoint, secret);
    },
  );

  app.post(
    "/orgs/:orgID/webhook-endpoints/:endpointID/test",
    {
      schema: {
        tags: [s.TAG],
        operationId: "testWebhookEndpoint",
        summary: "Send a test event",
        description: `Sends a \`webhook.test\` event to this endpoint (whatever its event_types) and answers its delivery. ${MANAGE} 409 when the endpoint is disabled.`,
        params: s.EndpointParams,
        response: { 202: s.WebhookDelivery, ...errorResponses(409) },
      },
    },
    async (request, reply) => reply.status(202).send(deliveryView(await webhooks.sendTest(request.principal!, ...endpointPath(request.params)))),
  );

  app.get(
    "/orgs/:orgID/webhook-endpoints/:endpointID/deliveries",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listWebhookDeliveries",
        summary: "List an endpoint's deliveries",
        description: `The endpoint's deliveries, newest first, optionally of one status. ${MANAGE}`,
        params: s.EndpointParams,
        querystring: s.ListWebhookDeliveriesQuery,
        response: { 200: Page(s.WebhookDelivery), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const filter = request.query.status !== undefined ? { status: request.query.status } : {};
      const rows = await webhooks.listDeliveries(request.principal!, ...endpointPath(request.params), filter, page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), deliveryView);
    },
  );

  app.post(
    "/orgs/:orgID/webhook-endpoints/:endpointID/deliveries/:deliveryID/redeliver",
    {
      schema: {
        tags: [s.TAG],
        operationId: "redeliverWebhookDelivery",
        summary: "Redeliver an event",
        description:
          `Sends the delivery's event again as a new delivery, with the same body and the same webhook-id, and answers it. ${MANAGE} ` +
          "409 when the endpoint is disabled.",
        params: s.DeliveryParams,
        response: { 202: s.WebhookDelivery, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const [orgId, endpointId] = endpointPath(request.params);
      const delivery = await webhooks.redeliver(request.principal!, orgId, endpointId, pathId("webhookDelivery", request.params.deliveryID));
      return reply.status(202).send(deliveryView(delivery));
    },
  );
}

function endpointPath(params: { orgID: string; endpointID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("webhookEndpoint", params.endpointID)];
}

function projectIds(ids: string[]): string[] {
  return ids.map((id) => decodeId("project", id) ?? NO_ROW);
}
