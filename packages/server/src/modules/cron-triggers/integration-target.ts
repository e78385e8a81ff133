import type { Tx } from "../../platform/db/index.js";
import { AppError, notFound, type Issue } from "../../platform/errors.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import type { KindCatalog } from "../integrations/capability-schemas.js";
import { findProfile } from "../agent-profiles/service.js";
import { insertReceipts } from "../integrations/inbound-store.js";
import { findIntegration, findIntegrationById } from "../integrations/store.js";
import { FiringFailure, render, type Firing, type FiringHandler } from "./scheduler.js";
import { parseTemplate, TemplateError } from "./template.js";

/** The receipt a firing leaves for the integration's kind (inbound-processor.ts handles it outside the firing). */
export const SCHEDULED_OCCURRENCE = "scheduled_occurrence";

/** What an integration schedule's settings hold once checked against the kind's schedule capability. */
interface ScheduleSettings {
  agent_profile_id: string;
  channel_id: string;
  opening_message_template: string;
  message_template: string;
}

/**
 * What a scheduled_occurrence receipt carries, whatever the kind (the schedule capabilities of slack_thread
 * and discord_thread take the same settings). Once the opening message is posted, the kind's handler adds
 * its provider id, so a retry never posts twice: Slack's `posted_ts`, Discord's `posted_message_id`.
 */
export interface ScheduledOccurrence {
  cron_trigger_id: string;
  agent_profile_id: string;
  channel_id: string;
  opening_message: string;
  message: string;
  posted_ts?: string;
  posted_message_id?: string;
}

const invalid = (issues: Issue[]) => new AppError("validation_failed", "request body failed validation", { issues });

/**
 * An integration target, checked when the trigger is saved (reference docs: integrations/overview, "Start a
 * new thread on a schedule"): the project's integration, a kind whose schedule svc runs, settings that
 * match the capability's input_schema (issues under /target/settings), a profile of the project and an
 * opening template with only the cron variables. The message template is checked with the trigger's.
 */
export async function requireIntegrationTarget(tx: Tx, catalog: KindCatalog, orgId: string, projectId: string, integrationId: string, settings: Record<string, unknown>): Promise<void> {
  const integration = await findIntegration(tx, orgId, projectId, integrationId);
  if (!integration) throw notFound("integration");
  if (!catalog.runsSchedules(integration.kind) || !catalog.hasCapability(integration.kind, "schedule")) {
    throw invalid([{ path: "/target/integration_id", message: `integrations of kind ${integration.kind} run no schedules` }]);
  }
  const schemaIssues = catalog.capabilityIssues(integration.kind, "schedule", settings, "/target/settings");
  if (schemaIssues.length > 0) throw invalid(schemaIssues);
  const checked = settings as unknown as ScheduleSettings;
  const issues: Issue[] = [];
  const profileId = decodeId("agentProfile", checked.agent_profile_id);
  if (!profileId || !(await findProfile(tx, orgId, projectId, profileId))) {
    issues.push({ path: "/target/settings/agent_profile_id", message: "is not an agent profile of this project" });
  }
  try {
    parseTemplate(checked.opening_message_template);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    issues.push({ path: "/target/settings/opening_message_template", message: err.message });
  }
  if (issues.length > 0) throw invalid(issues);
}

/**
 * The firing of an integration schedule, inside the firing's transaction: it calls no provider. It
 * leaves one receipt per slot (`cron:<trigger>:<slot>`; a slot fired again inserts nothing), which the
 * kind's receipt handler turns into the opening message and the launch, with the receipts' retries.
 */
export const integrationFiring: FiringHandler = {
  async fire(tx: Tx, { trigger, slot, message }: Firing) {
    const integration = await findIntegrationById(tx, trigger.orgId, trigger.integrationId!);
    // The foreign key deletes the trigger with its integration; this is a firing that raced the deletion.
    if (!integration) throw new FiringFailure("the target integration was deleted; the trigger was disabled", "disable");
    if (integration.state !== "active") throw new FiringFailure("the target integration is not connected; this occurrence was skipped, and later ones run once it is reconnected", "skip");
    const settings = trigger.settings as unknown as ScheduleSettings;
    const payload: ScheduledOccurrence = {
      cron_trigger_id: encodeId("cronTrigger", trigger.id),
      agent_profile_id: settings.agent_profile_id,
      channel_id: settings.channel_id,
      opening_message: render(trigger, slot, settings.opening_message_template),
      message,
    };
    const event = { providerEventId: `cron:${trigger.id}:${slot.toISOString()}`, eventKind: SCHEDULED_OCCURRENCE, payload: { ...payload } };
    await insertReceipts(tx, integration.id, [event]);
  },
};
