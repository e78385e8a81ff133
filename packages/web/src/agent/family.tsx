import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Link } from "../ui";
import { keys } from "../query";
import { useProjectLive } from "../project-activity";

/*
 * A coordinator's delegates and a delegate's coordinator (docs/delegation.md): the children launched by
 * this agent (`parent_agent_id` filter), each with its name, what it does now (`activity`) and a link, and
 * for a child a link to its parent and to the top of its tree. The project's activity stream keeps the list
 * current, so a child that finishes, waits for a person or is paused by a budget shows without a reload;
 * while the stream is down it is read again every few seconds while a child is busy.
 */

const BUSY = new Set(["running", "retrying", "waiting", "paused"]);
const PAGE = 50;

export function AgentFamily({ org, project, agent }: { org: string; project: string; agent: Schemas["Agent"] | undefined }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const path = { orgID: org, projectID: project };
  const base = `/orgs/${org}/projects/${project}/agents`;
  const live = useProjectLive();
  const children = useQuery({
    // Under the project's agents lists, which the project's activity stream keeps current.
    queryKey: keys.agents(org, project, { parent_agent_id: agent?.id, sort: "created_at", cursor }),
    enabled: agent !== undefined,
    queryFn: () =>
      call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path, query: { parent_agent_id: agent!.id, sort: "created_at", limit: PAGE, ...(cursor ? { cursor } : {}) } } })),
    refetchInterval: live ? false : (query) => (query.state.data?.data.some((child) => BUSY.has(child.activity.status)) ? 3_000 : 15_000),
  });
  const parentId = agent?.parent_agent_id ?? undefined;
  const parent = useQuery({
    queryKey: ["agent", org, project, parentId],
    enabled: parentId !== undefined,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path: { ...path, agentID: parentId! } } })),
  });
  const kids = children.data?.data ?? [];
  const next = children.data?.next_cursor;
  if (!agent || (!parentId && kids.length === 0 && cursors.length === 0)) return <ErrorNotice error={children.error} />;
  const rootId = agent.root_agent_id;
  return (
    <section aria-labelledby="family-title">
      <h2 id="family-title">Delegation</h2>
      {parentId ? (
        <p>
          Delegate of <Link to={`${base}/${parentId}`}>{parent.data?.agent.name || parentId}</Link>
          {rootId && rootId !== parentId ? (
            <>
              {" "}
              (top: <Link to={`${base}/${rootId}`}>{rootId}</Link>)
            </>
          ) : null}
        </p>
      ) : null}
      <ErrorNotice error={children.error ?? parent.error} />
      {kids.length > 0 ? (
        <>
          <h3 id="children-title">Its delegates</h3>
          <ul className="list" aria-labelledby="children-title">
            {kids.map((child) => (
              <li key={child.id}>
                <Link to={`${base}/${child.id}`}>{child.name || child.id}</Link>{" "}
                <span className={`badge doing-badge doing-${child.activity.status}`}>{child.activity.status}</span>
                {child.activity.detail ? <span className="muted small"> {child.activity.detail}</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {cursors.length > 0 ? (
        <button type="button" className="secondary small-button" onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous delegates
        </button>
      ) : null}
      {next ? (
        <button type="button" className="secondary small-button" onClick={() => setCursors([...cursors, next])}>
          More delegates
        </button>
      ) : null}
    </section>
  );
}
