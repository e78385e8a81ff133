import { useState } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Link, Page, useLoad, when } from "../ui";

/** The project's agents with their state, a page at a time (the API's cursor). */
export function AgentsList({ org, project }: { org: string; project: string }) {
  const [cursor, setCursor] = useState<string | undefined>();
  const page = useLoad(
    () =>
      call(
        api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", {
          params: { path: { orgID: org, projectID: project }, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [org, project, cursor],
  );
  const base = `/orgs/${org}/projects/${project}`;
  return (
    <Page title="Agents" actions={<Link className="button primary" to={`${base}/launch`}>Launch an agent</Link>}>
      <ErrorNotice error={page.error} />
      {page.data && page.data.data.length === 0 && !cursor ? <GettingStarted org={org} project={project} /> : null}
      <ul className="list" aria-label="Agents">
        {page.data?.data.map((agent: Schemas["Agent"]) => (
          <li key={agent.id}>
            <Link to={`${base}/agents/${agent.id}`}>{agent.name}</Link>
            <span className={`badge state-${agent.state}`}>{agent.state}</span>
            <span className="muted small">
              {agent.model.name} · updated {when(agent.updated_at)}
            </span>
          </li>
        ))}
      </ul>
      {page.data?.next_cursor ? (
        <button type="button" className="secondary" onClick={() => setCursor(page.data!.next_cursor ?? undefined)}>
          Next page
        </button>
      ) : null}
    </Page>
  );
}

/** What a new project needs before its first agent, in order, each step a link to the page that does it. */
function GettingStarted({ org, project }: { org: string; project: string }) {
  return (
    <section className="card" aria-labelledby="start-title">
      <h2 id="start-title">No agents yet. Getting started</h2>
      <ol className="steps">
        <li>
          <Link to={`/orgs/${org}/secrets`}>Secrets</Link>: add your model provider's API key as an organization secret.
        </li>
        <li>
          <Link to={`/orgs/${org}/models`}>Models</Link>: add a model provider using that secret, add a model to it and grant the model to this project.
        </li>
        <li>
          <Link to={`/orgs/${org}/machines`}>Machines</Link> (optional): connect this computer, so agents can run commands on it.
        </li>
        <li>
          <Link to={`/orgs/${org}/projects/${project}/launch`}>Launch an agent</Link> from a config that names the model, and watch it work.
        </li>
      </ol>
    </section>
  );
}
