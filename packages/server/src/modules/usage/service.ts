import type { Database } from "../../platform/db/index.js";
import { invalidRequest } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../../platform/http/lists.js";
import { isUuid } from "../../platform/ids.js";
import { projectsAllowing, requireOrg } from "../orgs/access.js";
import { orgRoleAllows } from "../orgs/policy.js";
import { USAGE_KEYS, type UsageKey } from "./schemas.js";
import * as store from "./store.js";

const DAY_MS = 86_400_000;
/** The longest range one read may sum (docs/usage-and-budgets.md). */
const MAX_RANGE_DAYS = 366;

export interface UsageRequest {
  from?: string;
  to?: string;
  groupBy: UsageKey[];
  projectId?: string;
  agentId?: string;
  actorId?: string;
  modelId?: string;
  limit: number;
  cursor?: string;
}

export interface UsageAnswer {
  firstDay: string;
  endDay: string;
  keys: UsageKey[];
  groups: store.UsageGroupRow[];
  totals: store.UsageSums;
  nextCursor: string | null;
}

/**
 * Model usage of an organization from the daily rollups. Org owners and admins read every project's usage
 * (deleted projects' included); anyone else, with org.read, the projects they can read.
 */
export function createUsageService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async usage(principal: Principal, orgId: string, request: UsageRequest): Promise<UsageAnswer> {
      const access = await requireOrg(db.read, principal, orgId);
      const { firstDay, endDay } = await dayRange(db, request.from, request.to);
      const keys = USAGE_KEYS.filter((key) => request.groupBy.includes(key));
      const after = request.cursor ? decodeUsageCursor(request.cursor, keys) : undefined;
      const selection: store.UsageSelection = {
        orgId,
        firstDay,
        endDay,
        ...(orgRoleAllows(access.orgRole, "org.manage") ? {} : { readableProjects: projectsAllowing(access, "project.read") }),
        ...(request.projectId ? { projectId: request.projectId } : {}),
        ...(request.agentId ? { agentId: request.agentId } : {}),
        ...(request.actorId ? { actorId: request.actorId } : {}),
        ...(request.modelId ? { modelId: request.modelId } : {}),
      };
      const { groups, totals } = await store.usagePage(db.read, selection, keys, { limit: request.limit, ...(after ? { after } : {}) });
      const hasMore = groups.length > request.limit;
      const data = hasMore ? groups.slice(0, request.limit) : groups;
      const last = data.at(-1);
      const nextCursor = hasMore && last ? encodeOpaqueCursor({ g: keys.join(","), k: keys.map((_, i) => last[`k${i}`]) }) : null;
      return { firstDay, endDay, keys, groups: data, totals, nextCursor };
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;

/**
 * The UTC days a range touches: from the day `from` falls in up to the day before `to`, or `to`'s own day
 * when `to` is after its midnight (partial days count whole). Defaults are the current UTC month by the
 * database clock.
 */
async function dayRange(db: Database, from: string | undefined, to: string | undefined): Promise<{ firstDay: string; endDay: string }> {
  const month = from === undefined || to === undefined ? await store.currentMonth(db.read) : undefined;
  const start = from === undefined ? Date.parse(`${month!.first}T00:00:00Z`) : Date.parse(from);
  const end = to === undefined ? Date.parse(`${month!.next}T00:00:00Z`) : Date.parse(to);
  if (end <= start) throw invalidRequest("to must be after from");
  if (end - start > MAX_RANGE_DAYS * DAY_MS) throw invalidRequest(`from and to may be at most ${MAX_RANGE_DAYS} days apart`);
  return { firstDay: utcDay(Math.floor(start / DAY_MS) * DAY_MS), endDay: utcDay(Math.ceil(end / DAY_MS) * DAY_MS) };
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A cursor is the last group's keys, valid only for the same group_by. */
function decodeUsageCursor(cursor: string, keys: UsageKey[]): string[] {
  const { g, k } = decodeOpaqueCursor(cursor);
  if (g !== keys.join(",")) throw invalidRequest("cursor was made for another group_by; start again without a cursor");
  if (!Array.isArray(k) || k.length !== keys.length) throw invalidRequest("cursor is not valid");
  return keys.map((key, i) => {
    const value: unknown = k[i];
    const valid = key === "day" ? typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) : isUuid(value);
    if (!valid) throw invalidRequest("cursor is not valid");
    return value as string;
  });
}
