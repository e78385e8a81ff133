import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, RelativeTime, whyDisabled, Why } from "../ui";
import { DeleteButton, text } from "../widgets";

type Integration = Schemas["Integration"];
type Kind = Integration["integration_kind"];

/**
 * The project's integrations (docs/integrations.md): create one of a kind from the catalog
 * (`integration-definitions`), connect it with a credential secret the project can use (`…/setup`), see its
 * state and runtime failure (only Get integration carries it), disconnect, reconnect, delete.
 */
export function Integrations({ org, project }: { org: string; project: string }) {
  const path = { orgID: org, projectID: project };
  // Each integration's detail sits under the list's key: a change reads both again.
  const listKey = keys.project(org, project, "integrations");
  const list = useQuery({ queryKey: listKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/integrations", { params: { path, query: { limit: 100 } } })) });
  const secrets = useQuery({ queryKey: keys.project(org, project, "secrets"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/secrets", { params: { path, query: { limit: 100 } } })) });
  const invalidate = useInvalidate();
  const changed = () => invalidate(listKey);
  const items = list.data?.data ?? [];
  return (
    <Page title="Integrations">
      <ErrorNotice error={list.error ?? secrets.error} />
      {list.data && items.length === 0 ? <p className="muted">No integrations yet.</p> : null}
      <ul className="list" aria-label="Integrations">
        {items.map((item) => (
          <IntegrationItem key={item.id} org={org} project={project} summary={item} secrets={secrets.data?.data.map((access) => access.secret) ?? []} changed={changed} />
        ))}
      </ul>
      <NewIntegration org={org} project={project} created={changed} />
    </Page>
  );
}

function NewIntegration({ org, project, created }: { org: string; project: string; created: () => Promise<void> }) {
  const path = { orgID: org, projectID: project };
  const catalog = useQuery({ queryKey: keys.project(org, project, "integration-definitions"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/integration-definitions", { params: { path } })) });
  const action = useAction();
  const [kind, setKind] = useState<Kind>();
  const chosen = catalog.data?.data.find((d) => d.integration_kind === kind) ?? catalog.data?.data[0];
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    if (!chosen) return;
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/integrations", { params: { path }, body: { name: text(form, "name"), integration_kind: chosen.integration_kind } }));
      formEl.reset();
      await created();
    });
  };
  return (
    <>
      <h2>Add an integration</h2>
      <ErrorNotice error={catalog.error} />
      <form onSubmit={submit} className="inline-form" aria-label="Add an integration">
        <Field label="Kind" id="integration-kind">
          <select id="integration-kind" value={chosen?.integration_kind ?? ""} onChange={(event) => setKind(event.target.value as Kind)}>
            {catalog.data?.data.map((d) => (
              <option key={d.integration_kind} value={d.integration_kind}>
                {d.integration_kind}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Integration name" id="integration-name" hint="Letters, digits and dashes, starting with a letter; it never changes.">
          <input id="integration-name" name="name" required maxLength={32} pattern="[a-zA-Z][a-zA-Z0-9\-]{0,31}" />
        </Field>
        <button className="primary" disabled={action.busy || !chosen} {...whyDisabled("integration-why", chosen ? undefined : "Choose the kind of integration first.")}>
          Add integration
        </button>
        <Why id="integration-why" reason={chosen ? undefined : "Choose the kind of integration first."} />
      </form>
      {chosen ? <p className="muted small">{chosen.description}</p> : null}
      <ErrorNotice error={action.error} />
    </>
  );
}

function IntegrationItem(props: { org: string; project: string; summary: Integration; secrets: Schemas["Secret"][]; changed: () => Promise<void> }) {
  const path = { orgID: props.org, projectID: props.project, integrationID: props.summary.id };
  // The list leaves out runtime_failure; the integration itself carries it.
  const detail = useQuery({
    queryKey: keys.project(props.org, props.project, "integrations", props.summary.id),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}", { params: { path } })),
  });
  const action = useAction();
  const it = detail.data ?? props.summary;
  const changed = props.changed;
  const disconnect = () => void action.run(async () => { await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}/disconnect", { params: { path } })); await changed(); });
  const reconnect = () => void action.run(async () => { await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}/reconnect", { params: { path }, body: { expected_setup_revision: it.setup_revision } })); await changed(); });
  return (
    <li className="integration">
      <div className="grow">
        <strong>{it.name}</strong> <span className="badge">{it.integration_kind}</span>{" "}
        <span className={`badge state-${it.state}`}>{it.state}</span>
        <p className="small muted">
          {it.provider_agent_display_name ? `Shown as “${it.provider_agent_display_name}”. ` : ""}
          {it.bot_mention ? `Mention ${it.bot_mention}. ` : ""}
          {it.provider_tenant_id ? `Account ${it.provider_tenant_id}. ` : "Never connected. "}
          Setup revision {it.setup_revision}, updated {<RelativeTime at={it.updated_at} />}.
        </p>
        {it.runtime_failure ? (
          <p className="error small" role="status">
            Failing: {it.runtime_failure.message} (next retry from {<RelativeTime at={it.runtime_failure.retry_at} />})
          </p>
        ) : null}
      </div>
      <div className="actions">
        {it.state === "active" ? (
          <button type="button" className="secondary small-button" disabled={action.busy} onClick={disconnect} aria-label={`Disconnect ${it.name}`}>
            Disconnect
          </button>
        ) : it.credential_secret_id ? (
          <button type="button" className="secondary small-button" disabled={action.busy} onClick={reconnect} aria-label={`Reconnect ${it.name}`}>
            Reconnect
          </button>
        ) : null}
        <DeleteButton label={`Delete integration ${it.name}`} name={it.name} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}", { params: { path } }))} removed={props.changed} />
      </div>
      {it.state === "disconnected" ? <Connect integration={it} secrets={props.secrets} path={path} connected={changed} /> : null}
      <ErrorNotice error={action.error ?? detail.error} />
    </li>
  );
}

/** `…/setup`: the credential is a secret the project can use; setup checks it with the provider. */
function Connect(props: { integration: Integration; secrets: Schemas["Secret"][]; path: { orgID: string; projectID: string; integrationID: string }; connected: () => void }) {
  const action = useAction();
  const it = props.integration;
  const id = it.id;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const display = text(form, "display");
    const body = { expected_setup_revision: it.setup_revision, credential_secret_id: text(form, "secret"), ...(display ? { provider_agent_display_name: display } : {}) };
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}/setup", { params: { path: props.path }, body }));
      props.connected();
    });
  };
  return (
    <form onSubmit={submit} className="inline-form wide-row" aria-label={`Connect ${it.name}`}>
      <Field label={`Credential secret for ${it.name}`} id={`${id}-secret`}>
        <select id={`${id}-secret`} name="secret" required defaultValue={it.credential_secret_id}>
          {props.secrets.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} ({s.kind})
            </option>
          ))}
        </select>
      </Field>
      <Field label="Display name (optional)" id={`${id}-display`}>
        <input id={`${id}-display`} name="display" maxLength={512} defaultValue={it.provider_agent_display_name} />
      </Field>
      <button className="primary" disabled={action.busy || props.secrets.length === 0} {...whyDisabled(`${id}-why`, props.secrets.length === 0 ? NO_CREDENTIAL : undefined)}>
        Connect
      </button>
      <Why id={`${id}-why`} reason={props.secrets.length === 0 ? NO_CREDENTIAL : undefined} />
      <ErrorNotice error={action.error} />
    </form>
  );
}

const NO_CREDENTIAL = "Add its credentials as a secret on the Secrets page first (Slack or GitHub app credentials, or a bot token).";
