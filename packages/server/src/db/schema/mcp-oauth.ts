import { sql } from "drizzle-orm";
import { check, foreignKey, index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, requiredTime } from "./columns.js";
import { users } from "./identity.js";
import { orgs, projects } from "./orgs.js";
import type { SecretEnvelope } from "./secrets.js";

/**
 * One MCP OAuth authorization (`moaf_`, reference: startSecretMCPOAuth): what the callback needs to turn
 * an authorization code into a secret. The PKCE verifier and any client secret are sealed (`sealed`);
 * the flow is single-use (`consumed_at`) and ends at `expires_at` by the database clock.
 */
export const mcpOAuthFlows = pgTable(
  "mcp_oauth_flows",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
    startedByUserId: uuid("started_by_user_id").references(() => users.id, { onDelete: "cascade" }),
    ownerKind: text("owner_kind").notNull(),
    ownerProjectId: uuid("owner_project_id"),
    ownerUserId: uuid("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull(),
    mcpUrl: text("mcp_url").notNull(),
    resource: text("resource").notNull(),
    authorizationServer: text("authorization_server").notNull(),
    tokenEndpoint: text("token_endpoint").notNull(),
    clientId: text("client_id").notNull(),
    scopes: text("scopes"),
    redirectUri: text("redirect_uri").notNull(),
    returnTo: text("return_to"),
    sealed: jsonb("sealed").$type<SecretEnvelope>().notNull(),
    expiresAt: requiredTime("expires_at"),
    consumedAt: optionalTime("consumed_at"),
    secretId: uuid("secret_id"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.ownerProjectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    check(
      "mcp_oauth_flows_owner_shape",
      sql`(${t.ownerKind} = 'org' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'project' AND ${t.ownerProjectId} IS NOT NULL AND ${t.ownerUserId} IS NULL)
        OR (${t.ownerKind} = 'user' AND ${t.ownerProjectId} IS NULL AND ${t.ownerUserId} IS NOT NULL)`,
    ),
    index("mcp_oauth_flows_expires_idx").on(t.expiresAt),
  ],
);
