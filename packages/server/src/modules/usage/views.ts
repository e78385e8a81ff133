import type { Static } from "typebox";
import { encodeId, type IdKind } from "../../platform/ids.js";
import type { UsageGroup, UsageKey } from "./schemas.js";
import type { UsageAnswer } from "./service.js";
import { NO_ID, type UsageGroupRow, type UsageSums } from "./store.js";

const FIELDS: Record<UsageKey, { field: string; kind?: IdKind; nullable?: boolean }> = {
  project: { field: "project_id", kind: "project" },
  agent: { field: "agent_id", kind: "agent" },
  agent_profile: { field: "agent_profile_id", kind: "agentProfile", nullable: true },
  actor: { field: "actor_id", kind: "actor", nullable: true },
  model: { field: "model_id", kind: "configuredModel" },
  day: { field: "day" },
};

export function usageView(answer: UsageAnswer) {
  return {
    from: `${answer.firstDay}T00:00:00.000Z`,
    to: `${answer.endDay}T00:00:00.000Z`,
    data: answer.groups.map((group) => groupView(answer.keys, group)),
    totals: sums(answer.totals),
    next_cursor: answer.nextCursor,
  };
}

type GroupView = Static<typeof UsageGroup>;

function groupView(keys: UsageKey[], group: UsageGroupRow): GroupView {
  const view: Record<string, string | null> = {};
  keys.forEach((key, i) => {
    const { field, kind, nullable } = FIELDS[key];
    const value = group[`k${i}`]!;
    if (key === "actor") return Object.assign(view, senderView(value));
    view[field] = kind === undefined ? value : nullable && value === NO_ID ? null : encodeId(kind, value);
  });
  // The keys asked for, then the sums: the schema's order.
  return Object.assign(view, sums(group)) as GroupView;
}

/** The actor key's value (store.ts): an actor's id, "key:" and an org API key's id, or '' for nobody. */
function senderView(value: string): { actor_id: string | null; api_key_id: string | null } {
  if (value.startsWith("key:")) return { actor_id: null, api_key_id: encodeId("orgApiKey", value.slice(4)) };
  return { actor_id: value === "" ? null : encodeId("actor", value), api_key_id: null };
}

function sums(row: UsageSums): UsageSums {
  return {
    model_calls: row.model_calls,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    cache_read_input_tokens: row.cache_read_input_tokens,
    cache_write_input_tokens: row.cache_write_input_tokens,
    cost_micro_usd: row.cost_micro_usd,
  };
}
