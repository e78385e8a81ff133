import { sql } from "drizzle-orm";
import { check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, updatedAt } from "./columns.js";
import { users } from "./identity.js";
import { orgMemberships, orgs, projects } from "./orgs.js";

/** One file of a skill revision's archive, relative to the skill's folder. */
export interface SkillFileEntry {
  path: string;
  size: number;
}

/**
 * A skill: a named package of instructions owned like a secret (org, project or user). The row carries the
 * current revision's number, id and description so lists need no join; the revisions hold the rest.
 */
export const skills = pgTable(
  "skills",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    ownerKind: text("owner_kind").notNull(),
    ownerProjectId: uuid("owner_project_id"),
    ownerUserId: uuid("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // No foreign key: the revision is written after the skill in the same transaction, and revisions go
    // only with their skill (cascade), so the pointer cannot dangle.
    currentRevisionId: uuid("current_revision_id").notNull(),
    currentRevision: integer("current_revision").notNull(),
    description: text("description").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("skills_org_id_id").on(t.orgId, t.id),
    unique("skills_owner_name").on(t.orgId, t.ownerKind, t.ownerProjectId, t.ownerUserId, t.name).nullsNotDistinct(),
    foreignKey({ columns: [t.orgId, t.ownerProjectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    // A user's skills in an org live as long as their membership, as their secrets do.
    foreignKey({
      name: "skills_owner_membership_fk",
      columns: [t.orgId, t.ownerUserId],
      foreignColumns: [orgMemberships.orgId, orgMemberships.userId],
    }).onDelete("cascade"),
    check(
      "skills_owner_shape",
      sql`(${t.ownerKind} = 'org' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'project' AND ${t.ownerProjectId} IS NOT NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'user' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NOT NULL)`,
    ),
    check("skills_current_revision_positive", sql`${t.currentRevision} > 0`),
    index("skills_org_created_idx").on(t.orgId, t.createdAt, t.id),
  ],
);

/**
 * Every upload of a skill, numbered from 1. The archive itself is in the blob store under `archive_key`;
 * SKILL.md and the file list are kept here, so reading a skill never touches the blob store.
 */
export const skillRevisions = pgTable(
  "skill_revisions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    skillId: uuid("skill_id").notNull(),
    revision: integer("revision").notNull(),
    description: text("description").notNull(),
    skillMd: text("skill_md").notNull(),
    files: jsonb("files").$type<SkillFileEntry[]>().notNull(),
    archiveKey: text("archive_key").notNull(),
    archiveFormat: text("archive_format").notNull(),
    /** `sha256:<hex>` of the archive's bytes. */
    archiveDigest: text("archive_digest").notNull(),
    archiveSize: integer("archive_size").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("skill_revisions_number").on(t.skillId, t.revision),
    foreignKey({ columns: [t.orgId, t.skillId], foreignColumns: [skills.orgId, skills.id] }).onDelete("cascade"),
    check("skill_revisions_number_positive", sql`${t.revision} > 0`),
    check("skill_revisions_archive_format", sql`${t.archiveFormat} IN ('zip', 'tar.gz')`),
  ],
);

export const skillGrants = pgTable(
  "skill_grants",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    skillId: uuid("skill_id").notNull(),
    targetProjectId: uuid("target_project_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("skill_grants_target").on(t.skillId, t.targetProjectId),
    foreignKey({ columns: [t.orgId, t.skillId], foreignColumns: [skills.orgId, skills.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.targetProjectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    index("skill_grants_project_idx").on(t.targetProjectId),
  ],
);
