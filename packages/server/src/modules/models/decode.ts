import type { Sort } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import type { Page } from "./providers-store.js";

export function pageOf(query: { limit?: number; cursor?: string; sort?: string }): Page {
  return { limit: query.limit ?? 50, cursor: query.cursor, sort: (query.sort ?? "-created_at") as Sort };
}

export function providerPath(params: { orgID: string; modelProviderConfigID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("modelProviderConfig", params.modelProviderConfigID)];
}

export function modelPath(params: { orgID: string; modelProviderConfigID: string; configuredModelID: string }): [string, string, string] {
  return [...providerPath(params), pathId("configuredModel", params.configuredModelID)];
}

export function projectPath(params: { orgID: string; projectID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("project", params.projectID)];
}
