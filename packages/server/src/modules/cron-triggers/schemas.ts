import { Type } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";
import { TEMPLATE_VARIABLES } from "./template.js";

const strict = { additionalProperties: false } as const;

export const TAG = "Cron triggers";

const AgentTarget = component("AgentCronTriggerTarget", Type.Object({ type: Type.Literal("agent"), agent_id: Id("agent") }, strict));
const ProfileTarget = component(
  "AgentProfileCronTriggerTarget",
  Type.Object({ type: Type.Literal("profile"), agent_profile_id: Id("agentProfile") }, strict),
);

const IntegrationTarget = component(
  "IntegrationCronTriggerTarget",
  Type.Object(
    {
      type: Type.Literal("integration"),
      integration_id: Id("integration"),
      settings: Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The input the integration's kind publishes as its schedule capability's input_schema (for Slack: agent_profile_id, " +
          "channel_id, opening_message_template, message_template). Both templates take the cron variables.",
      }),
    },
    strict,
  ),
);

export const CronTriggerTarget = component("CronTriggerTarget", Type.Union([AgentTarget, ProfileTarget, IntegrationTarget], {
  description:
    "An agent (each firing sends the rendered message to it as a queued input), a profile (each firing launches a new " +
    "agent from the profile's current config with the message) or an integration (each firing posts the rendered opening " +
    "message in the settings' channel and launches the settings' profile in its new thread with the rendered message). Immutable.",
}));

export const CronExpression = component("CronExpression", Type.String({
  minLength: 9,
  maxLength: 256,
  description:
    "Five-field cron expression (minute hour day-of-month month day-of-week) with *, ranges (1-5), lists (1,3) and " +
    "steps (*/15, 0-30/10); month and weekday names (JAN, MON) are accepted. TZ= and CRON_TZ= prefixes are refused; set " +
    "timezone instead.",
}));

const timezoneDescription =
  "IANA timezone the schedule runs in. A local time skipped by daylight saving fires once at the next valid instant; a repeated one fires once.";

export const CronTimezone = component("CronTimezone", Type.String({ maxLength: 64, description: timezoneDescription }));

/** Only a creation defaults it: a PATCH that leaves it out keeps the trigger's zone. */
const CreateTimezone = Type.String({ maxLength: 64, default: "UTC", description: timezoneDescription });

export const CronMessageTemplate = component("CronMessageTemplate", Type.String({
  maxLength: 65_536,
  description: `The message each firing sends, with the variables ${TEMPLATE_VARIABLES.map((v) => `{{.trigger.${v}}}`).join(", ")}. Any other action or variable is refused when saved.`,
}));

const FailureReport = component("CronTriggerFailureReport", Type.Object(
  {
    message: Type.String({ description: "Why the most recent failed firing did not deliver its message." }),
    will_retry: Type.Boolean({ description: "Whether the firing will be retried (after a backoff); false when the trigger was disabled." }),
    failed_at: Timestamp,
  },
  strict,
));

export const CronTrigger = component("CronTrigger", Type.Object(
  {
    id: Id("cronTrigger"),
    org_id: Id("org"),
    project_id: Id("project"),
    name: ResourceName,
    target: CronTriggerTarget,
    cron: CronExpression,
    timezone: CronTimezone,
    message_template: CronMessageTemplate,
    enabled: Type.Boolean(),
    last_fired_at: Type.Union([Timestamp, Type.Null()], { description: "The scheduled instant the trigger last fired for, or null." }),
    next_fire_at: Type.Union([Timestamp, Type.Null()], { description: "The next scheduled firing, or null while the trigger is disabled." }),
    failure_report: Type.Union([FailureReport, Type.Null()], {
      description: "The most recent failed firing, or null if none failed since the last successful one.",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...strict, description: "A schedule that sends a message to an agent, or launches an agent from a profile." },
));

export const CreateCronTriggerRequest = Type.Object(
  {
    name: ResourceName,
    target: CronTriggerTarget,
    cron: CronExpression,
    timezone: Type.Optional(CreateTimezone),
    /** Required except for an integration target, whose settings carry it (routes.ts checks; the create operation's description says so). */
    message_template: Type.Optional(CronMessageTemplate),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  strict,
);

export const UpdateCronTriggerRequest = Type.Object(
  {
    name: Type.Optional(ResourceName),
    cron: Type.Optional(CronExpression),
    timezone: Type.Optional(CronTimezone),
    message_template: Type.Optional(CronMessageTemplate),
    enabled: Type.Optional(Type.Boolean()),
  },
  { ...strict, description: "The target is immutable: delete the trigger and create another to retarget." },
);

export const ListCronTriggersQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    agent_id: Type.Optional(Id("agent")),
    agent_profile_id: Type.Optional(Id("agentProfile")),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const CronTriggerParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), cronTriggerID: Id("cronTrigger") });

