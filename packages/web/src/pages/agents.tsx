import { useEffect, useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { api, call, nameContains, type Schemas } from "../api/client";
import { keys } from "../query";
import { useProjectLive } from "../project-activity";
import { Empty, ErrorNotice, Link, Page, RelativeTime } from "../ui";
import { Table } from "../widgets";

export type ActivityStatus = Schemas["AgentActivity"]["status"];

/** The agents list's search parameters (the route validates them): name search, activity filter, archived, page. */
export interface AgentsSearch {
  q?: string;
  activity?: Exclude<ActivityStatus, "archived">;
  archived?: boolean;
  /** Only the delegates this coordinator launched (the API's `parent_agent_id` filter, docs/delegation.md). */
  parent?: string;
  cursor?: string;
}

const FILTERS: Array<{ value: AgentsSearch["activity"] | ""; label: string }> = [
  { value: "", label: "Any activity" },
  { value: "running", label: "Running" },
  { value: "retrying", label: "Retrying" },
  { value: "waiting", label: "Waiting for a person" },
  { value: "paused", label: "Paused by a budget" },
  { value: "idle", label: "Idle" },
  { value: "failed", label: "Failed" },
  { value: "cancelled", label: "Cancelled" },
];

/** Without the activity stream: how long the list waits before reading again while an agent in it is busy. */
const LIVE_MS = 3_000;

/**
 * The project's agents as a table: what each is doing now (its `activity`, from the server), last
 * activity, model, profile. Search by name, filter by activity or archived, paged as the API pages.
 */
export function AgentsList({ org, project, search }: { org: string; project: string; search: AgentsSearch }) {
  const to = useNavigate();
  const { q, activity, archived, parent, cursor } = search;
  const name = nameContains(q ?? "");
  const query = {
    limit: 50,
    ...(parent ? { parent_agent_id: parent } : {}),
    ...(name ? { name } : {}),
    ...(archived ? { state: "archived" as const } : {}),
    ...(activity && !archived ? { activity } : {}),
    ...(cursor ? { cursor } : {}),
  };
  const live = useProjectLive();
  const page = useQuery({
    queryKey: keys.agents(org, project, query),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: org, projectID: project }, query } })),
    // The project's activity stream keeps it current (project-activity.tsx); while the stream is down, read
    // again often while something in the list is moving, so a retry or a finished turn still shows.
    refetchInterval: live ? false : (current) => (current.state.data?.data.some((a) => ["running", "retrying"].includes(a.activity.status)) ? LIVE_MS : 15_000),
  });
  const profiles = useQuery({
    queryKey: keys.project(org, project, "profiles"),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles", { params: { path: { orgID: org, projectID: project }, query: { limit: 100 } } }))).data,
  });
  const profileName = new Map(profiles.data?.map((p) => [p.id, p.name]) ?? []);
  const base = `/orgs/${org}/projects/${project}`;
  const setSearch = (next: Partial<AgentsSearch>) =>
    void to({ to: "/orgs/$org/projects/$project/agents", params: { org, project }, search: (prev: AgentsSearch) => clean({ ...prev, cursor: undefined, ...next }) });
  const agents = page.data?.data ?? [];
  const filtered = Boolean(q || activity || archived || parent);
  const nameOnPage = new Map(agents.map((a) => [a.id, a.name || a.id]));
  return (
    <Page
      title="Agents"
      actions={
        <div className="flex items-center gap-2">
          <span className={live ? "badge ok" : "badge"} title={live ? "The list changes as the agents do" : "Connecting to the project's activity; the list is read again every few seconds meanwhile"}>
            {live ? "live" : "connecting"}
          </span>
          <Link className="button primary" to={`${base}/launch`}>Launch an agent</Link>
        </div>
      }
    >
      <Filters search={search} setSearch={setSearch} />
      {parent ? (
        <p className="my-2">
          Delegates of <ParentLink org={org} project={project} parent={parent} known={nameOnPage.get(parent)} />.{" "}
          <button type="button" className="link" onClick={() => setSearch({ parent: undefined })}>
            Show every agent
          </button>
        </p>
      ) : null}
      <ErrorNotice error={page.error} />
      {page.data && agents.length === 0 && !cursor && !filtered ? <GettingStarted org={org} project={project} /> : null}
      {page.data && agents.length === 0 && filtered ? (
        <Empty title="No agents match.">
          <p>
            <button type="button" className="link" onClick={() => setSearch({ q: undefined, activity: undefined, archived: undefined, parent: undefined })}>
              Clear the filters
            </button>{" "}
            to see every active agent.
          </p>
        </Empty>
      ) : null}
      {agents.length > 0 ? (
        <Table
          label="Agents"
          head={["Name", "Activity", "Last activity", "Model", "Profile", "Parent"]}
          empty=""
          rows={agents.map((agent) => [
            <Link to={`${base}/agents/${agent.id}`} className="font-semibold whitespace-nowrap">
              {agent.name || agent.id}
            </Link>,
            <ActivityBadge activity={agent.activity} />,
            <RelativeTime at={agent.activity.since} />,
            <span className="mono text-sm whitespace-nowrap">{agent.model.name}</span>,
            agent.agent_profile_id ? (profileName.get(agent.agent_profile_id) ?? <span className="text-muted">deleted profile</span>) : <span className="text-muted">none</span>,
            agent.parent_agent_id ? (
              <ParentLink org={org} project={project} parent={agent.parent_agent_id} known={nameOnPage.get(agent.parent_agent_id)} />
            ) : (
              <span className="text-muted">none</span>
            ),
          ])}
        />
      ) : null}
      <div className="mt-3 flex gap-2">
        {cursor ? (
          <button type="button" className="secondary" onClick={() => setSearch({})}>
            First page
          </button>
        ) : null}
        {page.data?.next_cursor ? (
          <button type="button" className="secondary" onClick={() => void to({ to: "/orgs/$org/projects/$project/agents", params: { org, project }, search: (prev: AgentsSearch) => clean({ ...prev, cursor: page.data!.next_cursor ?? undefined }) })}>
            Next page
          </button>
        ) : null}
      </div>
    </Page>
  );
}

/**
 * The coordinator that launched an agent, linked to its page by name. A parent on another page of the list
 * is read by itself, into the cache its own page uses.
 */
function ParentLink({ org, project, parent, known }: { org: string; project: string; parent: string; known: string | undefined }) {
  const read = useQuery({
    queryKey: keys.agent(org, project, parent, "detail"),
    enabled: known === undefined,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path: { orgID: org, projectID: project, agentID: parent } } })),
  });
  const name = known ?? (read.data?.agent.name || parent);
  return (
    <Link to={`/orgs/${org}/projects/${project}/agents/${parent}`} className="whitespace-nowrap">
      {name}
    </Link>
  );
}

function clean(search: AgentsSearch): AgentsSearch {
  return Object.fromEntries(Object.entries(search).filter(([, v]) => v !== undefined && v !== "" && v !== false)) as AgentsSearch;
}

function Filters({ search, setSearch }: { search: AgentsSearch; setSearch: (next: Partial<AgentsSearch>) => void }) {
  const [text, setText] = useState(search.q ?? "");
  useEffect(() => setText(search.q ?? ""), [search.q]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSearch({ q: text.trim() || undefined });
  };
  return (
    <form role="search" aria-label="Filter agents" onSubmit={submit} className="my-3 flex flex-wrap items-end gap-3">
      <div className="field m-0 min-w-48 flex-1">
        <label htmlFor="agents-search">Search by name</label>
        <input id="agents-search" type="search" value={text} onChange={(event) => setText(event.target.value)} placeholder="Part of a name, then Enter" />
      </div>
      <div className="field m-0">
        <label htmlFor="agents-activity">Activity</label>
        <select
          id="agents-activity"
          value={search.activity ?? ""}
          disabled={search.archived === true}
          aria-describedby={search.archived ? "agents-activity-why" : undefined}
          onChange={(event) => setSearch({ activity: (event.target.value || undefined) as AgentsSearch["activity"] })}
        >
          {FILTERS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
        {search.archived ? (
          <span id="agents-activity-why" className="small muted">
            Archived agents do nothing: untick Archived to filter by activity.
          </span>
        ) : null}
      </div>
      <label className="inline m-0 min-h-10">
        <input type="checkbox" checked={search.archived === true} onChange={(event) => setSearch({ archived: event.target.checked || undefined })} />
        Archived
      </label>
      <button className="secondary">Search</button>
    </form>
  );
}

const TONE: Record<ActivityStatus, string> = {
  running: "border-accent text-accent",
  retrying: "border-warn text-warn",
  waiting: "border-accent bg-accent text-accent-fg",
  paused: "border-warn text-warn",
  idle: "border-line text-muted",
  failed: "border-danger text-danger",
  cancelled: "border-line text-muted",
  archived: "border-line text-muted",
};

/** What the agent is doing now, and in words why (the retry's failure, what it waits for). */
export function ActivityBadge({ activity, state }: { activity: Schemas["AgentActivity"]; state?: string }) {
  const label =
    activity.status === "retrying" && activity.attempt && activity.max_attempts ? `retrying (attempt ${activity.attempt} of ${activity.max_attempts})` : activity.status;
  return (
    <span className="inline-flex flex-col gap-0.5">
      <span className={`badge activity-${activity.status} ${state ? `state-${state}` : ""} w-fit ${TONE[activity.status]}`}>{label}</span>
      {activity.detail ? <span className="small muted overflow-wrap-anywhere">{activity.detail}</span> : null}
    </span>
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
