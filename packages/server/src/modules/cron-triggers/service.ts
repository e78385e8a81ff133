import { sql } from "drizzle-orm";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, conflict, idempotencyConflict, notFound, stateConflict, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { jsonDigest } from "../../platform/json.js";
import { requireAgent } from "../agents/access.js";
import { findProfile } from "../agent-profiles/service.js";
import { requireProject } from "../orgs/access.js";
import { CronSyntaxError, isTimeZone, nextOccurrence, normalizeExpression, schedule } from "./cron.js";
import { requireIntegrationTarget } from "./integration-target.js";
import type { KindCatalog } from "../integrations/capability-schemas.js";
import { parseTemplate, TemplateError } from "./template.js";
import * as store from "./store.js";

/** Reference design brief §2.7: at most 1,000 cron triggers a project. */
export const MAX_TRIGGERS_PER_PROJECT = 1000;

export type Target =
  | { kind: "agent"; agentId: string }
  | { kind: "profile"; profileId: string }
  | { kind: "integration"; integrationId: string; settings: Record<string, unknown> };

export interface CreateInput {
  name: string;
  target: Target;
  cron: string;
  timezone: string;
  messageTemplate: string;
  enabled: boolean;
  idempotencyKey?: string;
}

export interface UpdateInput {
  name?: string;
  cron?: string;
  timezone?: string;
  messageTemplate?: string;
  enabled?: boolean;
}

/**
 * Cron triggers: writing needs project.manage, reading agent.read (as profiles). The schedule, the zone
 * and the template are checked when saved, each at its field; `next_fire_at` is computed on the
 * database clock and is null exactly while the trigger is disabled.
 */
export function createCronTriggerService(deps: { db: Database; catalog: KindCatalog }) {
  const { db, catalog } = deps;

  async function create(principal: Principal, orgId: string, projectId: string, input: CreateInput): Promise<{ trigger: store.TriggerRow; created: boolean }> {
    // An integration target's message template is its settings' (routes.ts copies it), so its issue is there.
    checkDefinition(input, undefined, input.target.kind === "integration" ? "/target/settings/message_template" : "/message_template");
    const digest = jsonDigest({ ...input, idempotencyKey: null });
    return db.tx(async (tx) => {
      await requireProject(tx, principal, orgId, projectId, "project.manage");
      if (input.idempotencyKey !== undefined) {
        const made = await store.findByIdempotencyKey(tx, projectId, input.idempotencyKey);
        if (made) return replay(made, digest);
      }
      await requireTarget(tx, catalog, principal, orgId, projectId, input.target);
      // Counted under a per-project lock, so concurrent creations cannot pass the limit together.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`cron_triggers:${projectId}`}))`);
      if ((await store.countInProject(tx, projectId)) >= MAX_TRIGGERS_PER_PROJECT) {
        throw conflict(`a project has at most ${MAX_TRIGGERS_PER_PROJECT} cron triggers; delete one first`);
      }
      const trigger = await store.insertTrigger(tx, {
        id: newUuid(),
        orgId,
        projectId,
        name: input.name,
        targetKind: input.target.kind,
        agentId: input.target.kind === "agent" ? input.target.agentId : null,
        agentProfileId: input.target.kind === "profile" ? input.target.profileId : null,
        integrationId: input.target.kind === "integration" ? input.target.integrationId : null,
        settings: input.target.kind === "integration" ? input.target.settings : null,
        cron: input.cron,
        timezone: input.timezone,
        messageTemplate: input.messageTemplate,
        enabled: input.enabled,
        nextFireAt: input.enabled ? await firstFiring(tx, input.cron, input.timezone) : null,
        idempotencyKey: input.idempotencyKey ?? null,
        requestDigest: digest,
      });
      if (!trigger) {
        // A concurrent request with the same key committed first: answer as its replay.
        const made = await store.findByIdempotencyKey(tx, projectId, input.idempotencyKey!);
        return replay(made!, digest);
      }
      return { trigger, created: true };
    });
  }

  /**
   * A changed schedule, zone or enabled state starts the schedule again from now: a new `next_fire_at`,
   * any claim or retry backoff dropped (a firing in flight then finds its claim gone and does nothing).
   * Disabling clears `next_fire_at`. The failure report stays until a firing succeeds.
   */
  async function update(principal: Principal, orgId: string, projectId: string, id: string, input: UpdateInput): Promise<store.TriggerRow> {
    return db.tx(async (tx) => {
      await requireProject(tx, principal, orgId, projectId, "project.manage");
      const current = await store.findTrigger(tx, orgId, projectId, id, "update");
      if (!current) throw notFound("cron trigger");
      const next = {
        cron: input.cron ?? current.cron,
        timezone: input.timezone ?? current.timezone,
        messageTemplate: input.messageTemplate ?? current.messageTemplate,
        enabled: input.enabled ?? current.enabled,
      };
      checkDefinition(next, input);
      const rescheduled = next.cron !== current.cron || next.timezone !== current.timezone || next.enabled !== current.enabled;
      if (!rescheduled && input.name === undefined && input.messageTemplate === undefined) return current;
      return store.updateTrigger(tx, id, {
        name: input.name ?? current.name,
        ...next,
        // An integration target's settings carry the message template too: they stay equal.
        ...(current.settings && input.messageTemplate !== undefined ? { settings: { ...current.settings, message_template: input.messageTemplate } } : {}),
        ...(rescheduled
          ? {
              nextFireAt: next.enabled ? await firstFiring(tx, next.cron, next.timezone) : null,
              claimToken: null,
              claimedUntil: null,
              failedAttempts: 0,
            }
          : {}),
      });
    });
  }

  return {
    create,
    update,

    async get(principal: Principal, orgId: string, projectId: string, id: string): Promise<store.TriggerRow> {
      await requireProject(db.read, principal, orgId, projectId, "agent.read");
      const trigger = await store.findTrigger(db.read, orgId, projectId, id);
      if (!trigger) throw notFound("cron trigger");
      return trigger;
    },

    async list(principal: Principal, orgId: string, projectId: string, query: { name?: string; agentId?: string; profileId?: string; page: PageRequest }) {
      await requireProject(db.read, principal, orgId, projectId, "agent.read");
      return store.listTriggers(db.read, { orgId, projectId, ...query });
    },

    async remove(principal: Principal, orgId: string, projectId: string, id: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        if (!(await store.deleteTrigger(tx, orgId, projectId, id))) throw notFound("cron trigger");
      });
    },
  };
}

export type CronTriggerService = ReturnType<typeof createCronTriggerService>;

function replay(made: store.TriggerRow, digest: string): { trigger: store.TriggerRow; created: false } {
  if (made.requestDigest !== digest) throw idempotencyConflict();
  return { trigger: made, created: false };
}

async function requireTarget(tx: Tx, catalog: KindCatalog, principal: Principal, orgId: string, projectId: string, target: Target): Promise<void> {
  if (target.kind === "agent") {
    const { agent } = await requireAgent(tx, principal, orgId, projectId, target.agentId, "agent.read");
    if (agent.state !== "active") throw stateConflict("the agent is archived; a trigger can only target an active agent");
    return;
  }
  if (target.kind === "integration") return requireIntegrationTarget(tx, catalog, orgId, projectId, target.integrationId, target.settings);
  if (!(await findProfile(tx, orgId, projectId, target.profileId))) throw notFound("agent profile");
}

/**
 * The schedule's first firing after the database clock. The clock is the statement's, read in SQL
 * (`databaseNow`) so the value does not depend on this process's clock.
 */
async function firstFiring(tx: Tx, cron: string, timezone: string): Promise<Date> {
  const now = await store.databaseNow(tx);
  return nextOccurrence(schedule(cron, timezone), now)!;
}

/**
 * The issues of a trigger's schedule, zone and template, each at its field (400 validation_failed).
 * `changed` limits them to the fields a PATCH sends; a create checks all.
 */
function checkDefinition(d: { cron: string; timezone: string; messageTemplate: string }, changed?: UpdateInput, messagePath = "/message_template"): void {
  const issues: Issue[] = [];
  const check = (field: keyof UpdateInput, path: string, test: () => void) => {
    if (changed && changed[field] === undefined) return;
    try {
      test();
    } catch (err) {
      if (err instanceof CronSyntaxError || err instanceof TemplateError || err instanceof ZoneError) issues.push({ path, message: err.message });
      else throw err;
    }
  };
  check("timezone", "/timezone", () => {
    if (!isTimeZone(d.timezone)) throw new ZoneError(`"${d.timezone}" is not an IANA timezone (such as UTC or Europe/Berlin)`);
  });
  check("cron", "/cron", () => {
    normalizeExpression(d.cron);
    // An expression such as 0 0 30 2 * is well formed but never fires.
    if (isTimeZone(d.timezone) && nextOccurrence(schedule(d.cron, d.timezone), new Date()) === null) {
      throw new CronSyntaxError("this schedule never fires (no date matches its day and month fields)");
    }
  });
  check("messageTemplate", messagePath, () => {
    // Each firing sends the rendered template as the message; an empty one would send nothing at all.
    if (d.messageTemplate.trim() === "") throw new TemplateError("must not be empty: each firing sends it as the message");
    parseTemplate(d.messageTemplate);
  });
  if (issues.length > 0) throw new AppError("validation_failed", "request body failed validation", { issues });
}

class ZoneError extends Error {}
