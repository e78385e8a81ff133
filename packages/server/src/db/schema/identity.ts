import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";

export const users = pgTable("users", {
  id: idColumn(),
  email: text("email").notNull(),
  normalizedEmail: text("normalized_email").notNull().unique(),
  displayName: text("display_name").notNull(),
  passwordHash: text("password_hash").notNull(),
  emailVerifiedAt: optionalTime("email_verified_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const emailVerificationTokens = pgTable("email_verification_tokens", {
  id: idColumn(),
  userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull().unique(),
  expiresAt: requiredTime("expires_at"),
  consumedAt: optionalTime("consumed_at"),
  createdAt: createdAt(),
});

export const browserSessions = pgTable(
  "browser_sessions",
  {
    id: idColumn(),
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    csrfHash: text("csrf_hash").notNull(),
    createdAt: createdAt(),
    lastSeenAt: requiredTime("last_seen_at"),
    expiresAt: requiredTime("expires_at"),
    revokedAt: optionalTime("revoked_at"),
  },
  (t) => [index("browser_sessions_user_idx").on(t.userId)],
);

export const personalAccessTokens = pgTable(
  "personal_access_tokens",
  {
    id: idColumn(),
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenId: text("token_id").notNull().unique(),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: createdAt(),
    lastUsedAt: optionalTime("last_used_at"),
    revokedAt: optionalTime("revoked_at"),
  },
  (t) => [index("personal_access_tokens_user_idx").on(t.userId, t.createdAt, t.id)],
);

export const deviceFlows = pgTable(
  "device_flows",
  {
    id: idColumn(),
    deviceCodeHash: text("device_code_hash").notNull().unique(),
    userCodeHash: text("user_code_hash").notNull().unique(),
    clientName: text("client_name").notNull(),
    tokenName: text("token_name").notNull(),
    intervalSeconds: integer("interval_seconds").notNull(),
    expiresAt: requiredTime("expires_at"),
    lastPolledAt: optionalTime("last_polled_at"),
    approvedByUserId: uuid("approved_by_user_id").references(() => users.id, { onDelete: "cascade" }),
    approvedAt: optionalTime("approved_at"),
    deniedAt: optionalTime("denied_at"),
    consumedAt: optionalTime("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [
    check("device_flows_approval_shape", sql`(${t.approvedByUserId} IS NULL) = (${t.approvedAt} IS NULL)`),
    check("device_flows_single_decision", sql`${t.approvedAt} IS NULL OR ${t.deniedAt} IS NULL`),
  ],
);
