import { sql } from "drizzle-orm";
import { check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, updatedAt } from "./columns.js";
import { users } from "./identity.js";
import { orgMemberships, orgs, projects } from "./orgs.js";

/** AES-256-GCM envelope: a fresh data key per version, wrapped by the master key `kid`. Base64 fields. */
export interface SecretEnvelope {
  alg: "A256GCM";
  kid: string;
  wrapped_key: string;
  wrap_nonce: string;
  wrap_tag: string;
  nonce: string;
  ciphertext: string;
  tag: string;
}

export const secrets = pgTable(
  "secrets",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    managementKind: text("management_kind").notNull().default("tenant"),
    ownerKind: text("owner_kind").notNull(),
    ownerProjectId: uuid("owner_project_id"),
    ownerUserId: uuid("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    currentVersionNumber: integer("current_version_number").notNull(),
    payloadKeys: jsonb("payload_keys").$type<string[]>().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("secrets_org_id_id").on(t.orgId, t.id),
    unique("secrets_owner_name").on(t.orgId, t.ownerKind, t.ownerProjectId, t.ownerUserId, t.name).nullsNotDistinct(),
    foreignKey({ columns: [t.orgId, t.ownerProjectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    // A user's secrets in an org live as long as their membership: leaving the org deletes them.
    foreignKey({
      name: "secrets_owner_membership_fk",
      columns: [t.orgId, t.ownerUserId],
      foreignColumns: [orgMemberships.orgId, orgMemberships.userId],
    }).onDelete("cascade"),
    check(
      "secrets_owner_shape",
      sql`(${t.ownerKind} = 'org' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'project' AND ${t.ownerProjectId} IS NOT NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'user' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NOT NULL)`,
    ),
    check("secrets_management_kind", sql`${t.managementKind} IN ('tenant', 'cluster')`),
    check(
      "secrets_kind",
      sql`${t.kind} IN ('generic', 'oauth_token_set', 'slack_app_credentials', 'aws_credentials', 'github_app_credentials')`,
    ),
    index("secrets_org_created_idx").on(t.orgId, t.createdAt, t.id),
  ],
);

export const secretVersions = pgTable(
  "secret_versions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    secretId: uuid("secret_id").notNull(),
    versionNumber: integer("version_number").notNull(),
    envelope: jsonb("envelope").$type<SecretEnvelope>().notNull(),
    mcpOAuthFlowId: uuid("mcp_oauth_flow_id"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("secret_versions_number").on(t.secretId, t.versionNumber),
    foreignKey({ columns: [t.orgId, t.secretId], foreignColumns: [secrets.orgId, secrets.id] }).onDelete("cascade"),
    check("secret_versions_number_positive", sql`${t.versionNumber} > 0`),
  ],
);

export const secretGrants = pgTable(
  "secret_grants",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    secretId: uuid("secret_id").notNull(),
    targetProjectId: uuid("target_project_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("secret_grants_target").on(t.secretId, t.targetProjectId),
    foreignKey({ columns: [t.orgId, t.secretId], foreignColumns: [secrets.orgId, secrets.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.targetProjectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    index("secret_grants_project_idx").on(t.targetProjectId),
  ],
);
