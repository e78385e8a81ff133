import { Type, type Static } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { AVAILABILITY_SOURCES, OWNER_KINDS, Tagged } from "../secrets/schemas.js";
import { component } from "../../platform/http/components.js";
import type { OwnedGrantApi } from "../grants/owned-schemas.js";

export const TAG = "Skills";

export { AVAILABILITY_SOURCES, OWNER_KINDS };
export type { AvailabilitySource, OwnerKind } from "../secrets/schemas.js";

const strict = { additionalProperties: false } as const;

export const SkillOwnerInput = component("SkillOwnerInput", Tagged(
  "kind",
  {
    org: component("OrgSkillOwnerInput", Type.Object({ kind: Type.Literal("org") }, strict)),
    project: component("ProjectSkillOwnerInput", Type.Object({ kind: Type.Literal("project"), project_id: Id("project") }, strict)),
    user: component("UserSkillOwnerInput", Type.Object({ kind: Type.Literal("user") }, strict)),
  },
  "Who owns the skill; immutable. A user-owned skill belongs to the caller.",
));
export type SkillOwnerInput = Static<typeof SkillOwnerInput>;

export const SkillOwner = component("SkillOwner", Type.Union([
  component("OrgSkillOwner", Type.Object({ kind: Type.Literal("org") }, strict)),
  component("ProjectSkillOwner", Type.Object({ kind: Type.Literal("project"), project_id: Id("project") }, strict)),
  component("UserSkillOwner", Type.Object({ kind: Type.Literal("user"), user_id: Id("user") }, strict)),
]));

export const SkillName = component("SkillName", Type.String({ minLength: 1, maxLength: 64, pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$" }));
export const SkillFile = component("SkillFile", Type.Object({ path: Type.String(), size: Type.Integer({ minimum: 0 }) }, strict));

export const Skill = component("Skill", Type.Object(
  {
    id: Id("skill"),
    org_id: Id("org"),
    owner: SkillOwner,
    name: SkillName,
    revision_id: Id("skillRevision"),
    revision: Type.Integer({ minimum: 1 }),
    description: Type.String(),
    skill_md: Type.Optional(Type.String({ description: "The current revision's SKILL.md. Given by get, create and update; lists leave it out." })),
    files: Type.Optional(Type.Array(SkillFile, { description: "The current revision's files, SKILL.md included. Lists leave it out." })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

/** Grants to other projects (modules/grants): the routes' names and the rights their descriptions state. */
export const SKILL_GRANTS: OwnedGrantApi = {
  noun: "skill",
  title: "Skill",
  subjectId: "skill",
  grantId: "skillGrant",
  tag: TAG,
  targetRight: "project.manage",
  history: "revisions",
};

export const SkillAvailability = component("SkillAvailability", Type.Union([
  Type.Object({ source: Type.Literal("direct") }, strict),
  Type.Object({ source: Type.Literal("grant"), grant_id: Id("skillGrant") }, strict),
]));
export const ProjectSkillAccess = component("ProjectSkillAccess", Type.Object({ skill: Skill, project_id: Id("project"), availability: SkillAvailability }, strict));

const Archive = Type.String({ format: "binary", description: "A .zip or .tar.gz of at most 25 MiB holding SKILL.md and any supporting files." });

/** Documentation only: multipart bodies are read and checked as they stream (upload.ts). */
export const CreateSkillRequest = component("CreateSkillRequest", Type.Object({ owner: SkillOwnerInput, archive: Archive }, strict));
export const UpdateSkillRequest = component("UpdateSkillRequest", Type.Object(
  {
    archive: Type.Optional(Archive),
    skill_md: Type.Optional(Type.String({ description: "Replacement SKILL.md; every other file of the current revision is kept." })),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1, description: "Exactly one of archive and skill_md." },
));

export const ListSkillsQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    owner_kind: Type.Optional(Type.Enum([...OWNER_KINDS])),
    owner_project_id: Type.Optional(Id("project")),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const ListProjectSkillsQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    owner_kind: Type.Optional(Type.Enum([...OWNER_KINDS])),
    availability_source: Type.Optional(Type.Enum([...AVAILABILITY_SOURCES])),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const SkillParams = Type.Object({ orgID: Id("org"), skillID: Id("skill") });
export const ProjectSkillsParams = Type.Object({ orgID: Id("org"), projectID: Id("project") });
