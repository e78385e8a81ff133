import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../platform/db/index.js";
import { sqlState } from "../../platform/db/pg-errors.js";
import { AppError, conflict, invalidRequest, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { newUuid } from "../../platform/ids.js";
import { requireProject } from "../orgs/access.js";
import { requireListScope, requireOwnerManage, requireSecret } from "./authority.js";
import { createSecretGrants } from "./grants.js";
import { checkMaterial, openMaterial, payloadKeys, sealMaterial } from "./material.js";
import type { AvailabilitySource, OwnerKind, SecretKind, SecretMaterial } from "./schemas.js";
import * as store from "./store.js";

export interface SecretListQuery {
  filters: store.SecretFilters;
  ownerProjectId?: string;
  mcpOAuthFlowId?: string;
  page: store.Page;
}

export interface CreateSecretInput {
  owner: { kind: OwnerKind; projectId?: string };
  name: string;
  metadata?: Record<string, string>;
  material: SecretMaterial;
}

/**
 * A module that keeps secret references where no foreign key can see them (inside JSON): names what
 * still uses the secret, or undefined. Deleting a secret in use is a 409.
 */
export type SecretUser = (tx: Tx, orgId: string, secretId: string) => Promise<string | undefined>;

/** Secrets: encrypted values owned by an org, a project or a user, used by projects directly or through grants. */
export function createSecretsService(deps: { db: Database; cipher: EnvelopeCipher; users?: readonly SecretUser[] }) {
  const { db, cipher, users = [] } = deps;

  /** The first of `owned` that a module still uses, with what uses it. */
  async function firstInUse(tx: Tx, owned: Array<{ id: string; orgId: string; name: string }>) {
    for (const secret of owned) {
      for (const user of users) {
        const usedBy = await user(tx, secret.orgId, secret.id);
        if (usedBy !== undefined) return { name: secret.name, usedBy };
      }
    }
    return undefined;
  }

  return {
    ...createSecretGrants({ db }),

    async listSecrets(principal: Principal, orgId: string, query: SecretListQuery) {
      const { ownerKind } = query.filters;
      if (ownerKind === "project" && query.ownerProjectId === undefined) {
        throw invalidRequest("owner_project_id is required with owner_kind=project");
      }
      if (ownerKind !== "project" && query.ownerProjectId !== undefined) {
        throw invalidRequest("owner_project_id is only valid with owner_kind=project");
      }
      return db.tx(async (tx) => {
        const scope = await requireListScope(tx, principal, orgId, { ownerKind, ownerProjectId: query.ownerProjectId });
        return store.listSecrets(tx, { orgId, scope, filters: query.filters, mcpOAuthFlowId: query.mcpOAuthFlowId, page: query.page });
      });
    },

    /** Creates the secret and its version 1 in one transaction; the material is sealed before it is written. */
    async createSecret(principal: Principal, orgId: string, input: CreateSecretInput): Promise<store.SecretRow> {
      checkMaterial(input.material, "/material");
      return withConflicts(() =>
        db.tx(async (tx) => {
          const owner = await requireOwnerManage(tx, principal, orgId, input.owner);
          if (await store.findSecretByOwnerName(tx, orgId, owner, input.name)) throw nameTaken(input.name);
          const secretId = newUuid();
          const kind: SecretKind = input.material.kind;
          const secret = await store.insertSecret(tx, {
            id: secretId,
            orgId,
            ownerKind: owner.kind,
            ownerProjectId: owner.projectId,
            ownerUserId: owner.userId,
            name: input.name,
            kind,
            metadata: input.metadata ?? {},
            currentVersionNumber: 1,
            payloadKeys: payloadKeys(input.material),
          });
          const envelope = sealMaterial(cipher, { orgId, secretId, versionNumber: 1, kind }, input.material);
          await store.insertVersion(tx, { id: newUuid(), orgId, secretId, versionNumber: 1, envelope });
          return secret;
        }),
      );
    },

    async getSecret(principal: Principal, orgId: string, secretId: string): Promise<store.SecretRow> {
      return db.tx(async (tx) => (await requireSecret(tx, principal, orgId, secretId, "read")).secret);
    },

    /** Renames the secret and/or replaces its metadata; the owner and the value are untouched. */
    async updateSecret(
      principal: Principal,
      orgId: string,
      secretId: string,
      patch: { name?: string; metadata?: Record<string, string> },
    ): Promise<store.SecretRow> {
      return withConflicts(() =>
        db.tx(async (tx) => {
          const { secret } = await requireSecret(tx, principal, orgId, secretId, "change");
          const changes: { name?: string; metadata?: Record<string, string> } = {};
          if (patch.name !== undefined && patch.name !== secret.name) {
            if (await store.findSecretByOwnerName(tx, orgId, ownerOf(secret), patch.name)) throw nameTaken(patch.name);
            changes.name = patch.name;
          }
          if (patch.metadata !== undefined) changes.metadata = patch.metadata;
          return store.updateSecret(tx, orgId, secretId, changes);
        }),
      );
    },

    /** A secret still referenced elsewhere (a model provider config's credential, a machine pool) is a 409, never a 500. */
    async deleteSecret(principal: Principal, orgId: string, secretId: string): Promise<void> {
      try {
        await db.tx(async (tx) => {
          await requireSecret(tx, principal, orgId, secretId, "change");
          for (const user of users) {
            const usedBy = await user(tx, orgId, secretId);
            if (usedBy !== undefined) throw conflict(`the secret is in use by ${usedBy}; stop using it first`);
          }
          await store.deleteSecret(tx, orgId, secretId);
        });
      } catch (err) {
        if (isForeignKeyViolation(err)) {
          throw conflict("the secret is in use (for example as a model provider config's credential); stop using it first");
        }
        throw err;
      }
    },

    /**
     * For the deletion of a user's account (identity's `AccountHolder`): refuses while one of the user's
     * secrets is in use, as deleting it alone would be. The secrets go with the user's memberships.
     */
    async refuseSecretsInUse(tx: Tx, userId: string): Promise<void> {
      const inUse = await firstInUse(tx, await store.listUserSecrets(tx, userId));
      if (inUse) throw conflict(`your secret "${inUse.name}" is in use by ${inUse.usedBy}; stop using it, then delete the account`);
    },

    /**
     * For the removal of a member from an org (orgs' `MemberHolder`): their user secrets there go with
     * the membership, so one still in use (a machine pool grant's environment, through a secret grant)
     * refuses the removal, naming the secret and its user, rather than breaking that user silently.
     */
    async refuseMemberSecretsInUse(tx: Tx, orgId: string, userId: string): Promise<void> {
      const inUse = await firstInUse(tx, await store.listUserSecrets(tx, userId, orgId));
      if (inUse) throw conflict(`the member's secret "${inUse.name}" is in use by ${inUse.usedBy}; stop using it, then remove the member`);
    },

    /** Adds the next version and makes it current. The material must be of the secret's kind. */
    async createVersion(principal: Principal, orgId: string, secretId: string, material: SecretMaterial): Promise<store.SecretRow> {
      checkMaterial(material, "/material");
      return db.tx(async (tx) => {
        const { secret } = await requireSecret(tx, principal, orgId, secretId, "change");
        if (material.kind !== secret.kind) {
          throw new AppError("validation_failed", "the material's kind differs from the secret's kind, which is immutable", {
            issues: [{ path: "/material/kind", message: `must be "${secret.kind}", the kind of this secret` }],
          });
        }
        const versionNumber = secret.currentVersionNumber + 1;
        const envelope = sealMaterial(cipher, { orgId, secretId, versionNumber, kind: secret.kind as SecretKind }, material);
        await store.insertVersion(tx, { id: newUuid(), orgId, secretId, versionNumber, envelope });
        return store.updateSecret(tx, orgId, secretId, { currentVersionNumber: versionNumber, payloadKeys: payloadKeys(material) });
      });
    },

    async listProjectSecrets(
      principal: Principal,
      orgId: string,
      projectId: string,
      query: { filters: store.SecretFilters; source?: AvailabilitySource; page: store.Page },
    ) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.secrets.list");
        return store.listProjectSecrets(tx, { orgId, projectId, filters: query.filters, source: query.source, page: query.page });
      });
    },

    async getProjectSecret(principal: Principal, orgId: string, projectId: string, secretId: string) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.secrets.list");
        const found = await store.findProjectSecret(tx, orgId, projectId, secretId);
        if (!found) throw notFound("secret");
        return found;
      });
    },

    /**
     * For modules that obtain a credential on the caller's behalf (an integration's OAuth install): a new
     * secret owned by the project, inside the caller's transaction, which has already authorized the
     * caller to manage that project. A taken name is a 409.
     */
    async createProjectSecretIn(tx: Tx, orgId: string, projectId: string, input: { name: string; material: SecretMaterial }): Promise<store.SecretRow> {
      checkMaterial(input.material, "/material");
      const owner: store.Owner = { kind: "project", projectId, userId: null };
      if (await store.findSecretByOwnerName(tx, orgId, owner, input.name)) throw nameTaken(input.name);
      const secretId = newUuid();
      const kind: SecretKind = input.material.kind;
      const secret = await store.insertSecret(tx, {
        id: secretId,
        orgId,
        ownerKind: "project",
        ownerProjectId: projectId,
        name: input.name,
        kind,
        metadata: {},
        currentVersionNumber: 1,
        payloadKeys: payloadKeys(input.material),
      });
      const envelope = sealMaterial(cipher, { orgId, secretId, versionNumber: 1, kind }, input.material);
      await store.insertVersion(tx, { id: newUuid(), orgId, secretId, versionNumber: 1, envelope });
      return secret;
    },

    /**
     * For other modules (model providers, machines, integrations): the current material of a secret the
     * project can use, owned by it or granted to it. Anything else is not_found. Call it inside the
     * caller's transaction; it never opens one.
     */
    async resolvePayload(tx: Tx, orgId: string, projectId: string, secretId: string): Promise<SecretMaterial> {
      const found = await store.findProjectSecret(tx, orgId, projectId, secretId);
      if (!found) throw notFound("secret");
      const { secret } = found;
      const version = await store.findVersion(tx, secretId, secret.currentVersionNumber);
      if (!version) throw notFound("secret");
      return openMaterial(cipher, { orgId, secretId, versionNumber: version.versionNumber, kind: secret.kind as SecretKind }, version.envelope);
    },
  };
}

export type SecretsService = ReturnType<typeof createSecretsService>;

function ownerOf(secret: store.SecretRow): store.Owner {
  return { kind: secret.ownerKind as OwnerKind, projectId: secret.ownerProjectId, userId: secret.ownerUserId };
}

function nameTaken(name: string): AppError {
  return conflict(`a secret named "${name}" already exists for this owner`);
}

/**
 * Races the in-transaction checks cannot see: a concurrent twin (unique index) is a 409, and a project
 * or user deleted meanwhile (foreign key) is a 404. Both abort the transaction, so they are mapped here.
 */
async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "secrets_owner_name")) throw conflict("a secret with this name already exists for this owner");
    if (sqlState(err) === "23503") throw notFound("owner or target project");
    throw err;
  }
}
