import { useState, type FormEvent, type ReactNode } from "react";
import cronstrue from "cronstrue";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, RelativeTime } from "../ui";
import { DeleteButton, Table, text } from "../widgets";
import { useAgents, useProfiles } from "./profiles";

type Trigger = Schemas["CronTrigger"];

/**
 * Schedules (cron triggers, docs/schedules.md): each firing sends its message to an agent or launches an
 * agent from a profile. Create, pause and resume (`enabled`), delete; the next fire time and the last
 * failure are the trigger's own fields. Integration targets need the integration's settings: use the API.
 */
export function Schedules({ org, project }: { org: string; project: string }) {
  const path = { orgID: org, projectID: project };
  const triggersKey = keys.project(org, project, "schedules");
  const triggers = useQuery({ queryKey: triggersKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/cron-triggers", { params: { path, query: { limit: 100 } } })) });
  const invalidate = useInvalidate();
  const changed = () => void invalidate(triggersKey);
  const profiles = useProfiles(org, project);
  const agents = useAgents(org, project);
  const names = new Map<string, string>([...(profiles.data ?? []).map((p) => [p.id, `profile ${p.name}`] as const), ...(agents.data ?? []).map((a) => [a.id, `agent ${a.name}`] as const)]);
  return (
    <Page title="Schedules">
      <ErrorNotice error={triggers.error ?? profiles.error ?? agents.error} />
      <Table
        label="Schedules"
        head={["Name", "When", "Target", "State", "Next", "Last fired", "Last failure", ""]}
        empty="No schedules yet. Create one below to send a message to an agent, or launch one, on a cron schedule."
        rows={(triggers.data?.data ?? []).map((t) => [
          t.name,
          <span>
            <code>{t.cron}</code> <span className="small muted">{t.timezone}</span>
            <span className="block small">{describeCron(t.cron)}</span>
          </span>,
          targetName(t, names),
          <span className={`badge ${t.enabled ? "ok" : ""}`}>{t.enabled ? "active" : "paused"}</span>,
          t.next_fire_at ? <RelativeTime at={t.next_fire_at} /> : "—",
          t.last_fired_at ? <RelativeTime at={t.last_fired_at} /> : "never",
          failure(t),
          <TriggerActions org={org} project={project} trigger={t} changed={changed} />,
        ])}
      />
      <NewSchedule org={org} project={project} profiles={profiles.data ?? []} agents={agents.data ?? []} created={changed} />
    </Page>
  );
}

const NO_TARGET = "A schedule needs a target: create an agent profile (Profiles) or launch an agent first.";

function targetName(t: Trigger, names: Map<string, string>): string {
  const target = t.target;
  if (target.type === "agent") return names.get(target.agent_id) ?? target.agent_id;
  if (target.type === "profile") return names.get(target.agent_profile_id) ?? target.agent_profile_id;
  return `integration ${target.integration_id}`;
}

function failure(t: Trigger): ReactNode {
  const report = t.failure_report;
  if (!report) return <span className="muted small">none</span>;
  return (
    <span className="error small">
      {<RelativeTime at={report.failed_at} />}: {report.message} {report.will_retry ? "(will retry)" : "(not retried)"}
    </span>
  );
}

function TriggerActions(props: { org: string; project: string; trigger: Trigger; changed: () => void }) {
  const t = props.trigger;
  const path = { orgID: props.org, projectID: props.project, cronTriggerID: t.id };
  const action = useAction();
  const toggle = () =>
    void action.run(async () => {
      await call(api.PATCH("/api/v1/orgs/{orgID}/projects/{projectID}/cron-triggers/{cronTriggerID}", { params: { path }, body: { enabled: !t.enabled } }));
      props.changed();
    });
  return (
    <span className="actions">
      <button type="button" className="secondary small-button" disabled={action.busy} onClick={toggle} aria-label={`${t.enabled ? "Pause" : "Resume"} ${t.name}`}>
        {t.enabled ? "Pause" : "Resume"}
      </button>
      <DeleteButton label={`Delete schedule ${t.name}`} name={`schedule ${t.name}`} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/cron-triggers/{cronTriggerID}", { params: { path } }))} removed={props.changed} />
      <ErrorNotice error={action.error} />
    </span>
  );
}

/** The cron expression in words (cronstrue), or undefined when it does not read as one. */
export function describeCron(cron: string): string | undefined {
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, throwExceptionOnParseError: true, verbose: false });
  } catch {
    return undefined;
  }
}

function NewSchedule(props: { org: string; project: string; profiles: Schemas["AgentProfile"][]; agents: Schemas["Agent"][]; created: () => void }) {
  const action = useAction();
  const [cron, setCron] = useState("");
  const live = props.agents.filter((a) => a.state !== "archived");
  const noTarget = props.profiles.length + live.length === 0;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const [type, id] = text(form, "target").split(":");
    const target = type === "profile" ? { type: "profile" as const, agent_profile_id: id! } : { type: "agent" as const, agent_id: id! };
    const timezone = text(form, "timezone");
    // timezone and enabled have schema defaults (UTC, true), which the generated type makes required.
    const body = { name: text(form, "name"), cron: text(form, "cron"), target, message_template: String(form.get("message") ?? ""), timezone: timezone || "UTC", enabled: true };
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/cron-triggers", { params: { path: { orgID: props.org, projectID: props.project } }, body }));
      formEl.reset();
      props.created();
    });
  };
  return (
    <>
      <h2>Create a schedule</h2>
      <form onSubmit={submit} aria-label="Create a schedule" className="stack-form">
        <div className="inline-form">
          <Field label="Schedule name" id="schedule-name">
            <input id="schedule-name" name="name" required maxLength={64} />
          </Field>
          <Field label="Cron expression" id="schedule-cron" hint="minute hour day month weekday, e.g. 0 9 * * MON-FRI">
            <input id="schedule-cron" name="cron" required minLength={9} maxLength={256} className="mono" value={cron} onChange={(event) => setCron(event.target.value)} />
          </Field>
          {cron.trim() ? (
            <p className="small wide-row" role="status" id="schedule-cron-words">
              {describeCron(cron.trim()) ?? "Not a cron expression yet: five fields, minute hour day month weekday."}
            </p>
          ) : null}
          <Field label="Timezone" id="schedule-timezone" hint="An IANA name; empty means UTC.">
            <input id="schedule-timezone" name="timezone" maxLength={64} defaultValue={Intl.DateTimeFormat().resolvedOptions().timeZone} />
          </Field>
          <Field label="Target" id="schedule-target">
            <select id="schedule-target" name="target" required>
              <optgroup label="Launch an agent from a profile">
                {props.profiles.map((p) => (
                  <option key={p.id} value={`profile:${p.id}`}>
                    profile {p.name}
                  </option>
                ))}
              </optgroup>
              <optgroup label="Send to an agent">
                {live.map((a) => (
                  <option key={a.id} value={`agent:${a.id}`}>
                    agent {a.name}
                  </option>
                ))}
              </optgroup>
            </select>
          </Field>
        </div>
        <Field label="Message" id="schedule-message" hint="May use {{.trigger.name}}, {{.trigger.fired_at}}, {{.trigger.last_fired_at}}, {{.trigger.local_date}}.">
          <textarea id="schedule-message" name="message" rows={3} maxLength={65536} />
        </Field>
        <button className="primary" disabled={action.busy || noTarget} aria-describedby={noTarget ? "schedule-why" : undefined} title={noTarget ? NO_TARGET : undefined}>
          Create schedule
        </button>
        {noTarget ? (
          <p className="small muted" id="schedule-why">
            {NO_TARGET}
          </p>
        ) : null}
      </form>
      <ErrorNotice error={action.error} />
    </>
  );
}
