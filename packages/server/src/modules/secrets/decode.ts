import { invalidRequest } from "../../platform/errors.js";
import { pathId } from "../../platform/http/params.js";
import { decodeId, type IdKind } from "../../platform/ids.js";
import { METADATA_PARAM, type OwnerKind, type SecretKind } from "./schemas.js";
import type { SecretFilters } from "./store.js";

/** An id given as a query parameter; the schema checked its shape, this rejects non-canonical ones. */
export function queryId(kind: IdKind, value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  const uuid = decodeId(kind, value);
  if (!uuid) throw invalidRequest(`query parameter ${param}: not a valid id`);
  return uuid;
}

/** The `metadata[key]=value` parameters of a query string as one map. */
export function metadataFilters(query: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [param, value] of Object.entries(query)) {
    const match = METADATA_PARAM.exec(param);
    if (match && typeof value === "string") out[match[1]!] = value;
  }
  return out;
}

export function secretFilters(query: { name?: string; kind?: SecretKind; owner_kind?: OwnerKind }): SecretFilters {
  return { name: query.name, kind: query.kind, ownerKind: query.owner_kind, metadata: metadataFilters(query) };
}

export function secretPath(params: { orgID: string; secretID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("secret", params.secretID)];
}
