import type { HttpApp } from "../../platform/http/app.js";
import type { InboundService } from "./inbound-service.js";

/** Slack's requests are small; the Events API never sends more than this. */
const MAX_INBOUND_BYTES = 1024 * 1024;

/**
 * The provider-facing endpoints: `POST /api/integrations/slack/events` (Events API) and
 * `…/slack/actions` (interactivity). No svc credential: the provider's signature over the raw body is the
 * authentication, so these routes keep the body's bytes exactly as received. Not part of the tenant API
 * contract, so hidden from the OpenAPI document, like the OAuth callback.
 */
export async function inboundRoutes(app: HttpApp, deps: { inbound: InboundService }) {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(["application/json", "application/x-www-form-urlencoded"], { parseAs: "buffer", bodyLimit: MAX_INBOUND_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    for (const endpoint of ["events", "actions"] as const) {
      scope.post(`/api/integrations/slack/${endpoint}`, { config: { auth: "public" }, schema: { hide: true } }, async (request, reply) => {
        const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await deps.inbound.receive("slack_thread", { endpoint, headers: request.headers, rawBody });
        return answer.challenge !== undefined ? reply.send({ challenge: answer.challenge }) : reply.status(200).send();
      });
    }
  });
}
