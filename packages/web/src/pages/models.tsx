import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, whyDisabled, Why } from "../ui";
import { DeleteButton, optionalInt, ProjectSelect, Table, text, useProjects } from "../widgets";

type Provider = Schemas["ModelProviderConfig"];
type ApiFormat = Provider["api_format"];
const FORMATS: ApiFormat[] = ["openai-responses", "openai-chat-completions", "anthropic-messages"];

/**
 * Model providers and their configured models (docs/agent-configs.md names them in `model:`): add a
 * provider config whose API key is an existing generic organization secret, add models to it, delete
 * either, and grant or revoke a model for a chosen project.
 */
export function Models({ org }: { org: string }) {
  // The providers, each one's models under them: a deleted provider reads its models again too.
  const providersKey = keys.org(org, "model-providers");
  const providers = useQuery({ queryKey: providersKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const projects = useProjects(org);
  const [project, setProject] = useState<string>();
  // The project last opened in this tab (the shell remembers it), else the first.
  const remembered = projects.data?.find((p) => p.id === sessionStorage.getItem(`svc:project:${org}`))?.id;
  const chosen = project ?? remembered ?? projects.data?.[0]?.id;
  const grantsKey = keys.project(org, chosen ?? "", "model-grants");
  const grants = useQuery({
    queryKey: grantsKey,
    enabled: chosen !== undefined,
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: chosen! }, query: { limit: 100 } } }))).data,
  });
  const invalidate = useInvalidate();
  const action = useAction({ invalidates: [grantsKey] });
  const grant = (modelID: string) =>
    void action.run(async () => {
      if (!chosen) return;
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: chosen } }, body: { configured_model_id: modelID } }));
    });
  const revoke = (grantID: string) =>
    void action.run(async () => {
      if (!chosen) return;
      await call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants/{modelGrantID}", { params: { path: { orgID: org, projectID: chosen, modelGrantID: grantID } } }));
    });
  const grantOf = new Map(grants.data?.map((g) => [g.model.id, g.grant.id]));
  return (
    <Page title="Models">
      <ErrorNotice error={providers.error ?? projects.error ?? grants.error ?? action.error} />
      <ProjectSelect id="models-project" label="Project to grant models to" projects={projects.data} value={chosen ?? ""} onChange={setProject} />
      <p className="muted small">Models granted to this project can be named in its agent configs.</p>
      {providers.data?.data.length === 0 ? <p className="muted">No model providers yet. Add one below.</p> : null}
      {providers.data?.data.map((provider) => (
        <ProviderModels key={provider.id} org={org} provider={provider} grantOf={grantOf} busy={action.busy} grant={grant} revoke={revoke} changed={() => void invalidate(providersKey, grantsKey)} />
      ))}
      <NewProvider org={org} created={() => void invalidate(providersKey)} />
    </Page>
  );
}

function ProviderModels(props: {
  org: string;
  provider: Provider;
  grantOf: Map<string, string>;
  busy: boolean;
  grant: (id: string) => void;
  revoke: (grantID: string) => void;
  changed: () => void;
}) {
  const { org, provider } = props;
  const path = { orgID: org, modelProviderConfigID: provider.id };
  const modelsKey = keys.org(org, "model-providers", provider.id, "models");
  const models = useQuery({ queryKey: modelsKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path, query: { limit: 100 } } })) });
  const add = useAction({ invalidates: [modelsKey] });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    // The generated type makes the two schema defaults required; these are those defaults.
    const body = { name: text(form, "name"), provider_model_slug: text(form, "slug"), context_window_tokens: Number(text(form, "context")), supports_tools: true, supports_reasoning: false };
    void add.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path }, body }));
      formEl.reset();
    });
  };
  const id = provider.id;
  return (
    <section aria-label={`Provider ${provider.name}`} className="provider">
      <div className="page-head">
        <h2>
          {provider.name} <span className="muted small">{provider.api_format} · {provider.base_url}</span>
        </h2>
        <DeleteButton label={`Delete provider ${provider.name} and its models`} name={`provider ${provider.name}`} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}", { params: { path } }))} removed={props.changed} />
      </div>
      <ErrorNotice error={models.error} />
      <Table
        label={`Models of ${provider.name}`}
        head={["Model", "Provider model", "Context window", "Project access", ""]}
        empty="No configured models."
        rows={(models.data?.data ?? []).map((m) => {
          const grantID = props.grantOf.get(m.id);
          return [
            m.name,
            m.provider_model_slug,
            String(m.context_window_tokens),
            grantID ? (
              <span className="actions">
                <span className="badge ok">granted</span>
                <button type="button" className="secondary small-button" disabled={props.busy} onClick={() => props.revoke(grantID)} aria-label={`Revoke ${m.name} from the project`}>
                  Revoke
                </button>
              </span>
            ) : (
              <button type="button" className="secondary small-button" disabled={props.busy} onClick={() => props.grant(m.id)} aria-label={`Grant ${m.name} to the project`}>
                Grant
              </button>
            ),
            <DeleteButton label={`Delete model ${m.name}`} name={`model ${m.name}`} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models/{configuredModelID}", { params: { path: { ...path, configuredModelID: m.id } } }))} removed={props.changed} />,
          ];
        })}
      />
      <form onSubmit={submit} className="inline-form" aria-label={`Add a model to ${provider.name}`}>
        <Field label="Model name" id={`${id}-model-name`} hint="The name agent configs use.">
          <input id={`${id}-model-name`} name="name" required maxLength={64} />
        </Field>
        <Field label="Provider model id" id={`${id}-model-slug`} hint="Sent to the provider, e.g. gpt-4.1-mini.">
          <input id={`${id}-model-slug`} name="slug" required maxLength={512} />
        </Field>
        <Field label="Context window (tokens)" id={`${id}-model-context`}>
          <input id={`${id}-model-context`} name="context" type="number" min={2} required inputMode="numeric" />
        </Field>
        <button className="secondary" disabled={add.busy}>
          Add model
        </button>
      </form>
      <ErrorNotice error={add.error} />
    </section>
  );
}

/** The provider's API key is an existing org-owned generic secret (the server refuses any other). */
function NewProvider({ org, created }: { org: string; created: () => void }) {
  const secrets = useQuery({ queryKey: keys.org(org, "secrets", "org-owned"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org }, query: { limit: 100, owner_kind: "org" } } })) });
  const action = useAction();
  const usable = (secrets.data?.data ?? []).filter((s) => s.kind === "generic");
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const timeout = optionalInt(form, "timeout");
    const body = {
      name: text(form, "name"),
      api_format: text(form, "api_format") as ApiFormat,
      base_url: text(form, "base_url"),
      credential_secret_id: text(form, "secret"),
      ...(timeout ? { request_timeout_ms: timeout } : {}),
    };
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: org } }, body }));
      formEl.reset();
      created();
    });
  };
  return (
    <>
      <h2>Add a model provider</h2>
      <ErrorNotice error={secrets.error} />
      {secrets.data && usable.length === 0 ? <p className="muted">First add an organization secret holding the provider's API key (Secrets).</p> : null}
      <form onSubmit={submit} className="inline-form" aria-label="Add a model provider">
        <Field label="Provider name" id="provider-name" hint="The name agent configs use as provider_config.">
          <input id="provider-name" name="name" required maxLength={64} />
        </Field>
        <Field label="API format" id="provider-format">
          <select id="provider-format" name="api_format" defaultValue="openai-chat-completions">
            {FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Base URL" id="provider-url" hint="e.g. https://api.openai.com/v1">
          <input id="provider-url" name="base_url" type="url" required maxLength={2048} />
        </Field>
        <Field label="API key secret" id="provider-secret">
          <select id="provider-secret" name="secret" required>
            {usable.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Request timeout (ms, optional)" id="provider-timeout">
          <input id="provider-timeout" name="timeout" type="number" min={1} inputMode="numeric" />
        </Field>
        <button className="primary" disabled={action.busy || usable.length === 0} {...whyDisabled("provider-why", usable.length === 0 ? NO_SECRET : undefined)}>
          Add provider
        </button>
        <Why id="provider-why" reason={usable.length === 0 ? NO_SECRET : undefined} />
      </form>
      <ErrorNotice error={action.error} />
    </>
  );
}

const NO_SECRET = "Add the provider's API key on the Secrets page first: the provider reads it from a secret.";
