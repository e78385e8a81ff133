import { useCallback, useEffect, useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { svcdInstallCommand } from "@svc/sdk";
import { api, call, type Schemas } from "../api/client";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, RelativeTime, useAction } from "../ui";
import { GrantedTo, GrantForm, Shown, Table, text, useProjects, type GrantRow } from "../widgets";

/**
 * The organization's machines: connect one (the svcd command is shown once, then the page waits for it to
 * come online), grant it to a project and revoke that grant. Revoking deletes the project's machine grant
 * (`DELETE …/projects/{id}/machine-grants/{grantID}`, docs/machines.md).
 */
export function Machines({ org }: { org: string }) {
  const machinesKey = keys.org(org, "machines");
  const list = useQuery({ queryKey: machinesKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const invalidate = useInvalidate();
  const changed = useCallback(() => void invalidate(machinesKey), [invalidate, org]);
  const projects = useProjects(org);
  const [connected, setConnected] = useState<Connected>();
  const revoke = (g: GrantRow) => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants/{grantID}", { params: { path: { orgID: org, projectID: g.projectID, grantID: g.grantID } } }));
  const machines = list.data?.data ?? [];
  const waiting = connected && machines.find((m) => m.id === connected.machineID)?.connection_state !== "online";
  useWhileWaiting(waiting === true, changed);
  return (
    <Page title="Machines">
      <ErrorNotice error={list.error ?? projects.error} />
      <Table
        label="Machines"
        head={["Name", "Kind", "State", "Connection", "Last seen", "Granted to"]}
        empty="No machines yet. Connect this computer below to let agents run commands on it."
        rows={machines.map((m) => [
          m.display_name,
          m.source_kind,
          m.lifecycle_state,
          <span className={`badge conn-${m.connection_state}`}>{CONNECTION[m.connection_state]}</span>,
          m.last_observed_at ? <RelativeTime at={m.last_observed_at} /> : <span className="muted">never</span>,
          m.source_kind === "byo" ? <GrantedTo what={m.display_name} grants={explicitGrants(m, projects.data)} revoke={revoke} revoked={changed} /> : <span className="small muted">through its pool</span>,
        ])}
      />
      <ConnectMachine org={org} projects={projects.data} connected={(made) => { setConnected(made); changed(); }} />
      {connected ? (
        <>
          <Shown
            label="Run this in a terminal on the computer (it needs Node.js 20.19 or newer, 22.12 or newer on 22). It installs svcd in ~/.svcd and keeps it running as a user service (systemd or launchd), or in the foreground where there is none. The token is shown only now:"
            value={connected.command}
            copyLabel="Copy the svcd command"
          />
          <p role="status" className={waiting ? "muted" : "ok"}>
            {waiting ? `Waiting for ${connected.name} to connect…` : `${connected.name} is online.`}
          </p>
        </>
      ) : null}
      <GrantForm
        what="Machine"
        projects={projects.data}
        items={machines.filter((m) => m.source_kind === "byo").map((m) => ({ id: m.id, name: m.display_name }))}
        grant={(machineID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants", { params: { path: { orgID: org, projectID } }, body: { machine_id: machineID } }))}
        granted={changed}
      />
    </Page>
  );
}

/** The connection in plain words: svcd is connected now, or not (and a sleeping cloud machine can be woken). */
const CONNECTION: Record<Schemas["VisibleMachine"]["connection_state"], string> = {
  online: "online",
  offline: "offline",
  asleep: "offline (asleep, wakes when needed)",
};

interface Connected {
  machineID: string;
  name: string;
  command: string;
}

/** How often, and for how long at most, the page looks again for a machine it is waiting for. */
const POLL_MS = 2000;
const POLL_ROUNDS = 300;

/** Reloads every POLL_MS while `waiting`, for at most POLL_ROUNDS rounds (10 minutes): svcd is started by hand. */
function useWhileWaiting(waiting: boolean, reload: () => void): void {
  useEffect(() => {
    if (!waiting) return;
    let rounds = 0;
    const timer = setInterval(() => {
      rounds += 1;
      if (rounds >= POLL_ROUNDS) clearInterval(timer);
      reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [waiting, reload]);
}

/**
 * Connects a machine (docs/machines.md), granted at once to the chosen project, and hands back the one
 * command that installs svcd from this svc (svcdInstallCommand: the token in the environment of the
 * installer's shell, never in an argument, which other users see in `ps`).
 */
function ConnectMachine(props: { org: string; projects: Schemas["Project"][] | undefined; connected: (made: Connected) => void }) {
  const action = useAction();
  const remembered = props.projects?.find((p) => p.id === sessionStorage.getItem(`svc:project:${props.org}`))?.id;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const project = text(form, "project");
    const cwd = text(form, "cwd");
    const body = { display_name: text(form, "display_name"), ...(cwd ? { cwd } : {}), ...(project ? { project_ids: [project] } : {}) };
    void action.run(async () => {
      const made = await call(api.POST("/api/v1/orgs/{orgID}/machines/connect", { params: { path: { orgID: props.org } }, body }));
      const command = svcdInstallCommand(location.origin, made.token);
      props.connected({ machineID: made.machine.id, name: made.machine.display_name, command });
    });
  };
  return (
    <>
      <h2>Connect this computer</h2>
      <p className="muted">
        svcd, svc's machine daemon, runs agents' commands on a computer: it dials out to svc, so svc needs no way in. Name the computer, start the command shown next, and
        agents of the project can use it as <code>machine_sources: [{"{"}machine_name: …{"}"}]</code> in their config.
      </p>
      <form onSubmit={submit} className="inline-form" aria-label="Connect a machine">
        <Field label="Machine name" id="machine-name" hint="Agent configs name the machine by it.">
          <input id="machine-name" name="display_name" required maxLength={64} />
        </Field>
        <Field label="Working directory (optional)" id="machine-cwd" hint="Where its commands run, such as a project folder; empty: svcd's home (~/.svcd/<machine id>).">
          <input id="machine-cwd" name="cwd" maxLength={4096} />
        </Field>
        {props.projects ? (
          <Field label="For project" id="machine-project" hint="Its agents may use the machine (a machine grant).">
            <select id="machine-project" name="project" defaultValue={remembered ?? props.projects[0]?.id}>
              {props.projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
              <option value="">No project yet</option>
            </select>
          </Field>
        ) : null}
        <button className="primary" disabled={action.busy}>
          Connect
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </>
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
