import { foreignKey, index, pgTable, primaryKey, uuid } from "drizzle-orm/pg-core";
import { createdAt, optionalTime } from "./columns.js";
import { agents } from "./agents.js";
import { toolCalls } from "./timeline.js";

/**
 * What a coordinator's waiting delegation call waits for (docs/delegation.md): one row per child of a
 * `delegate` or `message_delegate` call with `wait`, or of an `await_delegates` call. The coordinator's
 * claim completes the call once every child named here has settled its turn; nothing holds a worker
 * slot or a lease meanwhile. `input_id` is the input the call sent (its turn's final output answers),
 * `deadline` an `await_delegates` timeout by the database clock.
 */
export const delegateWaits = pgTable(
  "delegate_waits",
  {
    toolCallId: uuid("tool_call_id")
      .notNull()
      .references(() => toolCalls.id, { onDelete: "cascade" }),
    orgId: uuid("org_id").notNull(),
    coordinatorAgentId: uuid("coordinator_agent_id").notNull(),
    childAgentId: uuid("child_agent_id").notNull(),
    inputId: uuid("input_id"),
    deadline: optionalTime("deadline"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.toolCallId, t.childAgentId] }),
    foreignKey({ columns: [t.orgId, t.coordinatorAgentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.childAgentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    index("delegate_waits_coordinator_idx").on(t.coordinatorAgentId),
    index("delegate_waits_child_idx").on(t.childAgentId),
  ],
);
