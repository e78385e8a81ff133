import { randomBytes } from "node:crypto";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { CapabilitySigner } from "../../platform/crypto/capabilities.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, forbidden, invalidRequest } from "../../platform/errors.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import { sameOriginPath } from "../../platform/http/return-to.js";
import { decodeId, encodeId, newUuid } from "../../platform/ids.js";
import { CredentialRejected, type OAuthAppCredentials, type OAuthInstaller } from "./kind.js";
import type { IntegrationKinds } from "./kind.js";
import { requireProject } from "../orgs/access.js";
import type { SecretsService } from "../secrets/service.js";
import { kindOf, requireIntegration } from "./service.js";
import { refuseIdentityChange, type IntegrationPath } from "./setup-service.js";
import * as store from "./store.js";

/** How long an install link stays valid: long enough to approve it, short enough not to linger. */
export const OAUTH_FLOW_TTL_SECONDS = 600;
/** Where providers send the browser back; outside /api/v1, as the reference serves it. */
export const OAUTH_CALLBACK_PATH = "/api/integrations/oauth/callback";

/** How a callback ended, for the browser: `success`, or the reason it did not connect. */
export type OAuthOutcome = { ok: true; returnTo: string | null } | { ok: false; reason: string; returnTo: string | null };

/**
 * Installing a provider app through its consent page (reference docs: integrations/slack, "Connect
 * Slack"). Starting it stores the app credentials sealed in a flow row and answers the consent URL, whose
 * `state` is the flow id with an HMAC bound to the flow, its user and org. The provider sends the browser
 * back to OAUTH_CALLBACK_PATH, where the user who started the flow, still signed in, redeems it once:
 * the code is traded for a bot token, verified, stored as a new project secret, and the integration
 * connected with last_oauth_flow_id set to the flow.
 */
export function createIntegrationOAuthService(deps: {
  db: Database;
  kinds: IntegrationKinds;
  secrets: Pick<SecretsService, "createProjectSecretIn" | "resolvePayload">;
  cipher: EnvelopeCipher;
  signer: CapabilitySigner;
  publicUrl: string;
}) {
  const { db, kinds, secrets, cipher, signer, publicUrl } = deps;
  const redirectUri = publicUrl + OAUTH_CALLBACK_PATH;
  const sealedFor = (orgId: string, flowId: string) => `svc.integration-oauth-flow.v1:${orgId}:${flowId}`;
  const stateOf = (flow: store.OAuthFlowRow) => `${encodeId("integrationOAuthFlow", flow.id)}.${signer.sign([flow.id, flow.userId, flow.orgId])}`;

  /** Opens a flow for the integration `row` inside `tx` and answers the reference's IntegrationOAuthSetup. */
  async function startIn(tx: Tx, principal: UserPrincipal, row: store.IntegrationRow, app: OAuthAppCredentials, returnTo: string | undefined) {
    const installer = installerOf(kinds, row.kind);
    const flowId = newUuid();
    const envelope = cipher.seal(Buffer.from(JSON.stringify(app), "utf8"), sealedFor(row.orgId, flowId));
    const flow = await store.insertOAuthFlow(
      tx,
      { id: flowId, orgId: row.orgId, integrationId: row.id, userId: principal.userId, envelope, returnTo: returnTo === undefined ? null : sameOriginPath(returnTo, publicUrl) },
      OAUTH_FLOW_TTL_SECONDS,
    );
    return {
      provider: installer.provider,
      flow_id: encodeId("integrationOAuthFlow", flow.id),
      oauth_url: installer.authorizeUrl(app, redirectUri, stateOf(flow)),
      redirect_uri: redirectUri,
      events_url: publicUrl + installer.eventPaths.events,
      actions_url: publicUrl + installer.eventPaths.actions,
      expires_at: flow.expiresAt.toISOString(),
    };
  }

  return {
    redirectUri,
    startIn,

    async start(principal: UserPrincipal, path: IntegrationPath, app: OAuthAppCredentials, returnTo: string | undefined) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
        const row = requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId));
        return startIn(tx, principal, row, app, returnTo);
      });
    },

    /**
     * The provider's redirect. A state that is not svc's, a flow that expired or was used, or another
     * user's flow is refused as an error response; anything after that ends as an outcome for the browser.
     */
    async complete(principal: Principal, query: { state: string; code?: string; error?: string }): Promise<OAuthOutcome> {
      const flow = await openFlow(query.state);
      if (principal.kind !== "user" || principal.userId !== flow.userId) throw forbidden("this install link was started by another user; sign in as that user");
      const returnTo = flow.returnTo;
      if (query.error !== undefined || query.code === undefined) return { ok: false, reason: query.error || "missing_code", returnTo };
      const { row, installer } = await db.tx(async (tx) => {
        const found = await store.findIntegrationById(tx, flow.orgId, flow.integrationId);
        if (!found) throw invalidRequest("the integration of this install link was deleted");
        await requireProject(tx, principal, found.orgId, found.projectId, "project.manage");
        return { row: found, installer: installerOf(kinds, found.kind) };
      });
      const app = JSON.parse(cipher.open(flow.envelope, sealedFor(flow.orgId, flow.id)).toString("utf8")) as OAuthAppCredentials;
      let redeemed: Awaited<ReturnType<OAuthInstaller["redeem"]>>;
      try {
        redeemed = await installer.redeem(app, query.code, redirectUri);
      } catch (err) {
        if (err instanceof CredentialRejected) return { ok: false, reason: "install_refused", returnTo };
        if (err instanceof AppError) return { ok: false, reason: "provider_unavailable", returnTo };
        throw err;
      }
      await db.tx(async (tx) => {
        await requireProject(tx, principal, row.orgId, row.projectId, "project.manage");
        const locked = await store.findIntegration(tx, row.orgId, row.projectId, row.id, "update");
        if (!locked || !(await store.consumeOAuthFlow(tx, flow.id))) throw invalidRequest("this install link has expired or was already used; start the setup again");
        refuseIdentityChange(locked, redeemed.identity);
        const secret = await secrets.createProjectSecretIn(tx, row.orgId, row.projectId, {
          name: `${installer.provider}-${row.name}-${randomBytes(4).toString("hex")}`,
          material: redeemed.material,
        });
        await store.updateIntegration(
          tx,
          row.orgId,
          row.id,
          {
            state: "active",
            providerTenantId: redeemed.identity.tenantId,
            providerAccountRef: redeemed.identity.accountRef,
            botMention: redeemed.identity.botMention ?? null,
            providerIdentity: redeemed.identity.facts,
            credentialSecretId: secret.id,
            lastOAuthFlowId: flow.id,
          },
          true,
        );
      });
      return { ok: true, returnTo };
    },
  };

  /** The open flow a state names, if the state carries svc's signature for it. */
  async function openFlow(state: string): Promise<store.OAuthFlowRow> {
    const [publicId, signature] = state.split(".");
    const flowId = publicId ? decodeId("integrationOAuthFlow", publicId) : null;
    const flow = flowId ? await store.findOpenOAuthFlow(db.read, flowId) : undefined;
    if (!flow || signature === undefined || !signer.verify([flow.id, flow.userId, flow.orgId], signature)) {
      throw invalidRequest("this install link is not valid, has expired or was already used; start the setup again");
    }
    return flow;
  }
}

export type IntegrationOAuthService = ReturnType<typeof createIntegrationOAuthService>;

export function installerOf(kinds: IntegrationKinds, kindName: string): OAuthInstaller {
  const installer = kindOf(kinds, kindName).oauth;
  if (!installer) throw invalidRequest(`${kindName} integrations are not installed through OAuth; use setup with a credential secret`);
  return installer;
}
