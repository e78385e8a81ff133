import { useRef, useState, type FormEvent } from "react";
import { api, ApiError, call, type Schemas } from "../api/client";
import { CONFIG_ISSUES_ID, ConfigEditor, ConfigIssues, type ConfigEditorHandle } from "../editor";
import { navigate, useLocation } from "../router";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../query";
import { ErrorNotice, Field, Link, Page, useAction } from "../ui";

/** A first config, naming a model the project may use (or a placeholder while it has none). */
function starter(model?: { provider_config: string; name: string }): string {
  return `version: v1
instruction: |
  You are a helpful agent.
model:
  provider_config: ${model?.provider_config ?? "openai"}
  name: ${model?.name ?? "fast"}
`;
}

/**
 * Launch from a YAML config: the config is checked by svc (POST …/agent-configs), whose issues carry the
 * line and column they are at; the console lists them beside the editor and marks those lines.
 */
export function Launch({ org, project }: { org: string; project: string }) {
  const [edited, setEdited] = useState<string>();
  const granted = useQuery({
    queryKey: keys.project(org, project, "model-grants", "first"),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: project }, query: { limit: 1 } } })),
  });
  const model = granted.data?.data[0]?.model;
  // Launched from a config's page (`?config=acfg_…`): the editor starts from that config's text.
  const from = useLocation().query.get("config");
  const base = useQuery({
    queryKey: keys.project(org, project, "configs", from ?? ""),
    enabled: from !== null,
    staleTime: Infinity,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs/{agentConfigID}", { params: { path: { orgID: org, projectID: project, agentConfigID: from! } } })),
  });
  // The starter names a model the project really has, so the editor opens once that is known: text
  // replaced under a person's cursor would lose what they typed.
  const ready = from !== null ? base.data !== undefined || base.error !== undefined : granted.data !== undefined || granted.error !== undefined;
  const source = edited ?? (ready ? (base.data?.source ?? starter(model)) : "");
  const [issues, setIssues] = useState<Schemas["ErrorIssue"][]>([]);
  const editor = useRef<ConfigEditorHandle>(null);
  const action = useAction({ invalidates: [keys.agents(org, project)] });
  const path = { orgID: org, projectID: project };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get("name") ?? "").trim();
    const message = String(form.get("message") ?? "").trim();
    setIssues([]);
    void action.run(async () => {
      try {
        const config = await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs", { params: { path }, body: { source, source_format: "yaml" } }));
        const body = { config: config.id, ...(name ? { name } : {}), ...(message ? { message } : {}) };
        const launched = await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path }, body }));
        navigate(`/orgs/${org}/projects/${project}/agents/${launched.agent.id}`);
      } catch (err) {
        if (err instanceof ApiError) setIssues(err.issues);
        throw err;
      }
    });
  };

  return (
    <Page title="Launch an agent">
      {granted.data && !model ? (
        <p role="status" className="card">
          This project may use no model yet: add one under <Link to={`/orgs/${org}/models`}>Models</Link> and grant it to the project first.
        </p>
      ) : null}
      <ErrorNotice error={base.error} />
      <p className="muted small">
        The config names the model (<code>model:</code>), and may give the agent a connected machine (<code>machine_sources: [{"{"}machine_name: my-laptop{"}"}]</code>, which
        brings the <code>run_command</code> tool) and ask before each command (<code>machine_tools: {"{"}permission: {"{"}mode: always_ask{"}"}{"}"}</code>). docs/agent-configs.md
        describes every field.
      </p>
      <form onSubmit={submit} className="launch">
        <Field label="Name (optional)" id="agent-name">
          <input id="agent-name" name="name" maxLength={64} />
        </Field>
        <div className="field">
          <label htmlFor="config-source" id="config-source-label">Config (YAML)</label>
          <ConfigEditor
            ref={editor}
            id="config-source"
            labelledBy="config-source-label"
            org={org}
            project={project}
            value={source}
            disabled={!ready}
            invalid={issues.length > 0}
            issues={issues}
            {...(issues.length > 0 ? { describedBy: CONFIG_ISSUES_ID } : {})}
            onChange={setEdited}
          />
        </div>
        <ConfigIssues issues={issues} editor={editor} />
        <Field label="Opening message (optional)" id="agent-message">
          <textarea id="agent-message" name="message" rows={3} />
        </Field>
        <ErrorNotice error={action.error} />
        <button className="primary" disabled={action.busy}>
          Launch
        </button>
      </form>
    </Page>
  );
}
