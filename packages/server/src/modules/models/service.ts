import type { Database } from "../../platform/db/index.js";
import type { OutboundPolicy } from "../../platform/net/outbound.js";
import type { OrgCredentials } from "../secrets/org-credentials.js";
import { createConfiguredModelService } from "./configured-service.js";
import { createModelGrantService } from "./grants-service.js";
import { createProviderService } from "./providers-service.js";

/** The models area: provider configs, configured models with their revisions, and project grants. */
export function createModelsService(deps: { db: Database; credentials: OrgCredentials; outbound: OutboundPolicy }) {
  return {
    ...createProviderService(deps),
    ...createConfiguredModelService({ db: deps.db }),
    ...createModelGrantService({ db: deps.db }),
  };
}

export type ModelsService = ReturnType<typeof createModelsService>;
