import { and, eq, sql } from "drizzle-orm";
import { integrationEventReceipts, integrations } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { IntegrationRow } from "./store.js";

type Db = AppDb | Tx;

/** The most integrations one provider identity is looked up for; more would let one tenant slow every callback. */
export const MAX_ROUTED_INTEGRATIONS = 50;

/**
 * The integrations of `kind` connected to one provider application (a Discord Application ID, a GitHub
 * App id), in every project: a provider callback names the application, and each candidate's own key or
 * secret decides whether the callback is authentic. Connected at least once (a credential is kept).
 */
export async function integrationsOfProvider(tx: Db, kind: string, tenantId: string): Promise<IntegrationRow[]> {
  return tx
    .select()
    .from(integrations)
    .where(and(eq(integrations.kind, kind), eq(integrations.providerTenantId, tenantId), sql`${integrations.credentialSecretId} IS NOT NULL`))
    .orderBy(integrations.id)
    .limit(MAX_ROUTED_INTEGRATIONS);
}

export interface NewReceipt {
  integrationId: string;
  providerEventId: string;
  eventKind: string;
  payload: unknown;
}

/** Stores an inbound event once per integration and provider event id; false when it was already stored. */
export async function insertReceipt(tx: Db, receipt: NewReceipt): Promise<boolean> {
  const inserted = await tx
    .insert(integrationEventReceipts)
    .values({ id: newUuid(), ...receipt })
    .onConflictDoNothing()
    .returning({ id: integrationEventReceipts.id });
  return inserted.length > 0;
}
