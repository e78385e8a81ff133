import type { Database, Tx } from "../../platform/db/index.js";
import { releaseBindings } from "./bindings.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { AppError, conflict, idempotencyConflict, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { requireOrg, requireProject } from "../orgs/access.js";
import { canManageMachines, readableProjectIds, requireMachine } from "./access.js";
import { checkSecretRefs, nameIssues, throwIssues, type SecretDirectory } from "./environment.js";
import * as grants from "./grants-store.js";
import type { CreateMachineRequest, UpdateMachineRequest } from "./schemas.js";
import * as store from "./store.js";
import { mintDaemonToken } from "./tokens-service.js";
import * as tokens from "./tokens-store.js";

/** svc records the platform a daemon reports under this metadata key; callers cannot set it. */
const RESERVED_METADATA_KEY = "observed_platform";
const DEFAULT_TOKEN_NAME = "daemon";

export interface ConnectInput extends CreateMachineRequest {
  projectIds: string[];
  tokenName?: string;
}

/**
 * BYO machines: records of computers whose daemon dials in with a daemon token. Creating, changing and
 * deleting them needs org.manage; reading them, that or a grant to a project the caller can read.
 */
export function createMachineService(deps: { db: Database; secrets: SecretDirectory }) {
  const { db, secrets } = deps;

  /** The checked environment of a create, with secret references as UUIDs. */
  async function checkedMachineInput(tx: Tx, orgId: string, input: CreateMachineRequest) {
    const issues: Issue[] = nameIssues({ envPath: "/env", env: input.env, secretPath: "/secret_env", secretEnv: input.secret_env });
    if (input.metadata && RESERVED_METADATA_KEY in input.metadata) {
      issues.push({ path: `/metadata/${RESERVED_METADATA_KEY}`, message: "is reserved: svc sets it to the platform the daemon reports" });
    }
    const { refs, issues: secretIssues } = await checkSecretRefs(tx, secrets, { orgId }, "/secret_env", input.secret_env);
    throwIssues([...issues, ...secretIssues]);
    return {
      displayName: input.display_name,
      description: input.description ?? "",
      cwd: input.cwd ?? "",
      env: input.env ?? {},
      secretEnv: refs as Record<string, string>,
      metadata: input.metadata ?? {},
    };
  }

  async function insertByoMachine(tx: Tx, orgId: string, input: CreateMachineRequest, idempotencyKey?: string) {
    const checked = await checkedMachineInput(tx, orgId, input);
    if (await store.findLiveByoMachineByName(tx, orgId, checked.displayName)) throw nameTaken(checked.displayName);
    return store.insertMachine(tx, { id: newUuid(), orgId, sourceKind: "byo", provider: "byo", lifecycleState: "active", idempotencyKey, ...checked });
  }

  return {
    /** Creates a machine record without a token; a repeated Idempotency-Key returns the first machine. */
    async createMachine(principal: Principal, orgId: string, input: CreateMachineRequest, idempotencyKey?: string) {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          if (idempotencyKey !== undefined) {
            const earlier = await store.findMachineByIdempotencyKey(tx, orgId, idempotencyKey);
            if (earlier) {
              if (earlier.displayName !== input.display_name) throw idempotencyConflict();
              return { created: false, machine: earlier };
            }
          }
          return { created: true, machine: await insertByoMachine(tx, orgId, input, idempotencyKey) };
        }),
      );
    },

    /** One transaction: the machine, its first daemon token, and its grants to the given projects. */
    async connectMachine(principal: Principal, orgId: string, input: ConnectInput) {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          for (const projectId of input.projectIds) await requireProject(tx, principal, orgId, projectId, "project.access_manage");
          const machine = await insertByoMachine(tx, orgId, input);
          const { token, record } = await mintDaemonToken(tx, machine, { name: input.tokenName ?? DEFAULT_TOKEN_NAME, metadata: {} });
          const projectGrants = [];
          for (const projectId of input.projectIds) {
            projectGrants.push(await grants.insertGrant(tx, { id: newUuid(), orgId, projectId, machineId: machine.id, sourceKind: "explicit" }));
          }
          return { machine, token, tokenRecord: record, projectGrants };
        }),
      );
    },

    async getMachine(principal: Principal, orgId: string, machineId: string) {
      return db.tx(async (tx) => (await requireMachine(tx, principal, orgId, machineId, "read")).machine);
    },

    /** Replaces the execution defaults given; the name and everything else stay. */
    async updateMachine(principal: Principal, orgId: string, machineId: string, patch: UpdateMachineRequest) {
      return db.tx(async (tx) => {
        const { machine } = await requireMachine(tx, principal, orgId, machineId, "manage");
        // Name rules hold across both maps, so an unchanged map still counts.
        const env = patch.env ?? machine.env;
        const secretNames = patch.secret_env ?? machine.secretEnv;
        throwIssues(nameIssues({ envPath: "/env", env, secretPath: "/secret_env", secretEnv: secretNames }));
        const changes: { cwd?: string; env?: Record<string, string>; secretEnv?: Record<string, string> } = { cwd: patch.cwd, env: patch.env };
        if (patch.secret_env !== undefined) {
          const { refs, issues } = await checkSecretRefs(tx, secrets, { orgId }, "/secret_env", patch.secret_env);
          throwIssues(issues);
          changes.secretEnv = refs as Record<string, string>;
        }
        return store.updateMachine(tx, machineId, changes);
      });
    },

    /**
     * Deletes a BYO machine: revokes its tokens, removes its grants, frees its name and tells its daemon
     * to go. Pool machines belong to their pool.
     */
    async deleteMachine(principal: Principal, orgId: string, machineId: string): Promise<void> {
      await db.tx(async (tx) => {
        const { machine } = await requireMachine(tx, principal, orgId, machineId, "manage");
        if (machine.sourceKind !== "byo") throw conflict("a pool machine is deleted through its pool or by the agent holding it, not here");
        await tokens.revokeTokens(tx, machineId, "machine_deleted");
        await grants.deleteGrantsOfMachine(tx, machineId);
        await releaseBindings(tx, { machineId }, "machine_deleted: the machine was deleted; its processes are no longer followed.");
        await store.markMachineDeleted(tx, machineId);
      });
    },

    /** The live machines the caller sees, each with why it sees them. */
    async listMachines(principal: Principal, orgId: string, query: { filters: store.MachineFilters; page: PageRequest }) {
      return db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        const projectIds = await readableProjectIds(tx, access);
        const rows = await store.listMachines(tx, { orgId, projectIds, filters: query.filters, page: query.page });
        const sources = await grants.grantsOfMachines(tx, rows.slice(0, query.page.limit).map((m) => m.id), projectIds);
        return { rows, canManage: canManageMachines(access), sources };
      });
    },

    /** The live machines the project can use (project.read), each with the grant that gives it. */
    async listProjectMachines(principal: Principal, orgId: string, projectId: string, query: { filters: store.MachineFilters; page: PageRequest }) {
      return db.tx(async (tx) => {
        const access = await requireProject(tx, principal, orgId, projectId);
        const rows = await store.listProjectMachines(tx, { orgId, projectId, filters: query.filters, page: query.page });
        return { rows, canManage: canManageMachines(access) };
      });
    },
  };
}

function nameTaken(name: string): AppError {
  return conflict(`a machine named "${name}" is already connected to this organization`);
}

/** Races the in-transaction checks cannot see, settled by the unique indexes. */
async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "machines_live_byo_name")) throw conflict("a machine with this name is already connected to this organization");
    if (isUniqueViolation(err, "machines_org_idempotency_key")) throw idempotencyConflict();
    throw err;
  }
}
