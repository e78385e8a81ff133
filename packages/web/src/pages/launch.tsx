import { useRef, useState, type FormEvent } from "react";
import { api, ApiError, call, type Schemas } from "../api/client";
import { navigate } from "../router";
import { ErrorNotice, Field, Link, Page, useAction, useLoad } from "../ui";

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
  const granted = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: { orgID: org, projectID: project }, query: { limit: 1 } } })), [org, project]);
  const model = granted.data?.data[0]?.model;
  // The starter names a model the project really has, so the editor opens once that is known: text
  // replaced under a person's cursor would lose what they typed.
  const ready = granted.data !== undefined || granted.error !== undefined;
  const source = edited ?? (ready ? starter(model) : "");
  const [issues, setIssues] = useState<Schemas["ErrorIssue"][]>([]);
  const editor = useRef<HTMLTextAreaElement>(null);
  const action = useAction();
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

  /** Puts the caret at an issue's line and column, so the keyboard user lands on it. */
  const goTo = (issue: Schemas["ErrorIssue"]) => {
    const area = editor.current;
    if (!area || !issue.line) return;
    const lines = source.split("\n");
    const offset = lines.slice(0, issue.line - 1).reduce((sum, line) => sum + line.length + 1, 0) + (issue.column ?? 1) - 1;
    area.focus();
    area.setSelectionRange(offset, offset);
  };

  const marked = new Set(issues.map((issue) => issue.line).filter((line): line is number => line !== undefined));
  const lineCount = source.split("\n").length;
  return (
    <Page title="Launch an agent">
      {granted.data && !model ? (
        <p role="status" className="card">
          This project may use no model yet: add one under <Link to={`/orgs/${org}/models`}>Models</Link> and grant it to the project first.
        </p>
      ) : null}
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
          <label htmlFor="config-source">Config (YAML)</label>
          <div className="editor">
            <ol className="gutter" aria-hidden="true">
              {Array.from({ length: lineCount }, (_, i) => (
                <li key={i} className={marked.has(i + 1) ? "marked" : undefined}>
                  {i + 1}
                </li>
              ))}
            </ol>
            <textarea
              id="config-source"
              ref={editor}
              value={source}
              spellCheck={false}
              rows={Math.max(12, lineCount + 1)}
              aria-invalid={issues.length > 0}
              aria-describedby={issues.length > 0 ? "config-issues" : undefined}
              disabled={!ready}
              onChange={(event) => setEdited(event.target.value)}
            />
          </div>
        </div>
        {issues.length > 0 ? (
          <ul id="config-issues" className="issues" aria-label="Problems in the config">
            {issues.map((issue, i) => (
              <li key={i}>
                <button type="button" className="link" onClick={() => goTo(issue)}>
                  {issue.line ? `Line ${issue.line}, column ${issue.column ?? 1}` : issue.path || "Config"}
                </button>
                : {issue.message}
                {issue.path ? <span className="muted small"> ({issue.path})</span> : null}
              </li>
            ))}
          </ul>
        ) : null}
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
