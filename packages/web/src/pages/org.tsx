import { useState, type FormEvent, type ReactNode } from "react";
import { api, call } from "../api/client";
import { ErrorNotice, Field, Page, useAction, useLoad, when } from "../ui";

/*
 * The organization's settings pages: each a list (first page of the API's cursor list) and the one form
 * that adds to it. A secret or token value is shown once, as the API gives it once.
 */

function Table(props: { label: string; head: string[]; rows: ReactNode[][]; empty: string }) {
  if (props.rows.length === 0) return <p className="muted">{props.empty}</p>;
  return (
    <div className="table-wrap">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                <td key={j}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Shown({ label, value }: { label: string; value: string | undefined }) {
  if (!value) return null;
  return (
    <div className="card shown" role="status">
      <p>{label}</p>
      <pre className="copy">{value}</pre>
      <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(value)}>
        Copy
      </button>
    </div>
  );
}

/** "Grant <one of items> to <project>": the access grants of machines and secrets (docs/machines.md, the spec's Secrets). */
function GrantForm(props: { what: string; items: Array<{ id: string; name: string }>; org: string; grant: (itemID: string, projectID: string) => Promise<unknown> }) {
  const projects = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: props.org }, query: { limit: 100 } } })), [props.org]);
  const action = useAction();
  const [done, setDone] = useState<string>();
  if (props.items.length === 0) return null;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const item = props.items.find((i) => i.id === form.get("item"));
    const project = projects.data?.data.find((p) => p.id === form.get("project"));
    if (!item || !project) return;
    setDone(undefined);
    void action.run(async () => {
      await props.grant(item.id, project.id);
      setDone(`${item.name} is granted to ${project.name}.`);
    });
  };
  const id = props.what.toLowerCase();
  return (
    <>
      <h2>Grant a {id} to a project</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label={props.what} id={`grant-${id}`}>
          <select id={`grant-${id}`} name="item">
            {props.items.map((i) => (
              <option key={i.id} value={i.id}>
                {i.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="To project" id={`grant-${id}-project`}>
          <select id={`grant-${id}-project`} name="project">
            {projects.data?.data.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <button className="secondary" disabled={action.busy}>
          Grant
        </button>
      </form>
      <ErrorNotice error={action.error ?? projects.error} />
      {done ? <p role="status">{done}</p> : null}
    </>
  );
}

function text(form: FormData, name: string): string {
  return String(form.get(name) ?? "").trim();
}

export function Machines({ org }: { org: string }) {
  const list = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
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
  return (
    <Page title="Machines">
      <ErrorNotice error={list.error} />
      <Table
        label="Machines"
        head={["Name", "Kind", "State", "Connection", "Last seen"]}
        empty="No machines yet."
        rows={(list.data?.data ?? []).map((m) => [m.display_name, m.source_kind, m.lifecycle_state, <span className={`badge conn-${m.connection_state}`}>{m.connection_state}</span>, when(m.last_observed_at ?? undefined)])}
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
        org={org}
        items={(list.data?.data ?? []).filter((m) => m.source_kind === "byo").map((m) => ({ id: m.id, name: m.display_name }))}
        grant={(machineID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants", { params: { path: { orgID: org, projectID } }, body: { machine_id: machineID } }))}
      />
    </Page>
  );
}

export function Secrets({ org }: { org: string }) {
  const list = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const action = useAction();
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
  return (
    <Page title="Secrets">
      <ErrorNotice error={list.error} />
      <Table
        label="Secrets"
        head={["Name", "Owner", "Kind", "Version", "Updated"]}
        empty="No secrets yet."
        rows={(list.data?.data ?? []).map((s) => [s.name, s.owner.kind, s.kind, String(s.current_version_number), when(s.updated_at)])}
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
        org={org}
        items={(list.data?.data ?? []).filter((x) => x.owner.kind === "org").map((x) => ({ id: x.id, name: x.name }))}
        grant={(secretID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path: { orgID: org, secretID } }, body: { target_project_id: projectID } }))}
      />
    </Page>
  );
}

export function Models({ org }: { org: string }) {
  const providers = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const projects = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const [project, setProject] = useState<string>();
  const chosen = project ?? projects.data?.data[0]?.id;
  const grants = useLoad(
    async () => (chosen ? (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: chosen }, query: { limit: 100 } } }))).data : []),
    [org, chosen],
  );
  const action = useAction();
  const grant = (modelID: string) =>
    void action.run(async () => {
      if (!chosen) return;
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: chosen } }, body: { configured_model_id: modelID } }));
      grants.reload();
    });
  const granted = new Set(grants.data?.map((g) => g.model.id));
  return (
    <Page title="Models">
      <ErrorNotice error={providers.error ?? projects.error ?? grants.error ?? action.error} />
      <Field label="Project to grant models to" id="models-project" hint="Models granted to this project can be named in its agent configs.">
        <select id="models-project" value={chosen ?? ""} onChange={(event) => setProject(event.target.value)}>
          {projects.data?.data.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
      {providers.data?.data.length === 0 ? <p className="muted">No model providers yet. Add one through the API (docs/agent-configs.md).</p> : null}
      {providers.data?.data.map((provider) => (
        <ProviderModels key={provider.id} org={org} provider={provider} granted={granted} busy={action.busy} grant={grant} />
      ))}
    </Page>
  );
}

function ProviderModels(props: { org: string; provider: { id: string; name: string; api_format: string }; granted: Set<string>; busy: boolean; grant: (id: string) => void }) {
  const { org, provider } = props;
  const models = useLoad(
    () => call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path: { orgID: org, modelProviderConfigID: provider.id }, query: { limit: 100 } } })),
    [provider.id],
  );
  return (
    <section aria-label={`Provider ${provider.name}`}>
      <h2>
        {provider.name} <span className="muted small">{provider.api_format}</span>
      </h2>
      <ErrorNotice error={models.error} />
      <Table
        label={`Models of ${provider.name}`}
        head={["Model", "Provider model", "Context window", "Project access"]}
        empty="No configured models."
        rows={(models.data?.data ?? []).map((m) => [
          m.name,
          m.provider_model_slug,
          String(m.context_window_tokens),
          props.granted.has(m.id) ? (
            "granted"
          ) : (
            <button type="button" className="secondary" disabled={props.busy} onClick={() => props.grant(m.id)} aria-label={`Grant ${m.name} to the project`}>
              Grant
            </button>
          ),
        ])}
      />
    </section>
  );
}

export function Members({ org }: { org: string }) {
  const members = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/members", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const invitations = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/invitations", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const keys = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/api-keys", { params: { path: { orgID: org }, query: { limit: 100 } } })), [org]);
  const invite = useAction();
  const keyAction = useAction();
  const [token, setToken] = useState<string>();
  const submitInvite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void invite.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/invitations", { params: { path: { orgID: org } }, body: { email: text(form, "email"), role: form.get("role") === "admin" ? "admin" : "member" } }));
      formEl.reset();
      invitations.reload();
    });
  };
  const submitKey = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void keyAction.run(async () => {
      const made = await call(api.POST("/api/v1/orgs/{orgID}/api-keys", { params: { path: { orgID: org } }, body: { name: text(form, "name"), org_role: form.get("role") === "admin" ? "admin" : "member" } }));
      setToken(made.token);
      keys.reload();
    });
  };
  return (
    <Page title="Members">
      <ErrorNotice error={members.error ?? invitations.error ?? keys.error} />
      <Table label="Members" head={["Name", "Email", "Role", "Since"]} empty="No members." rows={(members.data?.data ?? []).map((m) => [m.display_name, m.email, m.role, when(m.created_at)])} />
      <h2>Invitations</h2>
      <Table label="Invitations" head={["Email", "Role", "Sent"]} empty="No open invitations." rows={(invitations.data?.data ?? []).map((i) => [i.email, i.org_role, when(i.created_at)])} />
      <form onSubmit={submitInvite} className="inline-form">
        <Field label="Email" id="invite-email">
          <input id="invite-email" name="email" type="email" required />
        </Field>
        <RoleField id="invite-role" />
        <button className="primary" disabled={invite.busy}>
          Invite
        </button>
      </form>
      <ErrorNotice error={invite.error} />
      <h2>Organization API keys</h2>
      <Table
        label="Organization API keys"
        head={["Name", "Role", "Created", "Last used", "Revoked"]}
        empty="No API keys."
        rows={(keys.data?.data ?? []).map((k) => [k.name, k.org_role, when(k.created_at), when(k.last_used_at ?? undefined), when(k.revoked_at ?? undefined)])}
      />
      <form onSubmit={submitKey} className="inline-form">
        <Field label="Key name" id="key-name">
          <input id="key-name" name="name" required maxLength={64} />
        </Field>
        <RoleField id="key-role" />
        <button className="primary" disabled={keyAction.busy}>
          Create key
        </button>
      </form>
      <ErrorNotice error={keyAction.error} />
      <Shown label="The new key (shown once):" value={token} />
    </Page>
  );
}

function RoleField({ id }: { id: string }) {
  return (
    <Field label="Role" id={id}>
      <select id={id} name="role" defaultValue="member">
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
    </Field>
  );
}

export function Tokens() {
  const list = useLoad(() => call(api.GET("/api/v1/personal-access-tokens", { params: { query: { limit: 100 } } })), []);
  const action = useAction();
  const [token, setToken] = useState<string>();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      const made = await call(api.POST("/api/v1/personal-access-tokens", { body: { name: text(form, "name") } }));
      setToken(made.token);
      list.reload();
    });
  };
  const revoke = (tokenID: string) =>
    void action.run(async () => {
      await call(api.POST("/api/v1/personal-access-tokens/{tokenID}/revoke", { params: { path: { tokenID } } }));
      list.reload();
    });
  return (
    <Page title="Personal access tokens">
      <ErrorNotice error={list.error} />
      <Table
        label="Personal access tokens"
        head={["Name", "Created", "Last used", ""]}
        empty="No tokens yet."
        rows={(list.data?.data ?? []).map((t) => [
          t.name,
          when(t.created_at),
          when(t.last_used_at ?? undefined),
          t.revoked_at ? `revoked ${when(t.revoked_at)}` : (
            <button type="button" className="secondary" disabled={action.busy} onClick={() => revoke(t.id)} aria-label={`Revoke ${t.name}`}>
              Revoke
            </button>
          ),
        ])}
      />
      <form onSubmit={submit} className="inline-form">
        <Field label="Token name" id="token-name">
          <input id="token-name" name="name" required maxLength={64} />
        </Field>
        <button className="primary" disabled={action.busy}>
          Create token
        </button>
      </form>
      <ErrorNotice error={action.error} />
      <Shown label="The new token (shown once):" value={token} />
    </Page>
  );
}
