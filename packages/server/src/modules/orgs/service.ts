import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { AppError, conflict, idempotencyConflict, notFound } from "../../platform/errors.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import { newUuid } from "../../platform/ids.js";
import type { Sort } from "../../platform/http/lists.js";
import { forgetOrgAfterCommit, lockOrgForChange, requireOrg, requireProject } from "./access.js";
import { orgOverview } from "./overview.js";
import { effectiveProjectRole, type OrgRole, type ProjectRole } from "./policy.js";
import * as store from "./store.js";

export const DEFAULT_PROJECT_NAME = "Default";

export function createOrgService(deps: { db: Database }) {
  const { db } = deps;

  return {
    /** Creates an org, its first project and the creator's owner membership in one transaction. */
    async createOrg(principal: UserPrincipal, name: string, idempotencyKey?: string) {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          const org = await store.insertOrg(tx, { id: newUuid(), name, createdByUserId: principal.userId, idempotencyKey });
          if (!org) return replayOrg(tx, principal.userId, idempotencyKey!, name);
          const project = await store.insertProject(tx, { id: newUuid(), orgId: org.id, name: DEFAULT_PROJECT_NAME });
          const membership = await store.insertMembership(tx, { id: newUuid(), orgId: org.id, userId: principal.userId, role: "owner" });
          return { created: true, org, project: project!, membership };
        }),
      );
    },

    async getOrg(principal: Principal, orgId: string) {
      return db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        return { org: (await store.findOrg(tx, orgId))!, role: access.orgRole };
      });
    },

    async deleteOrg(principal: Principal, orgId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.own");
        await lockOrgForChange(tx, orgId);
        await store.deleteOrg(tx, orgId);
      });
    },

    async listProjects(principal: Principal, orgId: string, page: { limit: number; cursor?: string; sort: Sort; name?: string }) {
      return db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        const rows = await store.listVisibleProjects(tx, { id: access.membershipId, orgId, role: access.orgRole }, page);
        return rows.map((r) => ({ project: r.project, role: effectiveProjectRole(access.orgRole, r.explicitRole as ProjectRole | null) }));
      });
    },

    /** The console's overview of an org: visible projects and recent agents and profiles (`overview.ts`). */
    async overview(principal: Principal, orgId: string) {
      return db.tx((tx) => orgOverview(tx, principal, orgId));
    },

    async createProject(principal: Principal, orgId: string, name: string, idempotencyKey?: string) {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          if (idempotencyKey) {
            const existing = await store.findProjectByIdempotencyKey(tx, orgId, idempotencyKey);
            if (existing) {
              if (existing.name !== name) throw idempotencyConflict();
              return { created: false, project: existing };
            }
          }
          if (await store.findProjectByName(tx, orgId, name)) throw projectNameTaken(name);
          const project = await store.insertProject(tx, { id: newUuid(), orgId, name, idempotencyKey });
          if (!project) throw projectNameTaken(name);
          return { created: true, project };
        }),
      );
    },

    async getProject(principal: Principal, orgId: string, projectId: string) {
      return db.tx(async (tx) => {
        const access = await requireProject(tx, principal, orgId, projectId);
        return { project: access.project, role: access.projectRole };
      });
    },

    async renameProject(principal: Principal, orgId: string, projectId: string, name: string) {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          const access = await requireProject(tx, principal, orgId, projectId, "project.manage");
          if (access.project.name === name) return { project: access.project, role: access.projectRole };
          const other = await store.findProjectByName(tx, orgId, name);
          if (other) throw projectNameTaken(name);
          const project = await store.renameProject(tx, orgId, projectId, name);
          if (!project) throw notFound("project");
          forgetOrgAfterCommit(tx, orgId);
          return { project, role: access.projectRole };
        }),
      );
    },

    async deleteProject(principal: Principal, orgId: string, projectId: string): Promise<void> {
      await db.tx(async (tx) => {
        // A project the caller cannot see is a 404 whether or not it exists (issue 9, F7); one it can
        // see but may not delete is a 403.
        await requireProject(tx, principal, orgId, projectId);
        await requireOrg(tx, principal, orgId, "org.manage");
        await store.deleteProject(tx, orgId, projectId);
        forgetOrgAfterCommit(tx, orgId);
      });
    },

    /** For /me: the orgs a user belongs to, with the role held. */
    orgsOfUser: (tx: Tx, userId: string) =>
      store.orgsOfUser(tx, userId).then((rows) => rows.map((r) => ({ ...r, role: r.role as OrgRole }))),
  };

  async function replayOrg(tx: Tx, userId: string, key: string, name: string) {
    const org = await store.findOrgByIdempotencyKey(tx, userId, key);
    if (!org) throw conflict("organization could not be created; try again");
    if (org.name !== name) throw idempotencyConflict();
    const project = await store.firstProject(tx, org.id);
    const membership = await store.findUserMembership(tx, org.id, userId);
    if (!project || !membership) throw idempotencyConflict();
    return { created: false, org, project, membership };
  }
}

export type OrgService = ReturnType<typeof createOrgService>;
export type { ProjectRole };

function projectNameTaken(name: string): AppError {
  return conflict(`a project named "${name}" already exists in this organization`);
}

/** Two concurrent creations of one name both pass the check; the unique index settles it as a 409. */
async function withNameConflict<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "projects_org_name")) throw conflict("a project with this name already exists in this organization");
    throw err;
  }
}
