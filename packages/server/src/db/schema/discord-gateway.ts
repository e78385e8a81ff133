import { bigint, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { optionalTime } from "./columns.js";
import { integrations } from "./integrations.js";

/**
 * The one Discord Gateway connection of each discord_thread integration (spec: provider_config, "One
 * gateway connection is managed per Discord integration"). Whoever holds the lease (a gateway manager in
 * some svc process, until `lease_expires_at` on the database clock) is the only one connected; the
 * session and the last stored sequence number let the next holder resume where the last one stopped.
 */
export const discordGatewaySessions = pgTable("discord_gateway_sessions", {
  integrationId: uuid("integration_id")
    .primaryKey()
    .references(() => integrations.id, { onDelete: "cascade" }),
  holder: text("holder"),
  leaseExpiresAt: optionalTime("lease_expires_at"),
  sessionId: text("session_id"),
  resumeGatewayUrl: text("resume_gateway_url"),
  seq: bigint("seq", { mode: "number" }),
});
