import type { Tx } from "../../platform/db/index.js";
import type { RevisionValues } from "./configured-rules.js";
import { valuesOf } from "./configured-service.js";
import { and, eq, sql } from "drizzle-orm";
import { builtOnce } from "../../platform/db/prepared.js";
import { configuredModelRevisions, configuredModels, modelProviderConfigs, projectModelGrants } from "../../db/schema/index.js";
import type * as models from "./configured-store.js";
import { effectiveModel } from "./grants-rules.js";
import { overridesOf } from "./grants-service.js";
import type * as providers from "./providers-store.js";

// One statement: the provider by name, its model by name with the current revision, and the grant.
const modelByNames = builtOnce((db) =>
  db
    .select({ provider: modelProviderConfigs, model: configuredModels, revision: configuredModelRevisions, grant: projectModelGrants })
    .from(modelProviderConfigs)
    .leftJoin(configuredModels, and(eq(configuredModels.modelProviderConfigId, modelProviderConfigs.id), eq(configuredModels.name, sql.placeholder("modelName"))))
    .leftJoin(configuredModelRevisions, eq(configuredModelRevisions.id, configuredModels.currentRevisionId))
    .leftJoin(projectModelGrants, and(eq(projectModelGrants.projectId, sql.placeholder("projectId")), eq(projectModelGrants.configuredModelId, configuredModels.id)))
    .where(and(eq(modelProviderConfigs.orgId, sql.placeholder("orgId")), eq(modelProviderConfigs.name, sql.placeholder("providerName"))))
    .prepare("svc_project_model_by_names"),
);

/** How far a lookup by names got: each step names what was found, so the caller can say what is missing. */
export type ProjectModelLookup =
  | { found: "nothing" }
  | { found: "provider"; provider: providers.ProviderRow }
  | { found: "model"; provider: providers.ProviderRow; model: models.ModelRow }
  | {
      found: "granted";
      provider: providers.ProviderRow;
      model: models.ModelRow;
      revision: models.RevisionRow;
      /** The current revision narrowed by the project's grant. */
      effective: RevisionValues;
    };

/**
 * For agent configs, which name a model by its provider config's name and its own: the model and the
 * limits that hold for it in the project. Reads inside the caller's transaction; never opens one.
 */
export async function findProjectModel(
  tx: Tx,
  orgId: string,
  projectId: string,
  providerName: string,
  modelName: string,
): Promise<ProjectModelLookup> {
  const [row] = await modelByNames(tx).execute({ orgId, projectId, providerName, modelName });
  if (!row) return { found: "nothing" };
  const { provider, model, revision, grant } = row;
  if (!model || !revision) return { found: "provider", provider };
  if (!grant) return { found: "model", provider, model };
  return { found: "granted", provider, model, revision, effective: effectiveModel(valuesOf(revision), overridesOf(grant)) };
}
