import { createHmac, timingSafeEqual } from "node:crypto";
import type { Database } from "../../../../platform/db/index.js";
import { AppError, unauthorized } from "../../../../platform/errors.js";
import type { HttpApp } from "../../../../platform/http/app.js";
import type { SecretsService } from "../../../secrets/service.js";
import type { IntegrationRow } from "../../store.js";
import { insertReceipts, routableIntegrations } from "../../inbound-store.js";
import { parseSignedJson, rawBody, rawJsonBodies } from "../../inbound.js";
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
 * the raw body with one candidate's webhook secret (compared in constant time), else 401 and nothing
 * is stored. A ping is answered 204. Any other event is stored, once per `X-GitHub-Delivery`, for each
 * active integration of that installation whose secret signed it, and handled from the receipts
 * (integrations/github/receipts.ts), started at once.
 */
export async function githubWebhookRoutes(app: HttpApp, deps: { db: Database; secrets: Pick<SecretsService, "resolvePayload"> }): Promise<void> {
  await app.register(async (scope) => {
    rawJsonBodies(scope, MAX_DELIVERY_BYTES);
    const receive = async (request: { headers: Record<string, string | string[] | undefined>; body: unknown; params: unknown }, reply: { status(code: number): { send(): unknown } }) => {
      const headers = deliveryHeaders(request.headers, (request.params as { appID?: string }).appID);
      const raw = rawBody(request.body);
      const signers = await signedBy(deps, headers.appId, raw, headers.signature);
      if (signers.length === 0) throw unauthorized("the delivery's signature does not verify with this GitHub App's webhook secret");
      if (headers.event === "ping") return reply.status(204).send();
      const payload = parseSignedJson(raw);
      const installationId = scalarMember(objectMember(payload, "installation"), "id");
      const targets = signers.filter((row) => row.state === "active" && row.providerAccountRef === installationId);
      if (targets.length > 0) {
        await deps.db.tx(async (tx) => {
          for (const row of targets) await insertReceipts(tx, row.id, [{ providerEventId: headers.delivery, eventKind: headers.event, payload }]);
        });
      }
      return reply.status(204).send();
    };
    const options = { config: { auth: "public" as const }, schema: { hide: true } };
    scope.post("/api/integrations/github/events", options, receive);
    scope.post("/api/integrations/github/:appID/events", options, receive);
  });
}

interface DeliveryHeaders {
  appId: string;
  event: string;
  delivery: string;
  signature: string;
}

/** GitHub's delivery headers, checked before anything else is read: without them the delivery cannot be authenticated. */
function deliveryHeaders(headers: Record<string, string | string[] | undefined>, pathAppId: string | undefined): DeliveryHeaders {
  const header = (name: string) => (typeof headers[name] === "string" ? (headers[name] as string) : "");
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

/** The integrations of this App whose webhook secret signed the body. */
async function signedBy(deps: { db: Database; secrets: Pick<SecretsService, "resolvePayload"> }, appId: string, raw: Buffer, signatureHex: string): Promise<IntegrationRow[]> {
  const candidates = await routableIntegrations(deps.db.read, "github_pr", appId);
  if (candidates.length === 0) return [];
  const secrets = await deps.db.tx(async (tx) => {
    const found: Array<string | undefined> = [];
    for (const row of candidates) found.push(await webhookSecretOf(tx, deps.secrets, row));
    return found;
  });
  const signature = Buffer.from(signatureHex, "hex");
  return candidates.filter((_row, index) => {
    const secret = secrets[index];
    return secret !== undefined && timingSafeEqual(createHmac("sha256", secret).update(raw).digest(), signature);
  });
}

async function webhookSecretOf(tx: Parameters<SecretsService["resolvePayload"]>[0], secrets: Pick<SecretsService, "resolvePayload">, row: IntegrationRow) {
  try {
    const material = await secrets.resolvePayload(tx, row.orgId, row.projectId, row.credentialSecretId!);
    return material.kind === "github_app_credentials" ? material.webhook_secret : undefined;
  } catch (err) {
    // A credential deleted or no longer granted to the project signs nothing.
    if (err instanceof AppError && err.code === "not_found") return undefined;
    throw err;
  }
}
