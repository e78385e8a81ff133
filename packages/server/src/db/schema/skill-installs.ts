import { sql } from "drizzle-orm";
import { check, foreignKey, index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, requiredTime, updatedAt } from "./columns.js";
import { agents } from "./agents.js";
import { machines } from "./machines.js";
import { toolCalls } from "./timeline.js";

/**
 * A `skill` tool call's request to install the pinned revision's files on one attached machine (design
 * brief §7: `skill_offer` / `skill_report`). `pending` until the machine's daemon reports `ready` or
 * `failed`, or maintenance ends it `timeout` at `deadline_at`; a machine offline when the call ran is
 * `unreachable` from the start. When none of a call's rows is pending any more, the call completes.
 * The skill is not a foreign key: a skill deleted meanwhile makes the download a 404, reported `failed`.
 */
export const skillInstalls = pgTable(
  "skill_installs",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    agentId: uuid("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    toolCallId: uuid("tool_call_id")
      .notNull()
      .references(() => toolCalls.id, { onDelete: "cascade" }),
    machineId: uuid("machine_id").notNull(),
    skillId: uuid("skill_id").notNull(),
    revisionId: uuid("revision_id").notNull(),
    skillName: text("skill_name").notNull(),
    /** `sha256:<hex>` of the revision's archive, which the daemon checks before it unpacks anything. */
    digest: text("digest").notNull(),
    state: text("state").notNull().default("pending"),
    error: text("error").notNull().default(""),
    /** Where the daemon put the files, as it reported. */
    installPath: text("install_path").notNull().default(""),
    deadlineAt: requiredTime("deadline_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    check("skill_installs_state", sql`${t.state} IN ('pending', 'ready', 'failed', 'timeout', 'unreachable')`),
    index("skill_installs_call_idx").on(t.toolCallId),
    // Offers read a machine's pending requests; maintenance reads the installs whose deadline just passed.
    index("skill_installs_machine_pending_idx").on(t.machineId, t.createdAt).where(sql`${t.state} = 'pending'`),
    index("skill_installs_deadline_idx").on(t.deadlineAt),
  ],
);
