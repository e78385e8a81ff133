import type { Database, Tx } from "../../platform/db/index.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { newUuid } from "../../platform/ids.js";
import { assertConfiguredDestination, OutboundRefusedError, type OutboundPolicy } from "../../platform/net/outbound.js";
import { requireOrg } from "../orgs/access.js";
import type { OrgCredentials } from "../secrets/org-credentials.js";
import { fetchModelCatalog, type ModelCatalog } from "./catalog.js";
import * as configured from "./configured-store.js";
import { invalidField } from "./issues.js";
import { normalizeBaseUrl, sameSettings, settingsForCreate, settingsForUpdate, type ProviderSettings } from "./providers-rules.js";
import type { ApiFormat, ApiVariant, AuthKind, CreateModelProviderConfigRequest, UpdateModelProviderConfigRequest } from "./providers-schemas.js";
import * as store from "./providers-store.js";

export interface ProviderDeps {
  db: Database;
  credentials: OrgCredentials;
  outbound: OutboundPolicy;
}

/**
 * Model provider configs: where the organization's models are served and with which credential. Writes
 * need org.manage, reads org.read. The provider is called (catalog) only after the transaction that read
 * the config and its credential has ended.
 */
export function createProviderService(deps: ProviderDeps) {
  const { db, credentials, outbound } = deps;

  /** The credential's value, for a call made after the transaction. */
  async function credentialValue(tx: Tx, orgId: string, secretId: string): Promise<string> {
    const material = await credentials.openOrgSecret(tx, orgId, secretId);
    return material.kind === "generic" ? material.value : "";
  }

  /**
   * A base_url the SSRF guard would refuse at every model call is refused where it is given, before any
   * transaction (it may resolve a name): a 400 naming SVC_ALLOW_PRIVATE_NETWORK, not minutes of retries later.
   */
  async function requireReachableBaseUrl(baseUrl: string): Promise<void> {
    try {
      await assertConfiguredDestination(baseUrl, outbound);
    } catch (err) {
      if (err instanceof OutboundRefusedError) throw invalidField("/base_url", err.message);
      throw err;
    }
  }

  /** A credential must be an org-owned generic secret of this org (tenant- or operator-managed). */
  async function requireCredential(tx: Tx, orgId: string, secretId: string): Promise<void> {
    const facts = await credentials.describe(tx, orgId, secretId);
    if (!facts) throw notFound("credential secret");
    if (facts.ownerKind !== "org") {
      throw invalidField("/credential_secret_id", "must be an org-owned secret; project and user secrets cannot serve the whole organization");
    }
    if (facts.kind !== "generic") throw invalidField("/credential_secret_id", `must be a secret of kind generic (its value is the API key), not ${facts.kind}`);
  }

  return {
    async listProviderConfigs(principal: Principal, orgId: string, query: { name?: string; page: store.Page }) {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId);
        return store.listProviders(tx, { orgId, name: query.name, page: query.page });
      });
    },

    /** Creates the config, then probes the provider's model list; a failed probe does not fail creation. */
    async createProviderConfig(
      principal: Principal,
      orgId: string,
      input: CreateModelProviderConfigRequest & { credentialSecretId: string },
    ): Promise<{ config: store.ProviderRow; catalog: ModelCatalog }> {
      const settings = settingsForCreate(input);
      await requireReachableBaseUrl(settings.baseUrl);
      const { config, credential } = await withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          await requireCredential(tx, orgId, input.credentialSecretId);
          if (await store.findProviderByName(tx, orgId, input.name)) throw nameTaken(input.name);
          const config = await store.insertProvider(tx, {
            id: newUuid(),
            orgId,
            name: input.name,
            ...settings,
            credentialSecretId: input.credentialSecretId,
          });
          return { config, credential: await credentialValue(tx, orgId, input.credentialSecretId) };
        }),
      );
      return { config, catalog: await fetchModelCatalog(settings, credential, outbound) };
    },

    async getProviderConfig(principal: Principal, orgId: string, providerId: string): Promise<store.ProviderRow> {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId);
        const config = await store.findProvider(tx, orgId, providerId);
        if (!config) throw notFound("model provider config");
        return config;
      });
    },

    /** Applies a partial update; the format, variant and name stay. An update that changes nothing writes nothing. */
    async updateProviderConfig(
      principal: Principal,
      orgId: string,
      providerId: string,
      patch: UpdateModelProviderConfigRequest & { credentialSecretId?: string },
    ): Promise<store.ProviderRow> {
      if (patch.base_url !== undefined) await requireReachableBaseUrl(normalizeBaseUrl(patch.base_url));
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const current = await store.lockProvider(tx, orgId, providerId, "update");
          if (!current) throw notFound("model provider config");
          if (current.managementKind !== "tenant") throw conflict("this model provider config is managed by the operator and cannot be changed");
          const next = settingsForUpdate(settingsOf(current), patch);
          const secretId = patch.credentialSecretId ?? current.credentialSecretId;
          if (secretId !== current.credentialSecretId) await requireCredential(tx, orgId, secretId);
          if (sameSettings(next, settingsOf(current)) && secretId === current.credentialSecretId) return current;
          const { baseUrl, endpointPath, requestTimeoutMs, authKind, authHeaderName } = next;
          return store.updateProvider(tx, orgId, providerId, {
            baseUrl,
            endpointPath,
            requestTimeoutMs,
            authKind,
            authHeaderName,
            credentialSecretId: secretId,
          });
        }),
      );
    },

    /** Refused (409) while configured models exist under the config, or when the operator manages it. */
    async deleteProviderConfig(principal: Principal, orgId: string, providerId: string): Promise<void> {
      await withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const current = await store.lockProvider(tx, orgId, providerId, "update");
          if (!current) throw notFound("model provider config");
          if (current.managementKind !== "tenant") throw conflict("this model provider config is managed by the operator and cannot be deleted");
          if (await configured.hasModels(tx, orgId, providerId)) {
            throw conflict("the model provider config still has configured models; delete them first");
          }
          await store.deleteProvider(tx, orgId, providerId);
        }),
      );
    },

    /** The provider's live model list, fetched with the config's credential after the reading transaction. */
    async getModelCatalog(principal: Principal, orgId: string, providerId: string): Promise<ModelCatalog> {
      const { settings, credential } = await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId);
        const config = await store.findProvider(tx, orgId, providerId);
        if (!config) throw notFound("model provider config");
        return { settings: settingsOf(config), credential: await credentialValue(tx, orgId, config.credentialSecretId) };
      });
      return fetchModelCatalog(settings, credential, outbound);
    },
  };
}

export type ProviderService = ReturnType<typeof createProviderService>;

export function settingsOf(row: store.ProviderRow): ProviderSettings {
  return {
    apiFormat: row.apiFormat as ApiFormat,
    apiVariant: row.apiVariant as ApiVariant,
    baseUrl: row.baseUrl,
    endpointPath: row.endpointPath,
    requestTimeoutMs: row.requestTimeoutMs,
    authKind: row.authKind as AuthKind,
    authHeaderName: row.authHeaderName,
  };
}

function nameTaken(name: string) {
  return conflict(`a model provider config named "${name}" already exists in this organization`);
}

/**
 * What the in-transaction checks cannot see: a concurrent twin name (unique index) is a 409; a credential
 * deleted meanwhile, or a model added under a config being deleted (foreign keys), a 404 or 409.
 */
async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "model_provider_configs_org_name")) throw conflict("a model provider config with this name already exists");
    if (isForeignKeyViolation(err)) throw conflict("the model provider config or its credential changed meanwhile; try again");
    throw err;
  }
}
