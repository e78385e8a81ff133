import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { useQueryClient, type QueryClient, type QueryKey } from "@tanstack/react-query";
import { activityStreamUrl, type Schemas } from "./api/client";
import { keys } from "./query";

type Agent = Schemas["Agent"];

/** The query object of a cached agents list (the API's filters, and the header's `waiting`). */
interface ListQuery {
  activity?: string;
  state?: "active" | "archived";
  parent_agent_id?: string;
  cursor?: string;
  waiting?: boolean;
}

/** A cached agents list: a page of the API, or the bare array the header keeps. */
type CachedList = { data: Agent[] } | Agent[];

/** How often, at most, a list the stream made stale is read again. */
const REREAD_MS = 1_000;

const Live = createContext(false);

/** Whether the project's activity stream is open: lists then wait for it instead of polling. */
export function useProjectLive(): boolean {
  return useContext(Live);
}

/**
 * Follows the project's activity stream (GET …/activity/stream) while mounted. Each `agent` frame replaces that
 * agent in every cached list of the project's agents (the agents table, the header's waiting list, a
 * coordinator's delegates), or takes it out of a list whose filter it no longer matches; a list it may now
 * belong to is read again, at most once a second. The stream carries changes only, so every list is read
 * again when it (re)connects and on a `resync` frame.
 */
export function ProjectActivity({ org, project, children }: { org: string | undefined; project: string | undefined; children: ReactNode }) {
  const client = useQueryClient();
  const [live, setLive] = useState(false);
  useEffect(() => {
    if (!org || !project) return;
    const source = new EventSource(activityStreamUrl(org, project));
    const stale = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const rereadSoon = (key: QueryKey) => {
      stale.add(JSON.stringify(key));
      timer ??= setTimeout(() => {
        timer = undefined;
        for (const each of stale) void client.invalidateQueries({ queryKey: JSON.parse(each) as QueryKey, exact: true });
        stale.clear();
      }, REREAD_MS);
    };
    const rereadAll = () => void client.invalidateQueries({ queryKey: keys.agents(org, project) });
    source.onopen = () => {
      setLive(true);
      rereadAll();
    };
    source.onerror = () => setLive(false);
    source.addEventListener("resync", rereadAll);
    source.addEventListener("agent", (frame) => applyAgent(client, org, project, JSON.parse((frame as MessageEvent<string>).data) as Agent, rereadSoon));
    return () => {
      source.close();
      clearTimeout(timer);
      setLive(false);
    };
  }, [client, org, project]);
  return <Live.Provider value={live}>{children}</Live.Provider>;
}

function applyAgent(client: QueryClient, org: string, project: string, agent: Agent, rereadSoon: (key: QueryKey) => void): void {
  for (const [key, cached] of client.getQueriesData<CachedList>({ queryKey: keys.agents(org, project) })) {
    if (!cached) continue;
    const query = (key[3] ?? {}) as ListQuery;
    const items = Array.isArray(cached) ? cached : cached.data;
    const fits = matches(query, agent);
    const at = items.findIndex((item) => item.id === agent.id);
    if (at < 0) {
      // Launched, or newly matching the filter: only a first page can say where it goes.
      if (fits && !query.cursor) rereadSoon(key);
      continue;
    }
    const next = fits ? items.map((item, i) => (i === at ? agent : item)) : items.filter((_, i) => i !== at);
    client.setQueryData<CachedList>(key, Array.isArray(cached) ? next : { ...cached, data: next });
    // A page that lost a row is refilled from the next one.
    if (!fits) rereadSoon(key);
  }
}

/** Whether `agent` belongs in a list read with `query` (a name filter is kept: names do not change here). */
function matches(query: ListQuery, agent: Agent): boolean {
  if ((query.state === "archived") !== (agent.state === "archived")) return false;
  const activity = query.waiting ? "waiting" : query.activity;
  if (activity && !activity.split(",").includes(agent.activity.status)) return false;
  return !query.parent_agent_id || agent.parent_agent_id === query.parent_agent_id;
}
