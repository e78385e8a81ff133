import { sql } from "drizzle-orm";
import { check, foreignKey, index, pgTable, primaryKey, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, updatedAt } from "./columns.js";
import { users } from "./identity.js";

export const orgs = pgTable(
  "orgs",
  {
    id: idColumn(),
    name: text("name").notNull(),
    createdByUserId: uuid("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
    idempotencyKey: text("idempotency_key"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [unique("orgs_creator_idempotency_key").on(t.createdByUserId, t.idempotencyKey)],
);

export const projects = pgTable(
  "projects",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    idempotencyKey: text("idempotency_key"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("projects_org_id_id").on(t.orgId, t.id),
    unique("projects_org_name").on(t.orgId, t.name),
    unique("projects_org_idempotency_key").on(t.orgId, t.idempotencyKey),
  ],
);

export const orgApiKeys = pgTable(
  "org_api_keys",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenId: text("token_id").notNull().unique(),
    tokenHash: text("token_hash").notNull().unique(),
    /** The org role the key held; kept after revocation, when its membership row is gone. */
    orgRole: text("org_role").notNull(),
    createdByUserId: uuid("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastUsedAt: optionalTime("last_used_at"),
    revokedAt: optionalTime("revoked_at"),
  },
  (t) => [
    unique("org_api_keys_org_id_id").on(t.orgId, t.id),
    uniqueIndex("org_api_keys_active_name").on(t.orgId, t.name).where(sql`${t.revokedAt} IS NULL`),
    check("org_api_keys_role", sql`${t.orgRole} IN ('admin', 'member')`),
  ],
);

export const orgMemberships = pgTable(
  "org_memberships",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    userId: uuid("user_id").references(() => users.id, { onDelete: "cascade" }),
    orgApiKeyId: uuid("org_api_key_id"),
    role: text("role").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("org_memberships_org_id_id").on(t.orgId, t.id),
    unique("org_memberships_org_user").on(t.orgId, t.userId),
    unique("org_memberships_org_key").on(t.orgId, t.orgApiKeyId),
    foreignKey({ columns: [t.orgId, t.orgApiKeyId], foreignColumns: [orgApiKeys.orgId, orgApiKeys.id] }).onDelete("cascade"),
    check("org_memberships_one_principal", sql`(${t.userId} IS NULL) <> (${t.orgApiKeyId} IS NULL)`),
    check("org_memberships_role", sql`${t.role} IN ('owner', 'admin', 'member')`),
    check("org_memberships_keys_never_own", sql`${t.orgApiKeyId} IS NULL OR ${t.role} <> 'owner'`),
    index("org_memberships_user_idx").on(t.userId),
  ],
);

export const projectMemberships = pgTable(
  "project_memberships",
  {
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    orgMembershipId: uuid("org_membership_id").notNull(),
    role: text("role").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.orgMembershipId] }),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.orgMembershipId], foreignColumns: [orgMemberships.orgId, orgMemberships.id] }).onDelete(
      "cascade",
    ),
    check("project_memberships_role", sql`${t.role} IN ('admin', 'developer', 'operator', 'viewer')`),
    index("project_memberships_membership_idx").on(t.orgMembershipId),
  ],
);

export const orgInvitations = pgTable(
  "org_invitations",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    normalizedEmail: text("normalized_email").notNull(),
    orgRole: text("org_role").notNull(),
    invitedByUserId: uuid("invited_by_user_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
  },
  (t) => [
    unique("org_invitations_org_email").on(t.orgId, t.normalizedEmail),
    check("org_invitations_role", sql`${t.orgRole} IN ('admin', 'member')`),
    index("org_invitations_email_idx").on(t.normalizedEmail),
  ],
);
