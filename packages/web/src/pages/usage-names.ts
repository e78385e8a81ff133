import { useQueries, useQuery, type UseQueryOptions } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { keys } from "../query";
import { isApiError } from "../ui";

/*
 * The names the Usage page shows instead of ids (docs/usage-and-budgets.md): each id shown is looked up
 * once through the resource's own GET, under the key the resource's page reads it by, so the lookup is
 * cached and a rename there reads it again here. Models have no GET of their own: their names come from
 * each provider's models list, as the Models page reads them. An id that no longer resolves is a deleted
 * resource: a short id and "(deleted)".
 */

export type GroupKey = "project" | "agent" | "actor" | "model";

/** A group as the usage API answers it: its id, and the project an agent or actor belongs to. */
export interface GroupRef {
  /** The project's, agent's, actor's or model's id; for actors, `key:<id>` for an API key and "" for nobody. */
  id: string;
  project: string;
}

/** Names are stable: a lookup is read again after this long, or when its resource's page changes it. */
const NAME_STALE_MS = 5 * 60_000;
const API_KEY_PREFIX = "key:";

export function apiKeyGroup(apiKeyId: string): string {
  return API_KEY_PREFIX + apiKeyId;
}

/** An id cut short enough to sit in a legend, still telling ids apart by their start. */
export function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 13)}…` : id;
}

/** A lookup whose answer is the name; its error a 404 when the resource is gone. */
type Lookup = UseQueryOptions<unknown, Error, string>;

/** One resource read by its GET, kept whole in the cache (other pages read the same key), showing its name. */
function named<T>(options: { queryKey: readonly unknown[]; queryFn: () => Promise<T>; select: (data: T) => string }): Lookup {
  return {
    ...options,
    // The cache holds what queryFn answered, so select receives a T; useQueries' list needs one type.
    select: options.select as (data: unknown) => string,
    staleTime: NAME_STALE_MS,
    // A 404 is an answer (deleted), not a failure worth retrying.
    retry: (failures, error) => !isApiError(error, 404) && failures < 1,
  };
}

function lookup(org: string, group: Exclude<GroupKey, "model">, ref: GroupRef): Lookup {
  if (group === "project") {
    return named({
      queryKey: keys.projects(org, ref.id),
      queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}", { params: { path: { orgID: org, projectID: ref.id } } })),
      select: (project) => project.name,
    });
  }
  if (group === "agent") {
    return named({
      // The agent page's own key and answer: one cache entry for both.
      queryKey: keys.agent(org, ref.project, ref.id, "detail"),
      queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path: { orgID: org, projectID: ref.project, agentID: ref.id } } })),
      select: ({ agent }) => agent.name || shortId(agent.id),
    });
  }
  if (ref.id.startsWith(API_KEY_PREFIX)) {
    const keyID = ref.id.slice(API_KEY_PREFIX.length);
    return named({
      queryKey: keys.org(org, "api-keys", keyID),
      queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/api-keys/{keyID}", { params: { path: { orgID: org, keyID } } })),
      select: (key) => `key ${key.name}`,
    });
  }
  return named({
    queryKey: keys.project(org, ref.project, "actors", ref.id),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/actors/{actorID}", { params: { path: { orgID: org, projectID: ref.project, actorID: ref.id } } })),
    select: actorName,
  });
}

/** An actor as a person knows them: their display name, else their id at their provider. */
export function actorName(actor: Schemas["Actor"]): string {
  return actor.display_name ?? `${actor.provider} ${actor.provider_user_id}`;
}

/** What an id shows while its name loads, when it may not be read (403), and when it is gone (404). */
function fallback(group: GroupKey, id: string, error: unknown): string {
  if (group === "actor" && id === "") return "no actor";
  const short = group === "actor" && id.startsWith(API_KEY_PREFIX) ? `key ${shortId(id.slice(API_KEY_PREFIX.length))}` : shortId(id);
  return isApiError(error, 404) ? `${short} (deleted)` : short;
}

/** The organization's configured models by id, from every provider's models list (first 100 of each). */
function useModelNames(org: string, enabled: boolean): { names: Map<string, string>; loaded: boolean } {
  const providers = useQuery({
    queryKey: keys.org(org, "model-providers"),
    enabled,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: org }, query: { limit: 100 } } })),
  });
  const lists = useQueries({
    queries: (enabled ? (providers.data?.data ?? []) : []).map((provider) => ({
      queryKey: keys.org(org, "model-providers", provider.id, "models"),
      queryFn: () =>
        call(api.GET("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path: { orgID: org, modelProviderConfigID: provider.id }, query: { limit: 100 } } })),
    })),
  });
  const names = new Map<string, string>();
  for (const list of lists) for (const model of list.data?.data ?? []) names.set(model.id, model.name);
  return { names, loaded: providers.isSuccess && lists.every((l) => l.isSuccess) };
}

/** The name to show for each group id in `shown` (and only those: the lookups are bounded by what is shown). */
export function useGroupNames(org: string, group: GroupKey, shown: GroupRef[]): (id: string) => string {
  const models = useModelNames(org, group === "model" && shown.length > 0);
  const resolvable = group === "model" ? [] : shown.filter((ref) => ref.id !== "");
  const answers = useQueries({ queries: resolvable.map((ref) => lookup(org, group as Exclude<GroupKey, "model">, ref)) });
  const names = new Map<string, string>();
  resolvable.forEach((ref, i) => {
    const answer = answers[i];
    names.set(ref.id, answer?.data ?? fallback(group, ref.id, answer?.error));
  });
  return (id) => {
    if (group === "model") return models.names.get(id) ?? (models.loaded ? `${shortId(id)} (deleted)` : shortId(id));
    return names.get(id) ?? fallback(group, id, undefined);
  };
}
