import { and, eq, inArray, isNotNull, isNull, or, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { skillGrants, skillRevisions, skills } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import type { AvailabilitySource, OwnerKind } from "./schemas.js";

type Db = AppDb | Tx;
export type SkillRow = typeof skills.$inferSelect;
export type RevisionRow = typeof skillRevisions.$inferSelect;

import type { Owner, OwnerListScope as ListScope } from "../orgs/ownership.js";
export type { ListScope, Owner };

export interface SkillFilters {
  name?: string;
  ownerKind?: OwnerKind;
}

const sortColumns = { name: skills.name, created_at: skills.createdAt, updated_at: skills.updatedAt, id: skills.id };

export async function insertSkill(tx: Db, row: PgInsertValue<typeof skills>): Promise<SkillRow> {
  const [skill] = await tx.insert(skills).values(row).returning();
  return skill!;
}

export async function insertRevision(tx: Db, row: PgInsertValue<typeof skillRevisions>): Promise<RevisionRow> {
  const [revision] = await tx.insert(skillRevisions).values(row).returning();
  return revision!;
}

export async function findSkill(tx: Db, orgId: string, skillId: string): Promise<SkillRow | undefined> {
  const [skill] = await tx.select().from(skills).where(and(eq(skills.orgId, orgId), eq(skills.id, skillId)));
  return skill;
}

/** Locks the skill row: revisions, grants and deletion of one skill serialize here. */
export async function lockSkill(tx: Tx, orgId: string, skillId: string): Promise<SkillRow | undefined> {
  const [skill] = await tx
    .select()
    .from(skills)
    .where(and(eq(skills.orgId, orgId), eq(skills.id, skillId)))
    .for("update");
  return skill;
}

/** The owner's skill of this name, locked, so that two uploads of one name make consecutive revisions. */
export async function lockSkillByOwnerName(tx: Tx, orgId: string, owner: Owner, name: string): Promise<SkillRow | undefined> {
  const [skill] = await tx
    .select()
    .from(skills)
    .where(
      and(
        eq(skills.orgId, orgId),
        eq(skills.ownerKind, owner.kind),
        owner.projectId === null ? isNull(skills.ownerProjectId) : eq(skills.ownerProjectId, owner.projectId),
        owner.userId === null ? isNull(skills.ownerUserId) : eq(skills.ownerUserId, owner.userId),
        eq(skills.name, name),
      ),
    )
    .for("update");
  return skill;
}

export async function setCurrentRevision(tx: Db, skillId: string, revision: RevisionRow): Promise<SkillRow> {
  const [skill] = await tx
    .update(skills)
    .set({ currentRevisionId: revision.id, currentRevision: revision.revision, description: revision.description, updatedAt: dbNow })
    .where(eq(skills.id, skillId))
    .returning();
  return skill!;
}

/** Deleting the row removes its revisions and grants by cascade; their archives are the caller's to remove. */
export async function deleteSkill(tx: Db, orgId: string, skillId: string): Promise<void> {
  await tx.delete(skills).where(and(eq(skills.orgId, orgId), eq(skills.id, skillId)));
}

/** The skills `userId` owns, in every org, with the archive keys of their revisions. */
export async function listUserSkills(tx: Db, userId: string): Promise<Array<{ id: string; orgId: string; name: string; archiveKey: string }>> {
  return tx
    .select({ id: skills.id, orgId: skills.orgId, name: skills.name, archiveKey: skillRevisions.archiveKey })
    .from(skills)
    .innerJoin(skillRevisions, eq(skillRevisions.skillId, skills.id))
    .where(and(eq(skills.ownerKind, "user"), eq(skills.ownerUserId, userId)));
}

export async function findRevision(tx: Db, revisionId: string): Promise<RevisionRow | undefined> {
  const [revision] = await tx.select().from(skillRevisions).where(eq(skillRevisions.id, revisionId));
  return revision;
}

export async function archiveKeysOf(tx: Db, skillId: string): Promise<string[]> {
  const rows = await tx.select({ key: skillRevisions.archiveKey }).from(skillRevisions).where(eq(skillRevisions.skillId, skillId));
  return rows.map((r) => r.key);
}

/** The archive keys still referenced among the revisions `ids`, looked up by primary key. */
export async function archiveKeysAmong(tx: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.select({ key: skillRevisions.archiveKey }).from(skillRevisions).where(inArray(skillRevisions.id, ids));
  return new Set(rows.map((r) => r.key));
}

/** The projects that own at least one skill in the org. */
export async function ownerProjectIds(tx: Db, orgId: string): Promise<string[]> {
  const rows = await tx
    .selectDistinct({ projectId: skills.ownerProjectId })
    .from(skills)
    .where(and(eq(skills.orgId, orgId), eq(skills.ownerKind, "project")));
  return rows.map((r) => r.projectId!);
}

/** One page of the skills owned inside `scope`, filtered, in keyset order. */
export async function listSkills(tx: Db, input: { orgId: string; scope: ListScope; filters: SkillFilters; page: PageRequest }): Promise<SkillRow[]> {
  const owners = scopeCondition(input.scope);
  if (!owners) return [];
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(skills)
    .where(allOf(eq(skills.orgId, input.orgId), owners, ...filterConditions(input.filters), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/**
 * Skills a project can use: the ones it owns (direct) and the ones granted to it (with the grant). A
 * project never holds a grant on a skill it owns, so each skill appears once.
 */
export async function listProjectSkills(
  tx: Db,
  input: { orgId: string; projectId: string; filters: SkillFilters; source?: AvailabilitySource; page: PageRequest },
): Promise<Array<{ skill: SkillRow; grantId: string | null }>> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  const direct = and(eq(skills.ownerKind, "project"), eq(skills.ownerProjectId, input.projectId));
  const granted = isNotNull(skillGrants.id);
  const available = input.source === "direct" ? direct : input.source === "grant" ? granted : or(direct, granted);
  return tx
    .select({ skill: skills, grantId: skillGrants.id })
    .from(skills)
    .leftJoin(skillGrants, and(eq(skillGrants.skillId, skills.id), eq(skillGrants.targetProjectId, input.projectId)))
    .where(allOf(eq(skills.orgId, input.orgId), available, ...filterConditions(input.filters), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The skills among `skillIds` the project can use (owned or granted), for compiling a config. */
export async function findProjectSkills(tx: Db, orgId: string, projectId: string, skillIds: string[]): Promise<SkillRow[]> {
  if (skillIds.length === 0) return [];
  const rows = await tx
    .select({ skill: skills })
    .from(skills)
    .leftJoin(skillGrants, and(eq(skillGrants.skillId, skills.id), eq(skillGrants.targetProjectId, projectId)))
    .where(
      and(
        eq(skills.orgId, orgId),
        inArray(skills.id, skillIds),
        or(and(eq(skills.ownerKind, "project"), eq(skills.ownerProjectId, projectId)), isNotNull(skillGrants.id)),
      ),
    );
  return rows.map((r) => r.skill);
}

function scopeCondition(scope: ListScope): SQL | undefined {
  const parts: SQL[] = [];
  if (scope.org) parts.push(eq(skills.ownerKind, "org"));
  if (scope.projects === "all") parts.push(eq(skills.ownerKind, "project"));
  else if (scope.projects.length > 0) parts.push(and(eq(skills.ownerKind, "project"), inArray(skills.ownerProjectId, scope.projects))!);
  if (scope.userId !== null) parts.push(and(eq(skills.ownerKind, "user"), eq(skills.ownerUserId, scope.userId))!);
  return parts.length > 0 ? or(...parts) : undefined;
}

function filterConditions(filters: SkillFilters): Array<SQL | undefined> {
  return [nameMatches(skills.name, filters.name), filters.ownerKind === undefined ? undefined : eq(skills.ownerKind, filters.ownerKind)];
}
