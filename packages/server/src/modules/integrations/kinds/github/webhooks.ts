import { createHmac, timingSafeEqual } from "node:crypto";
import type { Database } from "../../../../platform/db/index.js";
import { AppError, unauthorized } from "../../../../platform/errors.js";
import { parseSignedJson } from "../../inbound.js";
import type { InboundAcceptor } from "../../inbound-service.js";
import { insertReceipts } from "../../inbound-store.js";
import type { InboundReceiver, InboundRequest } from "../../kind.js";
import { scalarMember, objectMember } from "../rest.js";

/** GitHub caps a delivery at 25 MB; the events svc routes (pull requests, comments, reviews) are far smaller. */
const MAX_DELIVERY_BYTES = 5 * 1024 * 1024;
const DELIVERY_ID = /^[0-9a-fA-F-]{1,64}$/;
const EVENT_NAME = /^[a-z_]{1,64}$/;
const NUMERIC_ID = /^[0-9]{1,20}$/;

/**
 * `POST /api/integrations/github/events` (reference docs: integrations/github, "Connect your GitHub
 * App"), and `/api/integrations/github/{appID}/events`: an App's webhook. The App id header selects the
 * candidate integrations; the delivery is authentic only if `X-Hub-Signature-256` is the HMAC-SHA256 of
 * the raw body with one candidate's webhook secret (compared in constant time). GitHub signs no timestamp:
 * a replayed delivery is stored once per `X-GitHub-Delivery`, which is the receipt's provider event id.
 */
export const githubInbound: InboundReceiver = {
  routes: [
    { path: "github/events", endpoint: "events" },
    { path: "github/:appID/events", endpoint: "events" },
  ],
  maxBodyBytes: MAX_DELIVERY_BYTES,
  keyIn: "credential",
  signature(request) {
    return { tenantId: deliveryHeaders(request).appId };
  },
  keyOf: ({ credential }) => (credential?.kind === "github_app_credentials" ? credential.webhook_secret : undefined),
  verify(webhookSecret, request) {
    const signature = Buffer.from(deliveryHeaders(request).signature, "hex");
    return timingSafeEqual(createHmac("sha256", webhookSecret).update(request.rawBody).digest(), signature);
  },
};

/**
 * The per-integration work once a delivery verified: a ping is answered 204; any other event is stored
 * for each active integration of that installation whose secret signed it, and handled from the
 * receipts (receipts.ts), started at once.
 */
export function githubAcceptor(deps: { db: Database }): InboundAcceptor {
  return {
    async accept(request, signers) {
      const headers = deliveryHeaders(request);
      if (headers.event === "ping") return { status: 204 };
      const payload = parseSignedJson(request.rawBody);
      const installationId = scalarMember(objectMember(payload, "installation"), "id");
      const targets = signers.filter((row) => row.state === "active" && row.providerAccountRef === installationId);
      if (targets.length > 0) {
        await deps.db.tx(async (tx) => {
          for (const row of targets) await insertReceipts(tx, row.id, [{ providerEventId: headers.delivery, eventKind: headers.event, payload }]);
        });
      }
      return { status: 204 };
    },
  };
}

interface DeliveryHeaders {
  appId: string;
  event: string;
  delivery: string;
  signature: string;
}

/** GitHub's delivery headers, checked before anything else is read: without them the delivery cannot be authenticated. */
function deliveryHeaders(request: InboundRequest): DeliveryHeaders {
  const header = (name: string) => (typeof request.headers[name] === "string" ? (request.headers[name] as string) : "");
  const pathAppId = request.params["appID"];
  const signature = /^sha256=([0-9a-f]{64})$/.exec(header("x-hub-signature-256"))?.[1];
  const appId = header("x-github-hook-installation-target-id");
  if (!signature) throw unauthorized("the delivery has no X-Hub-Signature-256");
  if (!NUMERIC_ID.test(appId) || header("x-github-hook-installation-target-type") !== "integration" || (pathAppId !== undefined && pathAppId !== appId)) {
    throw unauthorized("the delivery does not name a GitHub App (X-GitHub-Hook-Installation-Target-ID)");
  }
  const event = header("x-github-event");
  const delivery = header("x-github-delivery");
  if (!EVENT_NAME.test(event) || !DELIVERY_ID.test(delivery)) throw new AppError("invalid_request", "the delivery has no valid X-GitHub-Event or X-GitHub-Delivery");
  return { appId, event, delivery, signature };
}
