import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Field, Page, useAction, useLoad, when } from "../ui";
import { GrantedTo, GrantForm, Shown, Table, text, useProjects, type GrantRow } from "../widgets";

/**
 * The organization's machines: connect one (the svcd command is shown once), grant it to a project and
 * revoke that grant. Revoking deletes the project's machine grant
 * (`DELETE …/projects/{id}/machine-grants/{grantID}`, docs/machines.md).
 */
export function Machines({ org }: { org: string }) {
  const list = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const projects = useProjects(org);
  const action = useAction();
  const [command, setCommand] = useState<string>();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      const made = await call(api.POST("/api/v1/orgs/{orgID}/machines/connect", { params: { path: { orgID: org } }, body: { display_name: text(form, "display_name") } }));
      // docs/machines.md: svcd connects with the daemon token, given once.
      setCommand(`npx svcd run --url ${location.origin} --token ${made.token} --home ~/.svcd`);
      list.reload();
    });
  };
  const revoke = (g: GrantRow) => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants/{grantID}", { params: { path: { orgID: org, projectID: g.projectID, grantID: g.grantID } } }));
  const machines = list.data?.data ?? [];
  return (
    <Page title="Machines">
      <ErrorNotice error={list.error ?? projects.error} />
      <Table
        label="Machines"
        head={["Name", "Kind", "State", "Connection", "Last seen", "Granted to"]}
        empty="No machines yet."
        rows={machines.map((m) => [
          m.display_name,
          m.source_kind,
          m.lifecycle_state,
          <span className={`badge conn-${m.connection_state}`}>{m.connection_state}</span>,
          when(m.last_observed_at ?? undefined),
          m.source_kind === "byo" ? <GrantedTo what={m.display_name} grants={explicitGrants(m, projects.data)} revoke={revoke} revoked={list.reload} /> : <span className="small muted">through its pool</span>,
        ])}
      />
      <h2>Connect a machine</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label="Machine name" id="machine-name">
          <input id="machine-name" name="display_name" required maxLength={64} />
        </Field>
        <button className="primary" disabled={action.busy}>
          Connect
        </button>
      </form>
      <ErrorNotice error={action.error} />
      <Shown label="Run this on the machine (the token is shown once):" value={command} />
      <GrantForm
        what="Machine"
        projects={projects.data}
        items={machines.filter((m) => m.source_kind === "byo").map((m) => ({ id: m.id, name: m.display_name }))}
        grant={(machineID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants", { params: { path: { orgID: org, projectID } }, body: { machine_id: machineID } }))}
        granted={list.reload}
      />
    </Page>
  );
}

/**
 * A machine's explicit grants, from the `access.sources` the machines list carries (one per grant to a
 * project the caller can read). Pool-derived access is revoked through its pool grant, so it is left out.
 */
function explicitGrants(machine: Schemas["VisibleMachine"], projects: Schemas["Project"][] | undefined): GrantRow[] | undefined {
  if (!projects) return undefined;
  const names = new Map(projects.map((p) => [p.id, p.name]));
  return machine.access.sources
    .filter((source) => source.kind === "project_machine_grant" && source.grant_source_kind === "explicit" && source.grant_id && source.project_id)
    .map((source) => ({ grantID: source.grant_id!, projectID: source.project_id!, projectName: names.get(source.project_id!) ?? source.project_id! }));
}
