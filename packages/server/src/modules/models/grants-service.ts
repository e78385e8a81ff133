import type { Database, Tx } from "../../platform/db/index.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { newUuid } from "../../platform/ids.js";
import { requireProject } from "../orgs/access.js";
import { valuesOf } from "./configured-service.js";
import * as models from "./configured-store.js";
import { checkOverrides, overridesForCreate, overridesForUpdate, sameOverrides, type GrantOverrides } from "./grants-rules.js";
import type { CreateProjectModelGrantRequest, UpdateProjectModelGrantRequest } from "./grants-schemas.js";
import * as store from "./grants-store.js";
import type { CacheRetention } from "./configured-schemas.js";
import type { Page } from "./providers-store.js";

/**
 * Project model grants: which configured models a project may use, with optional narrower limits.
 * Managing them needs project.access_manage on the project; listing them, project.read. Overrides are
 * checked against the model's current revision when they are written.
 */
export function createModelGrantService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async listModelGrants(principal: Principal, orgId: string, projectId: string, query: { name?: string; page: Page }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId);
        return store.listGrants(tx, { orgId, projectId, name: query.name, page: query.page });
      });
    },

    async createModelGrant(
      principal: Principal,
      orgId: string,
      projectId: string,
      input: CreateProjectModelGrantRequest & { configuredModelId: string },
    ): Promise<store.GrantRow> {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireProject(tx, principal, orgId, projectId, "project.access_manage");
          const model = await models.findModelForGrant(tx, orgId, input.configuredModelId);
          if (!model) throw notFound("configured model");
          const overrides = overridesForCreate(input);
          checkOverrides(valuesOf(model.revision), overrides);
          if (await store.findGrantOfModel(tx, projectId, input.configuredModelId)) throw alreadyGranted();
          return store.insertGrant(tx, { id: newUuid(), orgId, projectId, configuredModelId: input.configuredModelId, ...overrides });
        }),
      );
    },

    async updateModelGrant(
      principal: Principal,
      orgId: string,
      projectId: string,
      grantId: string,
      patch: UpdateProjectModelGrantRequest,
    ): Promise<store.GrantRow> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const grant = await store.lockGrant(tx, orgId, projectId, grantId);
        if (!grant) throw notFound("model grant");
        const model = await models.findModelForGrant(tx, orgId, grant.configuredModelId);
        const current = overridesOf(grant);
        const next = overridesForUpdate(current, patch);
        checkOverrides(valuesOf(model!.revision), next);
        if (sameOverrides(current, next)) return grant;
        return store.updateGrant(tx, orgId, grantId, next);
      });
    },

    /** Revokes the project's access; the model stays. */
    async deleteModelGrant(principal: Principal, orgId: string, projectId: string, grantId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const grant = await store.lockGrant(tx, orgId, projectId, grantId);
        if (!grant) throw notFound("model grant");
        await store.deleteGrant(tx, orgId, grantId);
      });
    },
  };
}

export type ModelGrantService = ReturnType<typeof createModelGrantService>;

export function overridesOf(grant: store.GrantRow): GrantOverrides {
  return {
    contextWindowTokens: grant.contextWindowTokens,
    maxOutputTokens: grant.maxOutputTokens,
    defaultMaxOutputTokens: grant.defaultMaxOutputTokens,
    defaultCacheRetention: grant.defaultCacheRetention as CacheRetention | null,
    supportsTools: grant.supportsTools,
    supportsReasoning: grant.supportsReasoning,
    defaultReasoningEffort: grant.defaultReasoningEffort,
    supportedReasoningEfforts: grant.supportedReasoningEfforts,
    inputModalities: grant.inputModalities,
    outputModalities: grant.outputModalities,
  };
}

function alreadyGranted() {
  return conflict("the project already has a grant on this configured model");
}

/** A concurrent twin grant is a 409; a model deleted meanwhile, a 404. */
async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "project_model_grants_project_model")) throw alreadyGranted();
    if (isForeignKeyViolation(err)) throw notFound("configured model or project");
    throw err;
  }
}

/**
 * Whether a project may use the model a compiled config names (grants are live policy: run-access.ts
 * checks the same at each model call). For work started without a person, such as a cron firing, which
 * must not queue an input no model call could answer.
 */
export async function isModelGranted(tx: Tx, projectId: string, model: AgentDefinition["model"]): Promise<boolean> {
  return (await store.findGrantOfModel(tx, projectId, model.configuredModelId)) !== undefined;
}
