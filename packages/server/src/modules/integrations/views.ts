import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { KindCatalog } from "./capability-schemas.js";
import type { IntegrationRow } from "./store.js";

/**
 * An Integration exactly as the spec lists its members: optional ones are left out while unset, and
 * runtime_failure appears only when asked for (Get integration alone shows it).
 */
export function integrationView(row: IntegrationRow, catalog: KindCatalog, options: { runtimeFailure?: boolean } = {}) {
  return {
    id: encodeId("integration", row.id),
    project_id: encodeId("project", row.projectId),
    name: row.name,
    integration_kind: row.kind as "slack_thread",
    state: row.state as "active" | "disconnected",
    setup_revision: row.setupRevision,
    ...(row.lastOAuthFlowId ? { last_oauth_flow_id: encodeId("integrationOAuthFlow", row.lastOAuthFlowId) } : {}),
    ...(options.runtimeFailure && row.runtimeFailureMessage !== null && row.runtimeFailureRetryAt !== null
      ? { runtime_failure: { message: row.runtimeFailureMessage, retry_at: iso(row.runtimeFailureRetryAt) } }
      : {}),
    settings: row.settings,
    ...(row.providerTenantId !== null ? { provider_tenant_id: row.providerTenantId } : {}),
    ...(row.providerAccountRef !== null ? { provider_account_ref: row.providerAccountRef } : {}),
    provider_agent_display_name: row.providerAgentDisplayName,
    ...(row.botMention !== null ? { bot_mention: row.botMention } : {}),
    ...(row.credentialSecretId !== null ? { credential_secret_id: encodeId("secret", row.credentialSecretId) } : {}),
    provider_config: row.providerConfig,
    capabilities: catalog.catalog(row.kind)!.capabilities,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}
