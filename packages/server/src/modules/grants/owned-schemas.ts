import { Type } from "typebox";
import { component } from "../../platform/http/components.js";
import { Cursor, GrantSort, Limit, NameFilter } from "../../platform/http/lists.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import type { IdKind } from "../../platform/ids.js";
import { Project } from "../orgs/schemas.js";

const strict = { additionalProperties: false } as const;

/** How the API names one kind of owned resource and its grants (`secret`, `secretGrant`, `Secret`). */
export interface OwnedGrantNames {
  /** The resource in paths, fields and prose: `/orgs/{orgID}/secrets/{secretID}`, `secret_id`. */
  noun: "secret" | "skill";
  /** Its component names' stem: `SecretGrant`. */
  title: string;
  subjectId: IdKind;
  grantId: IdKind;
}

/** One kind's grant routes as the API documents them. */
export interface OwnedGrantApi extends OwnedGrantNames {
  tag: string;
  /** The right the target project asks of whoever grants (the kind's project manage right). */
  targetRight: string;
  /** What else of the resource survives a revoked grant: "versions", "revisions". */
  history: string;
}

/** The request and response schemas of one kind's grant routes (`routes.ts` beside this file). */
export function ownedGrantSchemas(names: OwnedGrantNames) {
  const { noun, title, subjectId, grantId } = names;
  const param = `${noun}ID`;
  const Grant = component(
    `${title}Grant`,
    Type.Object(
      { id: Id(grantId), org_id: Id("org"), [`${noun}_id`]: Id(subjectId), target_project_id: Id("project"), created_at: Timestamp },
      strict,
    ),
  );
  return {
    Grant,
    ListItem: component(`${title}GrantListItem`, Type.Object({ grant: Grant, target_project: Project }, strict)),
    CreateRequest: component(`${title}GrantCreateRequest`, Type.Object({ target_project_id: Id("project") }, strict)),
    ListQuery: Type.Object(
      { name: Type.Optional(NameFilter), sort: Type.Optional(GrantSort), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
      strict,
    ),
    Params: Type.Object({ orgID: Id("org"), [param]: Id(subjectId) }),
    GrantParams: Type.Object({ orgID: Id("org"), [param]: Id(subjectId), grantID: Id(grantId) }),
  };
}
