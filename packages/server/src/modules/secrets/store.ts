import { and, eq, inArray, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { secretGrants, secrets, secretVersions } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import type { AvailabilitySource, OwnerKind, SecretKind } from "./schemas.js";

type Db = AppDb | Tx;
export type SecretRow = typeof secrets.$inferSelect;
export type VersionRow = typeof secretVersions.$inferSelect;

import type { Owner, OwnerListScope as ListScope } from "../orgs/ownership.js";
export type { ListScope, Owner };

export interface SecretFilters {
  name?: string;
  kind?: SecretKind;
  ownerKind?: OwnerKind;
  metadata: Record<string, string>;
}

export type Page = PageRequest;

const secretSortColumns = { name: secrets.name, created_at: secrets.createdAt, updated_at: secrets.updatedAt, id: secrets.id };

export async function insertSecret(tx: Db, row: PgInsertValue<typeof secrets>): Promise<SecretRow> {
  const [secret] = await tx.insert(secrets).values(row).returning();
  return secret!;
}

export async function insertVersion(tx: Db, row: PgInsertValue<typeof secretVersions>): Promise<void> {
  await tx.insert(secretVersions).values(row);
}

export async function findSecret(tx: Db, orgId: string, secretId: string): Promise<SecretRow | undefined> {
  const [secret] = await tx.select().from(secrets).where(and(eq(secrets.orgId, orgId), eq(secrets.id, secretId)));
  return secret;
}

/** Locks the secret row: versions, renames, grants and deletion of one secret serialize here. */
export async function lockSecret(tx: Tx, orgId: string, secretId: string): Promise<SecretRow | undefined> {
  const [secret] = await tx
    .select()
    .from(secrets)
    .where(and(eq(secrets.orgId, orgId), eq(secrets.id, secretId)))
    .for("update");
  return secret;
}

export async function findSecretByOwnerName(tx: Db, orgId: string, owner: Owner, name: string): Promise<SecretRow | undefined> {
  const [secret] = await tx
    .select()
    .from(secrets)
    .where(
      and(
        eq(secrets.orgId, orgId),
        eq(secrets.ownerKind, owner.kind),
        owner.projectId === null ? isNull(secrets.ownerProjectId) : eq(secrets.ownerProjectId, owner.projectId),
        owner.userId === null ? isNull(secrets.ownerUserId) : eq(secrets.ownerUserId, owner.userId),
        eq(secrets.name, name),
      ),
    );
  return secret;
}

export async function updateSecret(
  tx: Db,
  orgId: string,
  secretId: string,
  changes: { name?: string; metadata?: Record<string, string>; currentVersionNumber?: number; payloadKeys?: string[] },
): Promise<SecretRow> {
  const [secret] = await tx
    .update(secrets)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(secrets.orgId, orgId), eq(secrets.id, secretId)))
    .returning();
  return secret!;
}

/** Deleting the row destroys its versions (ciphertext included) and its grants by cascade. */
export async function deleteSecret(tx: Db, orgId: string, secretId: string): Promise<void> {
  await tx.delete(secrets).where(and(eq(secrets.orgId, orgId), eq(secrets.id, secretId)));
}

/** The secrets `userId` owns, in every org or in one. */
export async function listUserSecrets(tx: Db, userId: string, orgId?: string): Promise<Array<{ id: string; orgId: string; name: string }>> {
  return tx
    .select({ id: secrets.id, orgId: secrets.orgId, name: secrets.name })
    .from(secrets)
    .where(allOf(eq(secrets.ownerKind, "user"), eq(secrets.ownerUserId, userId), orgId === undefined ? undefined : eq(secrets.orgId, orgId)));
}

export async function findVersion(tx: Db, secretId: string, versionNumber: number): Promise<VersionRow | undefined> {
  const [version] = await tx
    .select()
    .from(secretVersions)
    .where(and(eq(secretVersions.secretId, secretId), eq(secretVersions.versionNumber, versionNumber)));
  return version;
}

/** The projects that own at least one secret in the org. */
export async function ownerProjectIds(tx: Db, orgId: string): Promise<string[]> {
  const rows = await tx
    .selectDistinct({ projectId: secrets.ownerProjectId })
    .from(secrets)
    .where(and(eq(secrets.orgId, orgId), eq(secrets.ownerKind, "project")));
  return rows.map((r) => r.projectId!);
}

/** One page of the secrets owned inside `scope`, filtered, in keyset order. */
export async function listSecrets(
  tx: Db,
  input: { orgId: string; scope: ListScope; filters: SecretFilters; mcpOAuthFlowId?: string; page: Page },
): Promise<SecretRow[]> {
  const owners = scopeCondition(input.scope);
  if (!owners) return [];
  const ks = keyset(input.page.sort, secretSortColumns, input.page.cursor);
  const flow = input.mcpOAuthFlowId;
  return tx
    .select()
    .from(secrets)
    .where(
      allOf(
        eq(secrets.orgId, input.orgId),
        owners,
        ...filterConditions(input.filters),
        flow === undefined
          ? undefined
          : sql`EXISTS (SELECT 1 FROM ${secretVersions} WHERE ${secretVersions.secretId} = ${secrets.id} AND ${secretVersions.mcpOAuthFlowId} = ${flow})`,
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/**
 * Secrets a project can use: the ones it owns (direct) and the ones granted to it (with the grant).
 * A project never holds a grant on a secret it owns, so each secret appears once.
 */
export async function listProjectSecrets(
  tx: Db,
  input: { orgId: string; projectId: string; filters: SecretFilters; source?: AvailabilitySource; page: Page },
): Promise<Array<{ secret: SecretRow; grantId: string | null }>> {
  const ks = keyset(input.page.sort, secretSortColumns, input.page.cursor);
  const direct = and(eq(secrets.ownerKind, "project"), eq(secrets.ownerProjectId, input.projectId));
  const granted = isNotNull(secretGrants.id);
  const available = input.source === "direct" ? direct : input.source === "grant" ? granted : or(direct, granted);
  return tx
    .select({ secret: secrets, grantId: secretGrants.id })
    .from(secrets)
    .leftJoin(secretGrants, and(eq(secretGrants.secretId, secrets.id), eq(secretGrants.targetProjectId, input.projectId)))
    .where(allOf(eq(secrets.orgId, input.orgId), available, ...filterConditions(input.filters), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The secret if the project can use it, with the grant that makes it available (null when it owns it). */
export async function findProjectSecret(
  tx: Db,
  orgId: string,
  projectId: string,
  secretId: string,
): Promise<{ secret: SecretRow; grantId: string | null } | undefined> {
  const [row] = await tx
    .select({ secret: secrets, grantId: secretGrants.id })
    .from(secrets)
    .leftJoin(secretGrants, and(eq(secretGrants.secretId, secrets.id), eq(secretGrants.targetProjectId, projectId)))
    .where(
      and(
        eq(secrets.orgId, orgId),
        eq(secrets.id, secretId),
        or(and(eq(secrets.ownerKind, "project"), eq(secrets.ownerProjectId, projectId)), isNotNull(secretGrants.id)),
      ),
    );
  return row;
}

function scopeCondition(scope: ListScope): SQL | undefined {
  const parts: SQL[] = [];
  if (scope.org) parts.push(eq(secrets.ownerKind, "org"));
  if (scope.projects === "all") parts.push(eq(secrets.ownerKind, "project"));
  else if (scope.projects.length > 0) parts.push(and(eq(secrets.ownerKind, "project"), inArray(secrets.ownerProjectId, scope.projects))!);
  if (scope.userId !== null) parts.push(and(eq(secrets.ownerKind, "user"), eq(secrets.ownerUserId, scope.userId))!);
  return parts.length > 0 ? or(...parts) : undefined;
}

function filterConditions(filters: SecretFilters): Array<SQL | undefined> {
  const metadata = Object.keys(filters.metadata).length > 0 ? filters.metadata : undefined;
  return [
    nameMatches(secrets.name, filters.name),
    filters.kind === undefined ? undefined : eq(secrets.kind, filters.kind),
    filters.ownerKind === undefined ? undefined : eq(secrets.ownerKind, filters.ownerKind),
    // Containment of string pairs is exactly "metadata ->> key = value" for every pair.
    metadata === undefined ? undefined : sql`${secrets.metadata} @> ${JSON.stringify(metadata)}::jsonb`,
  ];
}
