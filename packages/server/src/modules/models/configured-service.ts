import type { Database } from "../../platform/db/index.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { newUuid } from "../../platform/ids.js";
import { requireOrg } from "../orgs/access.js";
import { revisionForCreate, revisionForUpdate, sameRevision, type RevisionValues } from "./configured-rules.js";
import type { CacheRetention, CreateConfiguredModelRequest, UpdateConfiguredModelRequest } from "./configured-schemas.js";
import * as store from "./configured-store.js";
import * as grants from "./grants-store.js";
import type { ApiFormat } from "./providers-schemas.js";
import * as providers from "./providers-store.js";
import { storedPricing } from "./pricing.js";

/**
 * Configured models: named models of a provider config with their capabilities. Each change to the
 * runtime settings adds an immutable revision and makes it current, so an agent can keep calling the
 * revision it launched with. Writes need org.manage, reads org.read.
 */
export function createConfiguredModelService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async listConfiguredModels(principal: Principal, orgId: string, providerId: string, page: providers.Page) {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId);
        if (!(await providers.findProvider(tx, orgId, providerId))) throw notFound("model provider config");
        return store.listModels(tx, { orgId, providerId, page });
      });
    },

    async createConfiguredModel(
      principal: Principal,
      orgId: string,
      providerId: string,
      input: CreateConfiguredModelRequest,
    ): Promise<store.ModelWithRevision> {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const provider = await providers.lockProvider(tx, orgId, providerId, "share");
          if (!provider) throw notFound("model provider config");
          const values = revisionForCreate(provider.apiFormat as ApiFormat, input);
          if (await store.findModelByName(tx, providerId, input.name)) throw nameTaken(input.name);
          const modelId = newUuid();
          // The model and its first revision point at each other: the model row comes first, without one.
          // The revision shares the model's creation time, so a new model shows one instant everywhere.
          const inserted = await store.insertModel(tx, { id: modelId, orgId, modelProviderConfigId: providerId, name: input.name });
          const revision = await store.insertRevision(tx, {
            id: newUuid(),
            orgId,
            configuredModelId: modelId,
            ...values,
            createdAt: inserted.createdAt,
          });
          const model = await store.setFirstRevision(tx, orgId, modelId, revision.id);
          return { model, revision };
        }),
      );
    },

    /** A rename alone renames; any runtime change adds a revision. Nothing changed, nothing written. */
    async updateConfiguredModel(
      principal: Principal,
      orgId: string,
      providerId: string,
      modelId: string,
      patch: UpdateConfiguredModelRequest,
    ): Promise<store.ModelWithRevision> {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const current = await store.findModel(tx, orgId, providerId, modelId, "update");
          if (!current) throw notFound("configured model");
          if (current.model.managementKind !== "tenant") throw conflict("this configured model is managed by the operator and cannot be changed");
          const provider = await providers.findProvider(tx, orgId, providerId);
          const values = revisionForUpdate(provider!.apiFormat as ApiFormat, valuesOf(current.revision), patch);
          const rename = patch.name !== undefined && patch.name !== current.model.name ? patch.name : undefined;
          const changed = !sameRevision(values, valuesOf(current.revision));
          if (!rename && !changed) return current;
          if (rename && (await store.findModelByName(tx, providerId, rename))) throw nameTaken(rename);
          const revision = changed ? await store.insertRevision(tx, { id: newUuid(), orgId, configuredModelId: modelId, ...values }) : current.revision;
          const model = await store.updateModel(tx, orgId, modelId, {
            ...(changed ? { currentRevisionId: revision.id } : {}),
            ...(rename ? { name: rename } : {}),
          });
          return { model, revision };
        }),
      );
    },

    /** Refused (409) while any project holds a grant on the model, or when the operator manages it. */
    async deleteConfiguredModel(principal: Principal, orgId: string, providerId: string, modelId: string): Promise<void> {
      await withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const current = await store.findModel(tx, orgId, providerId, modelId, "update");
          if (!current) throw notFound("configured model");
          if (current.model.managementKind !== "tenant") throw conflict("this configured model is managed by the operator and cannot be deleted");
          if (await grants.hasGrants(tx, orgId, modelId)) throw conflict("projects still hold grants on this configured model; revoke them first");
          await store.deleteModel(tx, orgId, modelId);
        }),
      );
    },
  };
}

export type ConfiguredModelService = ReturnType<typeof createConfiguredModelService>;

export function valuesOf(revision: store.RevisionRow): RevisionValues {
  return {
    providerModelSlug: revision.providerModelSlug,
    contextWindowTokens: revision.contextWindowTokens,
    maxOutputTokens: revision.maxOutputTokens,
    defaultMaxOutputTokens: revision.defaultMaxOutputTokens,
    defaultCacheRetention: revision.defaultCacheRetention as CacheRetention,
    supportsTools: revision.supportsTools,
    supportsReasoning: revision.supportsReasoning,
    defaultReasoningEffort: revision.defaultReasoningEffort,
    supportedReasoningEfforts: revision.supportedReasoningEfforts,
    inputModalities: revision.inputModalities,
    outputModalities: revision.outputModalities,
    apiVariantOptions: revision.apiVariantOptions,
    ...storedPricing(revision),
  };
}

function nameTaken(name: string) {
  return conflict(`a configured model named "${name}" already exists under this provider config`);
}

async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "configured_models_provider_name")) throw conflict("a configured model with this name already exists");
    if (isForeignKeyViolation(err)) throw conflict("the configured model or its provider config changed meanwhile; try again");
    throw err;
  }
}
