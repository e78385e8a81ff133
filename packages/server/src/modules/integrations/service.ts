import type { Database } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound, type AppError } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import type { KindCatalog } from "./capability-schemas.js";
import type { IntegrationKind, IntegrationKinds } from "./kind.js";
import { projectsAllowing, requireOrg, requireProject } from "../orgs/access.js";
import { checkSettings } from "./settings.js";
import * as store from "./store.js";

/**
 * The Integration resource (spec: Integration; Integrations endpoints): reading needs project.read,
 * changing project.manage. Name and kind are fixed at creation; settings edits never touch the
 * credential or setup_revision. Connecting lives in setup-service.ts.
 */
export function createIntegrationsService(deps: { db: Database; kinds: IntegrationKinds; catalog: KindCatalog }) {
  const { db, kinds, catalog } = deps;

  return {
    async create(principal: Principal, orgId: string, projectId: string, input: { name: string; kind: string; settings: Record<string, unknown> }) {
      const kind = kindOf(kinds, input.kind);
      try {
        return await db.tx(async (tx) => {
          await requireProject(tx, principal, orgId, projectId, "project.manage");
          await checkSettings(tx, catalog, orgId, projectId, kind, input.settings);
          const row = await store.insertIntegration(tx, { id: newUuid(), orgId, projectId, name: input.name, kind: kind.name, settings: input.settings });
          if (!row) throw nameTaken(input.name);
          return row;
        });
      } catch (err) {
        if (isUniqueViolation(err, "integrations_project_name")) throw nameTaken(input.name);
        throw err;
      }
    },

    async listInProject(principal: Principal, orgId: string, projectId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.read");
        return store.listIntegrations(tx, { orgId, projects: projectId, name: query.name, page: query.page });
      });
    },

    /** Every integration of the org in a project the caller can read (spec: GET /orgs/{orgID}/integrations). */
    async listInOrg(principal: Principal, orgId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        return store.listIntegrations(tx, { orgId, projects: projectsAllowing(access, "project.read"), name: query.name, page: query.page });
      });
    },

    async get(principal: Principal, orgId: string, projectId: string, integrationId: string) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.read");
        return requireIntegration(await store.findIntegration(tx, orgId, projectId, integrationId));
      });
    },

    /** Replaces the settings only (spec: PUT …/integrations/{integrationID}); setup_revision stays. */
    async updateSettings(principal: Principal, orgId: string, projectId: string, integrationId: string, settings: Record<string, unknown>) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        const row = requireIntegration(await store.findIntegration(tx, orgId, projectId, integrationId, "update"));
        await checkSettings(tx, catalog, orgId, projectId, kindOf(kinds, row.kind), settings);
        return store.updateIntegration(tx, orgId, row.id, { settings }, false);
      });
    },

    /**
     * Deletes the integration with its subscriptions and pending OAuth flows, and so releases its
     * credential reference (the secret stays, and can be deleted now). Agents and their history stay.
     */
    async remove(principal: Principal, orgId: string, projectId: string, integrationId: string) {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        if (!(await store.deleteIntegration(tx, orgId, projectId, integrationId))) throw notFound("integration");
      });
    },

    async definitions(principal: Principal, orgId: string, projectId: string): Promise<IntegrationKind[]> {
      await db.tx((tx) => requireProject(tx, principal, orgId, projectId, "project.read"));
      return [...kinds.values()];
    },
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;

export function requireIntegration(row: store.IntegrationRow | undefined): store.IntegrationRow {
  if (!row) throw notFound("integration");
  return row;
}

/** The implemented kind (a stored row always names one: create accepts no other). */
export function kindOf(kinds: IntegrationKinds, name: string): IntegrationKind {
  const kind = kinds.get(name);
  if (!kind) throw conflict(`integration kind ${name} is not available in this version of svc`);
  return kind;
}

function nameTaken(name: string): AppError {
  return conflict(`an integration named "${name}" already exists in this project`);
}
