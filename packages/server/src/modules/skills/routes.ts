import multipart from "@fastify/multipart";
import type { FastifySchemaCompiler } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../platform/errors.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { validatorCompiler } from "../../platform/http/validation.js";
import { OrgParams } from "../orgs/schemas.js";
import { queryId } from "../secrets/decode.js";
import { skillAccessRoutes, skillPath } from "./access-routes.js";
import * as s from "./schemas.js";
import type { SkillsService } from "./service.js";
import { MULTIPART_LIMITS, readSkillForm } from "./upload.js";
import { skillSummaryView, skillView } from "./views.js";

/** Every skills route: the org-level resource and its revisions, its grants and the project views. */
export async function skillRoutes(app: HttpApp, deps: { skills: SkillsService }) {
  const { skills } = deps;

  app.get(
    "/orgs/:orgID/skills",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listSkills",
        summary: "List skills",
        description:
          "Skills the caller may list through their owner, newest first. Without owner_kind: the org's skills, the skills " +
          "of each project the caller can read, and the caller's own user skills. owner_project_id is required with " +
          "owner_kind=project and rejected otherwise. Items leave out skill_md and files; get a skill for them.",
        params: OrgParams,
        querystring: s.ListSkillsQuery,
        response: { 200: Page(s.Skill), ...errorResponses() },
      },
    },
    async (request) => {
      const { query } = request;
      const page = pageOf(query);
      const rows = await skills.listSkills(request.principal!, pathId("org", request.params.orgID), {
        filters: { name: query.name, ownerKind: query.owner_kind },
        ownerProjectId: queryId("project", query.owner_project_id, "owner_project_id"),
        page,
      });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), skillSummaryView);
    },
  );

  app.get(
    "/orgs/:orgID/skills/:skillID",
    { schema: { tags: [s.TAG], operationId: "getSkill", summary: "Get a skill", description: "One skill with its current revision's files.", params: s.SkillParams, response: { 200: s.Skill, ...errorResponses() } } },
    async (request) => skillView(await skills.getSkill(request.principal!, ...skillPath(request.params))),
  );

  app.delete(
    "/orgs/:orgID/skills/:skillID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteSkill",
        summary: "Delete a skill",
        description: "Deletes the skill with every revision, grant and archive. Refused (409) while an active agent's config attaches it.",
        params: s.SkillParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await skills.deleteSkill(request.principal!, ...skillPath(request.params));
      return reply.status(204).send(null);
    },
  );

  // The multipart parser lives in this scope only: every other route keeps answering 415 to a form.
  await app.register(async (uploads) => {
    await uploads.register(multipart, { limits: MULTIPART_LIMITS });
    skillUploadRoutes(uploads, skills);
  });

  skillAccessRoutes(app, deps);
}

/**
 * The body schemas of the upload routes document their forms; the forms are read and checked by
 * `readSkillForm` as they stream in, so the body validator lets everything through to it.
 */
const formsCheckedInHandler: FastifySchemaCompiler<unknown> = (route) => (route.httpPart === "body" ? () => true : validatorCompiler(route));

function skillUploadRoutes(app: HttpApp, skills: SkillsService) {
  app.post(
    "/orgs/:orgID/skills",
    {
      validatorCompiler: formsCheckedInHandler,
      schema: {
        tags: [s.TAG],
        operationId: "createSkill",
        summary: "Upload a skill",
        description:
          "Uploads a skill archive (multipart/form-data: owner as JSON, archive as a .zip or .tar.gz of at most 25 MiB). " +
          "SKILL.md at the archive's root or inside one top folder named as the skill names it in its front matter. If the " +
          "owner already has a skill of that name, the upload becomes its next revision. Archives with links, devices, " +
          "absolute paths or .. are refused, as are more than 1,000 entries, 100 MiB extracted or a SKILL.md over 256 KiB.",
        params: OrgParams,
        body: { content: { "multipart/form-data": { schema: s.CreateSkillRequest } } },
        response: { 201: s.Skill, ...errorResponses(409, 413, 415) },
      },
    },
    async (request, reply) => {
      const form = await readSkillForm(request, ["owner", "archive"]);
      if (!form.owner || !form.archive) throw missing(form.owner ? "archive" : "owner");
      const { owner } = form;
      const ownerInput = owner.kind === "project" ? { kind: owner.kind, projectId: pathId("project", owner.project_id) } : { kind: owner.kind };
      const created = await skills.createSkill(request.principal!, pathId("org", request.params.orgID), { owner: ownerInput, archive: form.archive });
      return reply.status(201).send(skillView(created));
    },
  );

  app.post(
    "/orgs/:orgID/skills/:skillID",
    {
      validatorCompiler: formsCheckedInHandler,
      schema: {
        tags: [s.TAG],
        operationId: "updateSkill",
        summary: "Upload a skill revision",
        description:
          "Uploads the skill's next revision (multipart/form-data): a whole new archive, or skill_md alone, which keeps " +
          "every other file of the current revision. SKILL.md must keep the skill's name.",
        params: s.SkillParams,
        body: { content: { "multipart/form-data": { schema: s.UpdateSkillRequest } } },
        response: { 200: s.Skill, ...errorResponses(409, 413, 415) },
      },
    },
    async (request) => {
      const form = await readSkillForm(request, ["archive", "skill_md"]);
      if (form.archive && form.skillMd !== undefined) throw onlyOne();
      const input = form.archive ? { archive: form.archive } : form.skillMd !== undefined ? { skillMd: form.skillMd } : undefined;
      if (!input) throw onlyOne();
      return skillView(await skills.updateSkill(request.principal!, ...skillPath(request.params), input));
    },
  );
}

function missing(field: string) {
  return new AppError("validation_failed", "request body failed validation", { issues: [{ path: `/${field}`, message: "is required" }] });
}

function onlyOne() {
  return new AppError("validation_failed", "request body failed validation", { issues: [{ path: "", message: "send exactly one of archive and skill_md" }] });
}
