import type { SQL } from "drizzle-orm";
import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { AppError, conflict, idempotencyConflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { findConfig, findConfigs, type AgentConfigRow } from "../agent-configs/service.js";
import { requireProject } from "../orgs/access.js";
import * as store from "./store.js";
import type { ProfileWithConfig } from "./views.js";

export type { ProfileRow } from "./store.js";

/**
 * Agent profiles: named pointers to configs, versioned by generation, to launch agents from. Changing one
 * needs project.manage; reading, agent.read. A profile's configs are the project's own.
 */
export function createAgentProfileService(deps: { db: Database }) {
  const { db } = deps;

  return {
    /**
     * Creates the profile at generation 1. With an Idempotency-Key, a replay answers with the profile it
     * made (`created: false`) when it names the same first config and the profile's name; anything else
     * is a 409 idempotency_key_conflict.
     */
    async createProfile(
      principal: Principal,
      orgId: string,
      projectId: string,
      input: { name: string; configId: string; description?: string; mcpTool?: boolean; idempotencyKey?: string },
    ): Promise<ProfileWithConfig & { created: boolean }> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        if (input.idempotencyKey !== undefined) {
          const made = await store.findProfileByIdempotencyKey(tx, projectId, input.idempotencyKey);
          if (made) return replay(tx, made, input);
        }
        const config = await requireConfig(tx, orgId, projectId, input.configId);
        const profile = await store.insertProfile(tx, {
          id: newUuid(),
          orgId,
          projectId,
          name: input.name,
          currentConfigId: config.id,
          currentGeneration: 1,
          idempotencyKey: input.idempotencyKey,
          description: input.description ?? "",
          mcpTool: input.mcpTool ?? false,
        });
        if (!profile) {
          // The name is taken, or a concurrent request with the same key committed first: answer as its replay.
          const made = input.idempotencyKey === undefined ? undefined : await store.findProfileByIdempotencyKey(tx, projectId, input.idempotencyKey);
          if (made) return replay(tx, made, input);
          throw nameTaken(input.name);
        }
        await store.insertVersion(tx, { id: newUuid(), orgId, agentProfileId: profile.id, generation: 1, agentConfigId: config.id });
        return { created: true, profile, config };
      });
    },

    async listProfiles(principal: Principal, orgId: string, projectId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx): Promise<ProfileWithConfig[]> => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        const profiles = await store.listProfiles(tx, { orgId, projectId, name: query.name, page: query.page });
        const configs = await findConfigs(tx, orgId, projectId, profiles.map((profile) => profile.currentConfigId));
        // As in withConfig: every current config is the project's and still exists.
        return profiles.map((profile) => ({ profile, config: configs.get(profile.currentConfigId)! }));
      });
    },

    async getProfile(principal: Principal, orgId: string, projectId: string, profileId: string): Promise<ProfileWithConfig> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        const profile = await store.findProfile(tx, orgId, projectId, profileId);
        if (!profile) throw notFound("agent profile");
        return withConfig(tx, profile);
      });
    },

    /** Changes the members given (name, description, mcp_tool); a change to nothing answers the profile as it is. */
    async updateProfile(
      principal: Principal,
      orgId: string,
      projectId: string,
      profileId: string,
      changes: store.ProfileFields,
    ): Promise<ProfileWithConfig> {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          await requireProject(tx, principal, orgId, projectId, "project.manage");
          const profile = await store.findProfile(tx, orgId, projectId, profileId, "update");
          if (!profile) throw notFound("agent profile");
          const changed: store.ProfileFields = {};
          if (changes.name !== undefined && changes.name !== profile.name) changed.name = changes.name;
          if (changes.description !== undefined && changes.description !== profile.description) changed.description = changes.description;
          if (changes.mcpTool !== undefined && changes.mcpTool !== profile.mcpTool) changed.mcpTool = changes.mcpTool;
          if (Object.keys(changed).length === 0) return withConfig(tx, profile);
          if (changed.name !== undefined && (await store.findProfileByName(tx, projectId, changed.name))) throw nameTaken(changed.name);
          return withConfig(tx, await store.updateProfile(tx, orgId, profileId, changed));
        }),
      );
    },

    /**
     * The profiles the project's MCP endpoint offers as tools (`mcp_tool`), by name, at most `limit`
     * (agent.read; the caller's own access, so another org's token is a 404).
     */
    async listMcpToolProfiles(principal: Principal, orgId: string, projectId: string, limit: number): Promise<store.ProfileRow[]> {
      await requireProject(db.read, principal, orgId, projectId, "agent.read");
      return store.listMcpToolProfiles(db.read, orgId, projectId, limit);
    },

    /** Agents launched from the profile keep running on their own configs; they only lose the reference. */
    async deleteProfile(principal: Principal, orgId: string, projectId: string, profileId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        if (!(await store.deleteProfile(tx, orgId, projectId, profileId))) throw notFound("agent profile");
      });
    },

    /**
     * Moves the profile to `configId` as its next generation, if its current config is still
     * `expectedConfigId` (409 conflict otherwise: someone else changed it since it was read). Asking for
     * the config it already has changes nothing, so a retried request succeeds.
     */
    async setProfileConfig(
      principal: Principal,
      orgId: string,
      projectId: string,
      profileId: string,
      input: { configId: string; expectedConfigId: string | null },
    ): Promise<ProfileWithConfig> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        const profile = await store.findProfile(tx, orgId, projectId, profileId, "update");
        if (!profile) throw notFound("agent profile");
        const config = await requireConfig(tx, orgId, projectId, input.configId);
        if (profile.currentConfigId === config.id) return { profile, config };
        if (profile.currentConfigId !== input.expectedConfigId) {
          throw conflict(
            `the profile's current config is ${encodeId("agentConfig", profile.currentConfigId)}, not expected_current_config_id; ` +
              "read the profile again and decide on its current config",
          );
        }
        const generation = profile.currentGeneration + 1;
        await store.insertVersion(tx, { id: newUuid(), orgId, agentProfileId: profile.id, generation, agentConfigId: config.id });
        const updated = await store.updateProfile(tx, orgId, profileId, { currentConfigId: config.id, currentGeneration: generation });
        return { profile: updated, config };
      });
    },
  };
}

export type AgentProfileService = ReturnType<typeof createAgentProfileService>;

/**
 * For the org overview, inside its transaction: the most recently updated profiles among `projectIds`,
 * a subquery of the projects the caller may read agents in (`projectsAllowing`), with their configs.
 */
export function recentProfiles(tx: Tx, orgId: string, projectIds: SQL, limit: number): Promise<ProfileWithConfig[]> {
  return store.listRecent(tx, orgId, projectIds, limit);
}

/**
 * For launching from a profile, inside the caller's transaction: the project's profile, kept from being
 * deleted until that transaction ends (a KEY SHARE lock, which does not hold up config updates).
 */
export async function findProfile(tx: Tx, orgId: string, projectId: string, profileId: string): Promise<store.ProfileRow | undefined> {
  return store.findProfile(tx, orgId, projectId, profileId, "key share");
}

async function requireConfig(tx: Tx, orgId: string, projectId: string, configId: string): Promise<AgentConfigRow> {
  const config = await findConfig(tx, orgId, projectId, configId);
  if (!config) throw notFound("agent config");
  return config;
}

async function withConfig(tx: Tx, profile: store.ProfileRow): Promise<ProfileWithConfig> {
  // A profile only ever points at a config of its project (checked when set); configs are never deleted on their own.
  return { profile, config: (await findConfig(tx, profile.orgId, profile.projectId, profile.currentConfigId))! };
}

async function replay(tx: Tx, made: store.ProfileRow, input: { name: string; configId: string }): Promise<ProfileWithConfig & { created: false }> {
  if (made.name !== input.name || (await store.firstConfigId(tx, made.id)) !== input.configId) {
    throw idempotencyConflict();
  }
  return { created: false, ...(await withConfig(tx, made)) };
}

function nameTaken(name: string): AppError {
  return conflict(`an agent profile named "${name}" already exists in this project`);
}

/** Two concurrent creations or renames to one name both pass the check; the unique key settles it as a 409. */
async function withNameConflict<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "agent_profiles_project_name")) throw conflict("an agent profile with this name already exists in this project");
    throw err;
  }
}

/** A profile of the project by name, for a config's `delegates` (agent-configs/delegates-section.ts). */
export async function findProfileNamed(tx: Tx, projectId: string, name: string): Promise<store.ProfileRow | undefined> {
  return store.findProfileByName(tx, projectId, name);
}
