import { useState } from "react";
import { useQueries, useQuery } from "@tanstack/react-query";
import { api, call, nameContains } from "../api/client";
import { keys } from "../query";
import { Field } from "../ui";
import { useProjects } from "../widgets";
import { actorName } from "./usage-names";

/*
 * What a new budget counts, chosen rather than typed (docs/usage-and-budgets.md): the organization needs no
 * choice; a project is one of the organization's; an agent profile, agent or actor is chosen within its
 * project. Agents are found by name and paged as the API pages them, actors paged likewise. The chosen id is
 * the form's `scope_id`.
 */

export type ScopeKind = "org" | "project" | "agent_profile" | "agent" | "actor";

/** Agents and actors read per page of the picker ("Show more" reads the next one). */
const PAGE = 50;

interface Choice {
  id: string;
  label: string;
}

export function ScopePicker({ org, kind, error }: { org: string; kind: ScopeKind; error: string | undefined }) {
  const projects = useProjects(org);
  const [chosenProject, setProject] = useState<string>();
  const project = chosenProject ?? projects.data?.[0]?.id ?? "";
  if (kind === "org") return null;
  const projectChoices = (projects.data ?? []).map((p) => ({ id: p.id, label: p.name }));
  if (kind === "project") return <ChoiceSelect id="budget-scope-id" label="Project" choices={projectChoices} error={error} />;
  return (
    <>
      <Field label={`The ${kind === "agent_profile" ? "profile" : kind}'s project`} id="budget-scope-project">
        <select id="budget-scope-project" value={project} onChange={(event) => setProject(event.target.value)}>
          {projectChoices.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </Field>
      {project === "" ? null : kind === "agent_profile" ? (
        <ProfileChoice org={org} project={project} error={error} />
      ) : kind === "agent" ? (
        <AgentChoice org={org} project={project} error={error} key={project} />
      ) : (
        <ActorChoice org={org} project={project} error={error} key={project} />
      )}
    </>
  );
}

function ChoiceSelect(props: { id: string; label: string; choices: Choice[]; error: string | undefined; hint?: string }) {
  return (
    <Field label={props.label} id={props.id} error={props.error} {...(props.hint ? { hint: props.hint } : {})}>
      <select id={props.id} name="scope_id" required>
        {props.choices.map((c) => (
          <option key={c.id} value={c.id}>
            {c.label}
          </option>
        ))}
      </select>
    </Field>
  );
}

function ProfileChoice({ org, project, error }: { org: string; project: string; error: string | undefined }) {
  // The Agents page's key and answer for the same list.
  const profiles = useQuery({
    queryKey: keys.project(org, project, "profiles"),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles", { params: { path: { orgID: org, projectID: project }, query: { limit: 100 } } }))).data,
  });
  const choices = (profiles.data ?? []).map((p) => ({ id: p.id, label: p.name }));
  return <ChoiceSelect id="budget-scope-id" label="Agent profile" choices={choices} error={error} {...(profiles.data && choices.length === 0 ? { hint: "This project has no profiles." } : {})} />;
}

/** The pages read so far: the first, then one per "Show more", each by the cursor the one before answered. */
function usePages<T>(read: (cursor: string | undefined) => { queryKey: readonly unknown[]; queryFn: () => Promise<{ data: T[]; next_cursor: string | null }> }) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const pages = useQueries({ queries: cursors.map((cursor) => read(cursor)) });
  const next = pages[pages.length - 1]?.data?.next_cursor ?? null;
  return {
    items: pages.flatMap((p) => p.data?.data ?? []),
    loaded: pages.every((p) => p.isSuccess),
    more: next === null ? undefined : () => setCursors([...cursors, next]),
    restart: () => setCursors([undefined]),
  };
}

function AgentChoice({ org, project, error }: { org: string; project: string; error: string | undefined }) {
  const [search, setSearch] = useState("");
  const name = nameContains(search);
  const pages = usePages((cursor) => {
    // The Agents page's key and query shape: a page read there is not read again here.
    const query = { limit: PAGE, ...(name ? { name } : {}), ...(cursor ? { cursor } : {}) };
    return {
      queryKey: keys.agents(org, project, query),
      queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: org, projectID: project }, query } })),
    };
  });
  return (
    <>
      <Field label="Find an agent by name" id="budget-agent-search">
        <input
          id="budget-agent-search"
          type="search"
          value={search}
          onChange={(event) => {
            setSearch(event.target.value);
            pages.restart();
          }}
        />
      </Field>
      <ChoiceSelect
        id="budget-scope-id"
        label="Agent"
        choices={pages.items.map((a) => ({ id: a.id, label: a.name || a.id }))}
        error={error}
        {...(pages.loaded && pages.items.length === 0 ? { hint: name ? `No active agent's name contains "${search.trim()}".` : "This project has no active agents." } : {})}
      />
      <MoreButton what="agents" more={pages.more} />
    </>
  );
}

function ActorChoice({ org, project, error }: { org: string; project: string; error: string | undefined }) {
  const pages = usePages((cursor) => {
    const query = { limit: PAGE, ...(cursor ? { cursor } : {}) };
    return {
      queryKey: keys.project(org, project, "actors", "list", query),
      queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/actors", { params: { path: { orgID: org, projectID: project }, query } })),
    };
  });
  return (
    <>
      <ChoiceSelect
        id="budget-scope-id"
        label="Actor"
        choices={pages.items.map((a) => ({ id: a.id, label: actorName(a) }))}
        error={error}
        {...(pages.loaded && pages.items.length === 0 ? { hint: "No one has sent this project's agents anything yet." } : {})}
      />
      <MoreButton what="actors" more={pages.more} />
    </>
  );
}

function MoreButton({ what, more }: { what: string; more: (() => void) | undefined }) {
  if (!more) return null;
  return (
    <button type="button" className="secondary small-button" onClick={more}>
      Show more {what}
    </button>
  );
}
