import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import type { InboundReceiver, InboundRequest } from "./kind.js";
import type { IntegrationKinds } from "./kind.js";
import type { SecretsService } from "../secrets/service.js";
import * as inbound from "./inbound-store.js";
import type { IntegrationRow } from "./store.js";

/** Slack's window (Slack docs: "Verifying requests from Slack"): an older or later signature is a replay. */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

/**
 * Signed provider requests (docs/architecture.md, "Inbound events"): the request's claims name the
 * workspace and app, the candidates are that kind's integrations there, and only a signature one of their
 * signing secrets verifies is accepted; a request too old or too new by the database clock, or that no
 * secret verifies, is 401 and changes nothing. Each event becomes a receipt of every verifying, active
 * integration in one short transaction; the provider is answered at once and the processor does the work.
 */
export function createInboundService(deps: { db: Database; kinds: IntegrationKinds; secrets: Pick<SecretsService, "resolvePayload"> }) {
  const { db, kinds, secrets } = deps;

  async function verifying(receiver: InboundReceiver, kind: string, request: InboundRequest): Promise<{ challenge?: string; integrations: IntegrationRow[]; claims: ReturnType<InboundReceiver["claims"]> }> {
    const claims = receiver.claims(request);
    return db.tx(async (tx) => {
      const now = await inbound.dbEpochSeconds(tx);
      if (claims.signedAt === undefined || Math.abs(now - claims.signedAt) > SIGNATURE_WINDOW_SECONDS) throw unauthorized();
      const candidates = (await inbound.routableIntegrations(tx, kind, claims.tenantId)).filter((row) => claims.challenge !== undefined || receiver.routesTo(row.providerIdentity, claims));
      const verified: IntegrationRow[] = [];
      for (const row of candidates) {
        // A credential deleted or no longer shared with the project verifies nothing.
        const material = await secrets.resolvePayload(tx, row.orgId, row.projectId, row.credentialSecretId!).catch(() => undefined);
        if (material && receiver.verify(material, request)) verified.push(row);
      }
      if (verified.length === 0) throw unauthorized();
      return { challenge: claims.challenge, integrations: verified, claims };
    });
  }

  return {
    async receive(kind: string, request: InboundRequest): Promise<{ challenge?: string }> {
      const receiver = kinds.get(kind)?.inbound;
      if (!receiver) throw new AppError("not_found", `${kind} does not receive events`);
      const { challenge, integrations, claims } = await verifying(receiver, kind, request);
      if (challenge !== undefined) return { challenge };
      // A disconnected integration stops forwarding and keeps nothing for later (reference docs: integrations/overview).
      const active = integrations.filter((row) => row.state === "active");
      if (claims.events.length === 0 || active.length === 0) return {};
      await db.tx(async (tx) => {
        for (const row of active) await inbound.insertReceipts(tx, row.id, claims.events);
      });
      return {};
    },
  };
}

export type InboundService = ReturnType<typeof createInboundService>;

function unauthorized(): AppError {
  return new AppError("unauthorized", "the request's signature does not verify, or its timestamp is outside the five-minute window");
}
