import type { Tx } from "../../platform/db/index.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import type { ModelAuth } from "../../runtime/models/types.js";
import type { OrgCredentials } from "../secrets/org-credentials.js";
import * as grants from "./grants-store.js";
import { settingsOf } from "./providers-service.js";
import * as providers from "./providers-store.js";

/** Everything a model call needs to reach the provider, read at call time. */
export interface ModelEndpoint {
  baseUrl: string;
  endpointPath: string;
  auth: ModelAuth;
  credential: string;
  timeoutMs: number;
}

/**
 * The provider endpoint and credential for an agent's next model call, or a reason it cannot be made.
 * Grants are live policy: a model taken away from the project, or a provider config or credential
 * deleted, stops the next call (a terminal error the conversation shows) rather than the launch.
 */
export function createModelRunAccess(deps: { credentials: OrgCredentials }) {
  return {
    async endpointFor(tx: Tx, orgId: string, projectId: string, model: AgentDefinition["model"]): Promise<ModelEndpoint | { refused: string }> {
      const grant = await grants.findGrantOfModel(tx, projectId, model.configuredModelId);
      if (!grant) return { refused: `the model "${model.name}" is no longer granted to this project` };
      const provider = await providers.findProvider(tx, orgId, model.modelProviderConfigId);
      if (!provider) return { refused: `the model provider config "${model.providerConfigName}" no longer exists` };
      const settings = settingsOf(provider);
      let credential: string;
      try {
        const material = await deps.credentials.openOrgSecret(tx, orgId, provider.credentialSecretId);
        credential = material.kind === "generic" ? material.value : "";
      } catch {
        return { refused: "the model provider's credential secret cannot be read" };
      }
      return {
        baseUrl: settings.baseUrl,
        endpointPath: settings.endpointPath,
        auth: settings.authKind === "bearer_token" ? { kind: "bearer_token" } : { kind: "api_key_header", headerName: settings.authHeaderName! },
        credential,
        timeoutMs: settings.requestTimeoutMs,
      };
    },
  };
}

export type ModelRunAccess = ReturnType<typeof createModelRunAccess>;
