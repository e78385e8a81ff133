import { limitPerSource } from "../../platform/http/source-limit.js";
import type { HttpApp } from "../../platform/http/app.js";
import type { InboundAcceptor, InboundReceiverService } from "./inbound-service.js";
import type { IntegrationKinds } from "./kind.js";

/**
 * The providers' endpoints under `/api/integrations/` (Slack's events and actions, Discord's interactions,
 * GitHub's webhook), one route per path a kind's InboundReceiver names, all through the one receiver. No
 * svc credential: the provider's signature over the raw body is the authentication, so these routes keep
 * the body's bytes exactly as received. Each client address may send `perSourceLimit` requests a minute,
 * counted on arrival (docs/integrations.md, "Inbound requests"). Not part of the tenant API contract, so
 * hidden from the OpenAPI document, like the OAuth callback.
 */
export async function inboundRoutes(
  app: HttpApp,
  deps: { receiver: InboundReceiverService; kinds: IntegrationKinds; acceptors: Readonly<Record<string, InboundAcceptor>>; perSourceLimit: number },
) {
  await app.register(async (scope) => {
    limitPerSource(scope, deps.perSourceLimit);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    for (const [kind, { inbound }] of deps.kinds) {
      const acceptor = deps.acceptors[kind];
      if (!inbound || !acceptor) continue;
      for (const { path, endpoint } of inbound.routes) {
        scope.post(`/api/integrations/${path}`, { bodyLimit: inbound.maxBodyBytes, config: { auth: "public" }, schema: { hide: true } }, async (request, reply) => {
          const received = {
            endpoint,
            params: request.params as Record<string, string>,
            headers: request.headers,
            rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          };
          const answer = await acceptor.accept(received, await deps.receiver.verify(kind, received));
          return answer.body === undefined ? reply.status(answer.status).send() : reply.status(answer.status).send(answer.body);
        });
      }
    }
  });
}
