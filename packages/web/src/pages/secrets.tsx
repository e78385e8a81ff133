import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Field, Page, useAction, useLoad, when } from "../ui";
import { DeleteButton, GrantedTo, GrantForm, Table, text, useProjects } from "../widgets";

/**
 * The secrets the caller may see: add an organization secret (its value is never shown again), grant an
 * organization secret to a project, see and revoke its grants (`…/secrets/{id}/grants`), delete it.
 */
export function Secrets({ org }: { org: string }) {
  const list = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const projects = useProjects(org);
  const action = useAction();
  // A new grant remounts the grant lists, which then load again.
  const [grantRound, setGrantRound] = useState(0);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void action.run(async () => {
      // openapi-typescript drops the schema's if/then branches, so the generic material's `value` is typed here.
      await call(api.POST("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org } }, body: { owner: { kind: "org" }, name: text(form, "name"), material: { kind: "generic", value: String(form.get("value")) } as { kind: "generic" } } }));
      formEl.reset();
      list.reload();
    });
  };
  const secrets = list.data?.data ?? [];
  return (
    <Page title="Secrets">
      <ErrorNotice error={list.error ?? projects.error} />
      <Table
        label="Secrets"
        head={["Name", "Owner", "Kind", "Version", "Updated", "Granted to", ""]}
        empty="No secrets yet."
        rows={secrets.map((s) => [
          s.name,
          s.owner.kind,
          s.kind,
          String(s.current_version_number),
          when(s.updated_at),
          s.owner.kind === "org" ? <SecretGrants org={org} secret={s} key={`${s.id}-${grantRound}`} /> : <span className="small muted">its owner only</span>,
          <DeleteButton label={`Delete secret ${s.name}`} name={s.name} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}", { params: { path: { orgID: org, secretID: s.id } } }))} removed={list.reload} />,
        ])}
      />
      <h2>Add an organization secret</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label="Name" id="secret-name">
          <input id="secret-name" name="name" required maxLength={64} />
        </Field>
        <Field label="Value" id="secret-value">
          <input id="secret-value" name="value" type="password" autoComplete="off" required />
        </Field>
        <button className="primary" disabled={action.busy}>
          Add secret
        </button>
      </form>
      <ErrorNotice error={action.error} />
      <GrantForm
        what="Secret"
        projects={projects.data}
        items={secrets.filter((x) => x.owner.kind === "org").map((x) => ({ id: x.id, name: x.name }))}
        grant={(secretID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path: { orgID: org, secretID } }, body: { target_project_id: projectID } }))}
        granted={() => setGrantRound((n) => n + 1)}
      />
    </Page>
  );
}

function SecretGrants({ org, secret }: { org: string; secret: Schemas["Secret"] }) {
  const path = { orgID: org, secretID: secret.id };
  const grants = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path, query: { limit: 100 } } })), [secret.id]);
  return (
    <>
      <ErrorNotice error={grants.error} />
      <GrantedTo
        what={secret.name}
        grants={grants.data?.data.map((g) => ({ grantID: g.grant.id, projectID: g.target_project.id, projectName: g.target_project.name }))}
        revoke={(g) => call(api.DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}/grants/{grantID}", { params: { path: { ...path, grantID: g.grantID } } }))}
        revoked={grants.reload}
      />
    </>
  );
}
