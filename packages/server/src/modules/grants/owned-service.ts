import type { PgInsertValue } from "drizzle-orm/pg-core";
import type { Database } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { sqlState } from "../../platform/db/pg-errors.js";
import { conflict, forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { projectRoleOf, requireOrg, requireProject } from "../orgs/access.js";
import { ownerAuthority, requireOwned, type OwnedKind, type OwnedRow } from "../orgs/ownership.js";
import { projectRoleAllows } from "../orgs/policy.js";
import type { GrantsStore, OwnedGrantTable } from "./store.js";

/**
 * Grants of an owned resource (orgs/ownership.ts: a secret, a skill) to other projects of its organization.
 * The kind's project rights are also the rights a grant asks of its target project: whoever grants manages
 * the resource and could put one like it into the target project themselves.
 */
export interface OwnedGrantKind<R extends OwnedRow, T extends OwnedGrantTable> {
  owned: OwnedKind<R>;
  store: GrantsStore<T>;
  /** The new grant's row: the table names the resource in its own column. */
  row(grant: { id: string; orgId: string; subjectId: string; targetProjectId: string }): PgInsertValue<T>;
  /** The table's unique constraint on (resource, target project). */
  uniqueTarget: string;
}

export function createOwnedGrants<R extends OwnedRow, T extends OwnedGrantTable>(deps: { db: Database }, kind: OwnedGrantKind<R, T>) {
  const { db } = deps;
  const { owned, store } = kind;
  const { noun, project: projectRights } = owned.rights;
  const alreadyGranted = () => conflict(`the ${noun} is already granted to this project`);

  return {
    async listGrants(principal: Principal, orgId: string, subjectId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireOwned(tx, principal, orgId, subjectId, "manage", owned);
        return store.listGrantsOfSubject(tx, { orgId, subjectId, name: query.name, page: query.page });
      });
    },

    /** Makes the resource available to another project; the owning project already has it (409). */
    async createGrant(principal: Principal, orgId: string, subjectId: string, targetProjectId: string): Promise<T["$inferSelect"]> {
      try {
        return await db.tx(async (tx) => {
          const { row } = await requireOwned(tx, principal, orgId, subjectId, "change", owned);
          await requireProject(tx, principal, orgId, targetProjectId, projectRights.manage);
          if (row.ownerKind === "project" && row.ownerProjectId === targetProjectId) {
            throw conflict(`the ${noun} belongs to this project and is already available to it`);
          }
          if (await store.findGrantBetween(tx, subjectId, targetProjectId)) throw alreadyGranted();
          return store.insertGrant(tx, kind.row({ id: newUuid(), orgId, subjectId, targetProjectId }));
        });
      } catch (err) {
        // Races the checks above cannot see: a concurrent twin grant, a project deleted meanwhile.
        if (isUniqueViolation(err, kind.uniqueTarget)) throw alreadyGranted();
        if (sqlState(err) === "23503") throw notFound("owner or target project");
        throw err;
      }
    },

    /** Revokes a grant. Either side may: who manages the resource, or who holds the manage right in the target project. */
    async deleteGrant(principal: Principal, orgId: string, subjectId: string, grantId: string): Promise<void> {
      await db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        const subject = await owned.find(tx, orgId, subjectId);
        const grant = subject ? await store.findGrant(tx, orgId, { subjectId }, grantId) : undefined;
        if (!subject || !grant) throw notFound(`${noun} grant`);
        const authority = await ownerAuthority(tx, access, subject, owned.rights);
        const targetRole = await projectRoleOf(tx, access, grant.targetProjectId);
        if (!authority.manage && !projectRoleAllows(targetRole, projectRights.manage)) {
          if (!authority.read && !projectRoleAllows(targetRole, projectRights.read)) throw notFound(`${noun} grant`);
          throw forbidden("you do not have permission to revoke this grant");
        }
        await store.deleteGrant(tx, orgId, grantId);
      });
    },
  };
}
