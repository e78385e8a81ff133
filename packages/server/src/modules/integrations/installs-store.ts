import { and, eq, sql, type SQL } from "drizzle-orm";
import { integrations } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import type { IntegrationRow } from "./store.js";

const i = integrations;
const profiles = sql`${i.settings}->'launcher'->'profiles'`;
/** The list's logical name is provider_agent_display_name (reference: listIntegrationInstalls). */
const sortColumns = { name: i.providerAgentDisplayName, created_at: i.createdAt, updated_at: i.updatedAt, id: i.id };

/**
 * What makes an integration an install (reference: IntegrationInstall): a Slack integration the provider
 * has confirmed an identity for, whose launcher offers at least one profile.
 */
function isInstall(orgId: string, projectId: string): SQL | undefined {
  return allOf(
    eq(i.orgId, orgId),
    eq(i.projectId, projectId),
    eq(i.kind, "slack_thread"),
    sql`${i.providerTenantId} IS NOT NULL`,
    sql`${i.providerAccountRef} IS NOT NULL`,
    sql`jsonb_typeof(${profiles}) = 'array'`,
    sql`${profiles} <> '[]'::jsonb`,
  );
}

export interface InstallFilter {
  name?: string;
  /** A public `aprf_` id, as launcher settings hold it. */
  profile?: string;
  /** null: a well-formed flow id that can name no flow (all zero bytes), so nothing matches. */
  oauthFlowId?: string | null;
}

/** One page of the project's installs in keyset order (`limit + 1` rows). */
export async function listInstalls(tx: Tx, orgId: string, projectId: string, filter: InstallFilter, page: PageRequest): Promise<IntegrationRow[]> {
  const ks = keyset(page.sort, sortColumns, page.cursor);
  return tx
    .select()
    .from(i)
    .where(
      allOf(
        isInstall(orgId, projectId),
        filter.profile !== undefined ? sql`${profiles} @> jsonb_build_array(${filter.profile}::text)` : undefined,
        filter.oauthFlowId === undefined ? undefined : filter.oauthFlowId === null ? sql`false` : eq(i.lastOAuthFlowId, filter.oauthFlowId),
        nameMatches(i.providerAgentDisplayName, filter.name),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

/** The install with this integration id, locked for its removal; undefined when the integration is not one. */
export async function findInstall(tx: Tx, orgId: string, projectId: string, integrationId: string): Promise<IntegrationRow | undefined> {
  const [row] = await tx
    .select()
    .from(i)
    .where(and(isInstall(orgId, projectId), eq(i.id, integrationId)))
    .for("update");
  return row;
}
