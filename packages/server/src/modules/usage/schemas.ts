import { Type, type Static } from "typebox";
import { Cursor, Limit } from "../../platform/http/lists.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

export const TAG = "Usage";

/** What usage can be grouped by, in the order the groups are sorted. */
export const USAGE_KEYS = ["project", "agent", "agent_profile", "actor", "model", "day"] as const;
export type UsageKey = (typeof USAGE_KEYS)[number];

const key = `(${USAGE_KEYS.join("|")})`;
const Total = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: "date-time", description: "Start (RFC 3339); its whole UTC day counts. Default: the first day of the current UTC month." })),
    to: Type.Optional(
      Type.String({
        format: "date-time",
        description: "End (RFC 3339, exclusive); the UTC day it falls in counts unless it is that day's midnight. At most 366 days after from. Default: the first day of the next UTC month.",
      }),
    ),
    group_by: Type.Optional(
      Type.String({
        pattern: `^${key}(,${key})*$`,
        maxLength: 200,
        description: "Comma-separated keys to group by: project, agent, agent_profile, actor, model, day. Without it, data holds one row of the totals.",
      }),
    ),
    project_id: Type.Optional(Id("project")),
    agent_id: Type.Optional(Id("agent")),
    actor_id: Type.Optional(Id("actor")),
    model_id: Type.Optional(Id("configuredModel")),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuery>;

const sums = {
  model_calls: Total,
  input_tokens: Total,
  output_tokens: Total,
  cache_read_input_tokens: Total,
  cache_write_input_tokens: Total,
  cost_micro_usd: { ...Total, description: "Millionths of a US dollar." },
};

export const UsageTotals = component("UsageTotals", Type.Object(sums, { additionalProperties: false, description: "Sums over every group." }));

export const UsageGroup = component("UsageGroup", Type.Object(
  {
    project_id: Type.Optional(Id("project")),
    agent_id: Type.Optional(Id("agent")),
    agent_profile_id: Type.Optional(Type.Union([Id("agentProfile"), Type.Null()], { description: "null: agents launched from a config, not a profile." })),
    actor_id: Type.Optional(Type.Union([Id("actor"), Type.Null()], { description: "The actor whose input opened the turn; null when an organization API key sent it naming no actor (see api_key_id), or when nobody did (a schedule, a parent agent)." })),
    api_key_id: Type.Optional(Type.Union([Id("orgApiKey"), Type.Null()], { description: "With group_by=actor: the organization API key that sent the turn's opening input naming no actor (actor_id is then null); else null." })),
    model_id: Type.Optional(Id("configuredModel")),
    day: Type.Optional(Type.String({ format: "date", description: "A UTC day." })),
    ...sums,
  },
  { additionalProperties: false, description: "The sums of one group: the keys asked for in group_by, then the sums." },
));

export const UsageResponse = component("UsageResponse", Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    data: Type.Array(UsageGroup),
    totals: UsageTotals,
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
));
