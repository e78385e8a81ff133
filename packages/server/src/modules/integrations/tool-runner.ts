import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { decodeId } from "../../platform/ids.js";
import type { IntegrationKinds } from "./kind.js";
import type { ToolArtifact, ToolContext } from "./kind.js";
import type { IntegrationToolResult, IntegrationToolRunner } from "../../runtime/tools/integration-tools.js";
import type { ArtifactsService } from "../artifacts/service.js";
import type { SecretMaterial } from "../secrets/schemas.js";
import type { SecretsService } from "../secrets/service.js";
import { clearRuntimeFailure, recordRuntimeFailure } from "./inbound-store.js";
import { announceIntegrationFailure } from "./failure-webhook.js";
import { findAssignment } from "./launch-store.js";
import * as store from "./store.js";

/** An outage with no Retry-After: the model is told to try again after this long. */
const OUTAGE_RETRY_SECONDS = 60;

/**
 * Runs integration tool calls for the worker (reference docs: integrations/overview, "Launch from provider
 * events"): the integration the config pinned, the conversation assigned to the agent at launch and the
 * credential loaded live, then the kind's executor. Every refusal is a tool error the agent can read: a
 * deleted or disconnected integration, no assignment (before any provider call), a provider outage (which
 * also sets the integration's runtime_failure, cleared by the next success).
 */
export function createIntegrationToolRunner(deps: {
  db: Database;
  kinds: IntegrationKinds;
  secrets: Pick<SecretsService, "resolvePayload">;
  artifacts: Pick<ArtifactsService, "findAgentArtifact" | "artifactBytes">;
}): IntegrationToolRunner {
  return {
    async run(agent, tool, input, signal, files): Promise<IntegrationToolResult> {
      const prepared = await deps.db.tx(async (tx): Promise<Prepared | { message: string }> => {
        const integration = await store.findIntegration(tx, agent.orgId, agent.projectId, tool.integrationId);
        if (!integration) return { message: `${tool.name} cannot run: the integration it names no longer exists. Tell the person you are working for.` };
        if (integration.state !== "active" || integration.credentialSecretId === null) {
          return { message: `${tool.name} cannot run: integration ${integration.name} is not connected.` };
        }
        const assignment = await findAssignment(tx, agent.id, integration.id);
        if (!assignment) return { message: `${tool.name} cannot run: this agent has no assigned conversation for ${integration.name}.` };
        const credential = await deps.secrets.resolvePayload(tx, integration.orgId, integration.projectId, integration.credentialSecretId);
        return { integration, conversation: assignment.conversation, credential };
      });
      if (!("integration" in prepared)) return { ok: false, message: prepared.message };
      const executor = deps.kinds.get(tool.kind)?.tools;
      if (!executor) return { ok: false, message: `${tool.name} cannot run in this deployment.` };
      const context: ToolContext = {
        conversation: prepared.conversation,
        credential: prepared.credential,
        settings: prepared.integration.settings,
        signal,
        ...(prepared.integration.providerAccountRef ? { accountRef: prepared.integration.providerAccountRef } : {}),
        artifact: (id) => artifactOf(deps, agent, id),
        file: files,
      };
      try {
        const answer = await executor.execute(tool.operation, input, context);
        await deps.db.tx((tx) => clearRuntimeFailure(tx, prepared.integration.id));
        return answer;
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== "rate_limited" && err.code !== "upstream_unavailable")) throw err;
        const seconds = err.details.retryAfterSeconds ?? OUTAGE_RETRY_SECONDS;
        await deps.db.tx(async (tx) => {
          await announceIntegrationFailure(tx, prepared.integration, err.message);
          await recordRuntimeFailure(tx, prepared.integration.id, err.message, seconds);
        });
        return { ok: false, message: `${tool.name} failed: ${err.message}. Try again in ${seconds} seconds or later.` };
      }
    },
  };
}

interface Prepared {
  integration: store.IntegrationRow;
  conversation: Record<string, unknown>;
  credential: SecretMaterial;
}

/** One of the agent's own artifacts (so one of its project's), with its bytes. */
async function artifactOf(deps: { artifacts: Pick<ArtifactsService, "findAgentArtifact" | "artifactBytes"> }, agent: { id: string; projectId: string }, publicId: string): Promise<ToolArtifact | { missing: string }> {
  const id = decodeId("artifact", publicId);
  const row = id === null ? null : await deps.artifacts.findAgentArtifact(agent.id, id);
  if (!row || row.projectId !== agent.projectId) return { missing: `${publicId} is not one of your artifacts` };
  return { filename: row.filename ?? publicId, contentType: row.contentType, bytes: await deps.artifacts.artifactBytes(row) };
}
