import type { Database, Tx } from "../../platform/db/index.js";
import { conflict, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { CredentialRejected, type IdentityClaim, type IntegrationKind, type VerifiedIdentity } from "./kind.js";
import type { IntegrationKinds } from "./kind.js";
import { requireProject } from "../orgs/access.js";
import type { SecretsService } from "../secrets/service.js";
import { invalid } from "./settings.js";
import { kindOf, requireIntegration } from "./service.js";
import * as store from "./store.js";

export interface SetupInput {
  expectedSetupRevision: number;
  providerTenantId?: string;
  providerAccountRef?: string;
  providerAgentDisplayName?: string;
  credentialSecretId: string;
  providerConfig?: Record<string, unknown>;
}

/** Spec: provider_agent_display_name is at most 512 UTF-8 bytes. */
const MAX_DISPLAY_NAME_BYTES = 512;

/**
 * Connecting an integration (reference docs: integrations/overview, "Create an integration"). The
 * provider is asked who the credential is before anything is saved, outside any transaction (a network
 * call must never hold the database); the save then checks again that setup_revision is still the one
 * the caller read, so two setups racing cannot both win. A connection keeps its provider identity for
 * good: reconnecting, or a new credential, must be the same workspace and bot.
 */
export function createIntegrationSetupService(deps: { db: Database; kinds: IntegrationKinds; secrets: Pick<SecretsService, "resolvePayload"> }) {
  const { db, kinds, secrets } = deps;

  /** Reads what a connection attempt needs, checking access, the revision and the credential's kind. */
  async function prepare(principal: Principal, path: IntegrationPath, expectedRevision: number, secretId: (row: store.IntegrationRow) => string) {
    return db.tx(async (tx) => {
      const row = await current(tx, principal, path, expectedRevision);
      const kind = kindOf(kinds, row.kind);
      const material = await credentialOf(tx, kind, path, secretId(row));
      return { row, kind, material };
    });
  }

  /** Saves a verified connection if nobody changed the setup meanwhile; bumps setup_revision. */
  async function save(principal: Principal, path: IntegrationPath, expectedRevision: number, connection: Connection) {
    return db.tx(async (tx) => {
      const row = await current(tx, principal, path, expectedRevision, "update");
      refuseIdentityChange(row, connection.identity);
      // The credential may have been deleted or its grant revoked while the provider answered.
      await secrets.resolvePayload(tx, path.orgId, path.projectId, connection.credentialSecretId);
      return store.updateIntegration(
        tx,
        path.orgId,
        row.id,
        {
          state: "active",
          providerTenantId: connection.identity.tenantId,
          providerAccountRef: connection.identity.accountRef,
          botMention: connection.identity.botMention ?? null,
          providerIdentity: connection.identity.facts,
          credentialSecretId: connection.credentialSecretId,
          ...(connection.displayName !== undefined ? { providerAgentDisplayName: connection.displayName } : {}),
          ...(connection.providerConfig !== undefined ? { providerConfig: connection.providerConfig } : {}),
        },
        true,
      );
    });
  }

  async function current(tx: Tx, principal: Principal, path: IntegrationPath, expectedRevision: number, lock?: "update") {
    await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
    const row = requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId, lock));
    if (row.setupRevision !== expectedRevision) {
      throw conflict(`the integration's setup_revision is ${row.setupRevision}, not expected_setup_revision ${expectedRevision}; read it again and retry`);
    }
    return row;
  }

  async function credentialOf(tx: Tx, kind: IntegrationKind, path: IntegrationPath, secretId: string) {
    // The secrets service answers 404 for a secret the project neither owns nor was granted.
    const material = await secrets.resolvePayload(tx, path.orgId, path.projectId, secretId);
    if (!kind.credentialKinds.includes(material.kind)) {
      throw invalid([{ path: "/credential_secret_id", message: `must be a ${kind.credentialKinds.join(" or ")} secret, not ${material.kind}` }]);
    }
    return material;
  }

  return {
    async setup(principal: Principal, path: IntegrationPath, input: SetupInput) {
      const displayName = input.providerAgentDisplayName?.trim() ?? "";
      const issues: Issue[] = [];
      if (Buffer.byteLength(displayName, "utf8") > MAX_DISPLAY_NAME_BYTES) issues.push({ path: "/provider_agent_display_name", message: `must be at most ${MAX_DISPLAY_NAME_BYTES} UTF-8 bytes` });
      const { row, kind, material } = await prepare(principal, path, input.expectedSetupRevision, () => input.credentialSecretId);
      if (input.providerConfig !== undefined) {
        issues.push(...kind.providerConfigIssues(input.providerConfig).map((issue) => ({ ...issue, path: `/provider_config${issue.path}` })));
      }
      if (issues.length > 0) throw invalid(issues);
      const claim = { tenantId: input.providerTenantId, accountRef: input.providerAccountRef };
      refuseIdentityChange(row, { tenantId: claim.tenantId ?? row.providerTenantId, accountRef: claim.accountRef ?? row.providerAccountRef });
      const identity = await verified(kind, material, claim);
      return save(principal, path, input.expectedSetupRevision, {
        identity,
        credentialSecretId: input.credentialSecretId,
        displayName: displayName || (identity.displayName?.trim() ?? ""),
        providerConfig: input.providerConfig,
      });
    },

    /** Connects again with the credential the integration kept; the label and provider_config stay. */
    async reconnect(principal: Principal, path: IntegrationPath, expectedRevision: number) {
      const { row, kind, material } = await prepare(principal, path, expectedRevision, (found) => {
        if (found.credentialSecretId === null) throw conflict("the integration has no credential to reconnect with; connect it with setup first");
        return found.credentialSecretId;
      });
      const identity = await verified(kind, material, { tenantId: row.providerTenantId ?? undefined, accountRef: row.providerAccountRef ?? undefined });
      return save(principal, path, expectedRevision, { identity, credentialSecretId: row.credentialSecretId! });
    },

    /**
     * Stops provider access; identity and the credential reference stay for a reconnect, subscriptions
     * stay too. A transport change, so setup_revision moves; disconnecting twice changes nothing.
     */
    async disconnect(principal: Principal, path: IntegrationPath) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
        const row = requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId, "update"));
        if (row.state === "disconnected") return row;
        return store.updateIntegration(tx, path.orgId, row.id, { state: "disconnected" }, true);
      });
    },
  };
}

export type IntegrationSetupService = ReturnType<typeof createIntegrationSetupService>;

export interface IntegrationPath {
  orgId: string;
  projectId: string;
  integrationId: string;
}

interface Connection {
  identity: VerifiedIdentity;
  credentialSecretId: string;
  displayName?: string;
  providerConfig?: Record<string, unknown>;
}

/** The provider's answer, with a refusal turned into the spec's validation_failed issues. */
export async function verified(kind: IntegrationKind, material: Parameters<IntegrationKind["verify"]>[0], claim: IdentityClaim): Promise<VerifiedIdentity> {
  try {
    return await kind.verify(material, claim);
  } catch (err) {
    if (err instanceof CredentialRejected) throw invalid(err.issues, "the provider did not confirm the credential");
    throw err;
  }
}

/** A connected integration stays with its workspace and bot (reference docs: "Reconnecting cannot change the saved application or bot"). */
export function refuseIdentityChange(row: store.IntegrationRow, identity: { tenantId?: string | null; accountRef?: string | null }): void {
  const changed = (saved: string | null, next: string | null | undefined) => saved !== null && next != null && saved !== next;
  if (changed(row.providerTenantId, identity.tenantId) || changed(row.providerAccountRef, identity.accountRef)) {
    throw conflict(
      `this integration is connected to ${row.providerTenantId}/${row.providerAccountRef}; a credential of another provider account needs a new integration`,
    );
  }
}
