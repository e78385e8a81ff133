import { QueryClient, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useCallback } from "react";

/** The console's one data cache (TanStack Query): lists and resources by key, invalidated after changes. */
export const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: false } } });

/*
 * The cache's keys. They nest, so that invalidating a key also invalidates what sits under it: a secret's
 * grants under the organization's secrets, an agent's interactions and backlog under the agent, every
 * page and filter of a project's agents list under `agents(org, project)`.
 */
export const keys = {
  invitations: () => ["invitations"] as const,
  tokens: () => ["tokens"] as const,
  /** The organization's projects list, then one project by id under it (`projects(org, id)`). */
  projects: (org: string, ...under: unknown[]) => ["projects", org, ...under] as const,
  /** An organization's resources of one kind (`secrets`, `machines`, …), then anything under them. */
  org: (org: string, kind: string, ...under: unknown[]) => ["org", org, kind, ...under] as const,
  /** A project's resources of one kind (`profiles`, `configs`, …), then anything under them. */
  project: (org: string, project: string, kind: string, ...under: unknown[]) => ["project", org, project, kind, ...under] as const,
  /** A project's agents list: every filter and page when `query` is left out. */
  agents: (org: string, project: string, query?: object) => (query ? (["agents", org, project, query] as const) : (["agents", org, project] as const)),
  /** One agent and what hangs from it (`interactions`, `backlog`). */
  agent: (org: string, project: string, agent: string, ...under: unknown[]) => ["agent", org, project, agent, ...under] as const,
  /** An artifact's metadata: it never changes, so it stays outside the agent's key that every event invalidates. */
  artifact: (org: string, project: string, agent: string, artifact: string) => ["artifact", org, project, agent, artifact] as const,
};

/** Marks keys stale and reads again those a page shows; resolves when they have been read. */
export function useInvalidate(): (...stale: QueryKey[]) => Promise<void> {
  const client = useQueryClient();
  return useCallback(async (...stale: QueryKey[]) => {
    await Promise.all(stale.map((queryKey) => client.invalidateQueries({ queryKey })));
  }, [client]);
}
