import type { FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction } from "../ui";
import { DeleteButton, GrantedTo, GrantForm, grantsAcrossProjects, optionalInt, Table, text, useProjects, type GrantRow } from "../widgets";

type Pool = Schemas["MachinePool"];

/**
 * Machine pools (docs/machines.md, "Machine pools"): svc makes machines on demand from a provider the
 * operator enabled (`SVC_MACHINE_PROVIDERS`). List with usage and machines, create, delete; grant a pool
 * to a project and revoke that pool grant (which deletes the machines made through it).
 */
export function Pools({ org }: { org: string }) {
  // The pools, their machines and their grants: all under the pools' key, read again together after a change.
  const poolsKey = keys.org(org, "pools");
  const pools = useQuery({ queryKey: poolsKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/machine-pools", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const machines = useQuery({ queryKey: keys.org(org, "pools", "machines"), queryFn: () => poolMachines(org) });
  const projects = useProjects(org);
  const grants = useQuery({
    queryKey: keys.org(org, "pools", "grants", projects.data?.map((p) => p.id)),
    enabled: projects.data !== undefined,
    queryFn: () => poolGrants(org, projects.data ?? []),
  });
  const invalidate = useInvalidate();
  const revoke = (g: GrantRow) => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/machine-pool-grants/{poolGrantID}", { params: { path: { orgID: org, projectID: g.projectID, poolGrantID: g.grantID } } }));
  const list = pools.data?.data ?? [];
  const machinesOf = (pool: Pool) => (machines.data ?? []).filter((m) => m.machine_pool_id === pool.id);
  const changed = () => void invalidate(poolsKey);
  return (
    <Page title="Machine pools">
      <ErrorNotice error={pools.error ?? machines.error ?? projects.error ?? grants.error} />
      <Table
        label="Machine pools"
        head={["Name", "Provider", "Machines (live / most)", "Machines", "Granted to", ""]}
        empty="No machine pools yet. Create one below to let svc start machines for agents on demand."
        rows={list.map((pool) => [
          pool.name,
          pool.provider,
          `${pool.usage?.machines ?? 0} / ${pool.max_total_machines}`,
          machinesOf(pool).map((m) => `${m.display_name} (${m.connection_state})`).join(", ") || <span className="muted small">none</span>,
          <GrantedTo what={pool.name} grants={grants.data?.get(pool.id) ?? (grants.data ? [] : undefined)} revoke={revoke} revoked={changed} />,
          <DeleteButton label={`Delete pool ${pool.name}, its grants and its machines`} name={`pool ${pool.name}`} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/machine-pools/{poolID}", { params: { path: { orgID: org, poolID: pool.id } } }))} removed={changed} />,
        ])}
      />
      <NewPool org={org} created={changed} />
      <GrantForm
        what="Pool"
        projects={projects.data}
        items={list.map((p) => ({ id: p.id, name: p.name }))}
        grant={(poolID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/machine-pool-grants", { params: { path: { orgID: org, projectID } }, body: { machine_pool_id: poolID } }))}
        granted={changed}
      />
    </Page>
  );
}

function NewPool({ org, created }: { org: string; created: () => void }) {
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const idle = optionalInt(form, "idle");
    const cwd = text(form, "cwd");
    const body = {
      name: text(form, "name"),
      provider: text(form, "provider"),
      max_total_machines: Number(text(form, "max")),
      ...(cwd ? { default_cwd: cwd } : {}),
      ...(idle !== undefined ? { delete_after_idle_minutes: idle } : {}),
    };
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/machine-pools", { params: { path: { orgID: org } }, body }));
      formEl.reset();
      created();
    });
  };
  return (
    <>
      <h2>Create a pool</h2>
      <form onSubmit={submit} className="inline-form" aria-label="Create a pool">
        <Field label="Pool name" id="pool-name">
          <input id="pool-name" name="name" required maxLength={64} />
        </Field>
        <Field label="Provider" id="pool-provider" hint="One the operator enabled in SVC_MACHINE_PROVIDERS, e.g. local.">
          <input id="pool-provider" name="provider" required defaultValue="local" />
        </Field>
        <Field label="Most machines at once" id="pool-max">
          <input id="pool-max" name="max" type="number" min={0} required inputMode="numeric" />
        </Field>
        <Field label="Working directory (optional)" id="pool-cwd">
          <input id="pool-cwd" name="cwd" />
        </Field>
        <Field label="Delete idle machines after (minutes, optional)" id="pool-idle">
          <input id="pool-idle" name="idle" type="number" min={5} inputMode="numeric" />
        </Field>
        <button className="primary" disabled={action.busy}>
          Create pool
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </>
  );
}

/** Each pool's grants, from every project's pool grant list. */
function poolGrants(org: string, projects: Schemas["Project"][]): Promise<Map<string, GrantRow[]>> {
  return grantsAcrossProjects(
    projects,
    async (projectID) => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/machine-pool-grants", { params: { path: { orgID: org, projectID }, query: { limit: 100 } } }))).data,
    ({ grant }) => ({ grantID: grant.id, grants: grant.machine_pool_id }),
  );
}

/** The organization's pool machines with their pool: the machines list leaves the pool out, each machine has it. */
async function poolMachines(org: string): Promise<Schemas["Machine"][]> {
  const visible = (await call(api.GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID: org }, query: { limit: 100, source_kind: "pool" } } }))).data;
  return Promise.all(visible.map((m) => call(api.GET("/api/v1/orgs/{orgID}/machines/{machineID}", { params: { path: { orgID: org, machineID: m.id } } }))));
}
