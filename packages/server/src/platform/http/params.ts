import { notFound } from "../errors.js";
import { decodeId, type IdKind } from "../ids.js";

/** The org and project ids of a `/orgs/{orgID}/projects/{projectID}/…` path. */
export function projectPath(params: { orgID: string; projectID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("project", params.projectID)];
}

/** The UUID behind a path id; a malformed or wrong-kind id is a 404, as if nothing were there. */
export function pathId(kind: IdKind, value: string): string {
  const uuid = decodeId(kind, value);
  if (!uuid) throw notFound();
  return uuid;
}
