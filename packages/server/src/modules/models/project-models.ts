import type { Tx } from "../../platform/db/index.js";
import type { RevisionValues } from "./configured-rules.js";
import { valuesOf } from "./configured-service.js";
import * as models from "./configured-store.js";
import { effectiveModel } from "./grants-rules.js";
import { overridesOf } from "./grants-service.js";
import * as grants from "./grants-store.js";
import * as providers from "./providers-store.js";

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
  const provider = await providers.findProviderByName(tx, orgId, providerName);
  if (!provider) return { found: "nothing" };
  const named = await models.findModelByName(tx, provider.id, modelName);
  const current = named && (await models.findModel(tx, orgId, provider.id, named.id));
  if (!current) return { found: "provider", provider };
  const grant = await grants.findGrantOfModel(tx, projectId, current.model.id);
  if (!grant) return { found: "model", provider, model: current.model };
  return {
    found: "granted",
    provider,
    model: current.model,
    revision: current.revision,
    effective: effectiveModel(valuesOf(current.revision), overridesOf(grant)),
  };
}
