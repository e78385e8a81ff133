import { pathId } from "../../platform/http/params.js";

export function providerPath(params: { orgID: string; modelProviderConfigID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("modelProviderConfig", params.modelProviderConfigID)];
}

export function modelPath(params: { orgID: string; modelProviderConfigID: string; configuredModelID: string }): [string, string, string] {
  return [...providerPath(params), pathId("configuredModel", params.configuredModelID)];
}
