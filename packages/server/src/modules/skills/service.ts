import type { BlobStore } from "../../platform/blobs/index.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { sqlState } from "../../platform/db/pg-errors.js";
import { conflict, invalidRequest, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { orphanSweep } from "../../platform/blobs/orphans.js";
import { activeAgentAttachesSkill } from "../agents/store.js";
import { requireProject } from "../orgs/access.js";
import { checkArchive, replaceSkillMd, type CheckedArchive } from "./archive.js";
import { archiveError } from "./archive-rules.js";
import { requireListScope, requireOwnerManage, requireSkill } from "./authority.js";
import { createSkillGrants } from "./grants.js";
import type { AvailabilitySource, OwnerKind } from "./schemas.js";
import { parseSkillMd } from "./skill-md.js";
import * as store from "./store.js";

export type { RevisionRow, SkillRow } from "./store.js";

/** A skill with the revision it shows. */
export interface SkillWithRevision {
  skill: store.SkillRow;
  revision: store.RevisionRow;
}

type OwnerInput = { kind: OwnerKind; projectId?: string };

const KEY_PREFIX = "skills";
/** Archives younger than this may belong to an upload whose transaction is still running. */
const CONTENT_TYPES = { zip: "application/zip", "tar.gz": "application/gzip" } as const;

/**
 * Skills: SKILL.md instructions with supporting files, uploaded as archives and owned like secrets. An
 * upload is checked whole before anything is stored, then its archive goes to the blob store outside any
 * transaction, and one short transaction records the revision. When that transaction fails the archive is
 * deleted again, and the orphan sweep removes what a crash left behind.
 */
export function createSkillsService(deps: { db: Database; blobs: BlobStore }) {
  const { db, blobs } = deps;

  /** Stores the archive, then runs `record` in a transaction; the archive is removed if that fails. */
  async function storeRevision(checked: CheckedArchive, record: (tx: Tx, revision: NewRevision) => Promise<SkillWithRevision>): Promise<SkillWithRevision> {
    const id = newUuid();
    // Grouped by day so the sweep and an operator can walk the store in order.
    const archiveKey = `${KEY_PREFIX}/${new Date().toISOString().slice(0, 10)}/${id}`;
    await blobs.put(archiveKey, checked.bytes, CONTENT_TYPES[checked.format]);
    try {
      return await withConflicts(() => db.tx((tx) => record(tx, { id, archiveKey, checked })));
    } catch (err) {
      await blobs.delete(archiveKey).catch(() => undefined);
      throw err;
    }
  }

  return {
    ...createSkillGrants({ db }),

    async listSkills(principal: Principal, orgId: string, query: { filters: store.SkillFilters; ownerProjectId?: string; page: PageRequest }) {
      const { ownerKind } = query.filters;
      if (ownerKind === "project" && query.ownerProjectId === undefined) throw invalidRequest("owner_project_id is required with owner_kind=project");
      if (ownerKind !== "project" && query.ownerProjectId !== undefined) throw invalidRequest("owner_project_id is only valid with owner_kind=project");
      return db.tx(async (tx) => {
        const scope = await requireListScope(tx, principal, orgId, { ownerKind, ownerProjectId: query.ownerProjectId });
        return store.listSkills(tx, { orgId, scope, filters: query.filters, page: query.page });
      });
    },

    /**
     * Uploads an archive for `owner`: a new skill at revision 1, or the next revision of the owner's skill
     * of the same name. The caller's right is checked before the archive is read, and again when recorded.
     */
    async createSkill(principal: Principal, orgId: string, input: { owner: OwnerInput; archive: Buffer }): Promise<SkillWithRevision> {
      await db.tx((tx) => requireOwnerManage(tx, principal, orgId, input.owner));
      const checked = await checkArchive(input.archive);
      return storeRevision(checked, async (tx, revision) => {
        const owner = await requireOwnerManage(tx, principal, orgId, input.owner);
        const existing = await store.lockSkillByOwnerName(tx, orgId, owner, checked.skillMd.name);
        if (existing) return addRevision(tx, existing, revision);
        const skill = await store.insertSkill(tx, {
          id: newUuid(),
          orgId,
          ownerKind: owner.kind,
          ownerProjectId: owner.projectId,
          ownerUserId: owner.userId,
          name: checked.skillMd.name,
          currentRevisionId: revision.id,
          currentRevision: 1,
          description: checked.skillMd.description,
        });
        return { skill, revision: await insertRevision(tx, skill, 1, revision) };
      });
    },

    async getSkill(principal: Principal, orgId: string, skillId: string): Promise<SkillWithRevision> {
      return db.tx(async (tx) => {
        const { skill } = await requireSkill(tx, principal, orgId, skillId, "read");
        return { skill, revision: (await store.findRevision(tx, skill.currentRevisionId))! };
      });
    },

    /**
     * The next revision from a whole archive, or from the current revision's files with SKILL.md replaced.
     * Either way SKILL.md must keep the skill's name. A replacement built on a revision that is no longer
     * current when it is recorded is refused (409) rather than dropping the other upload's files.
     */
    async updateSkill(principal: Principal, orgId: string, skillId: string, input: { archive: Buffer } | { skillMd: string }): Promise<SkillWithRevision> {
      const current = await db.tx(async (tx) => (await requireSkill(tx, principal, orgId, skillId, "manage")).skill);
      let checked: CheckedArchive;
      if ("archive" in input) {
        checked = await checkArchive(input.archive);
        if (checked.skillMd.name !== current.name) throw archiveError(`SKILL.md names the skill "${checked.skillMd.name}"; this skill is "${current.name}"`);
      } else {
        const skillMd = parseSkillMd(Buffer.from(input.skillMd, "utf8"), "/skill_md");
        if (skillMd.name !== current.name) throw archiveError(`SKILL.md names the skill "${skillMd.name}"; this skill is "${current.name}"`, "/skill_md");
        const revision = (await store.findRevision(db.read, current.currentRevisionId))!;
        const previous = await blobs.get(revision.archiveKey);
        if (!previous) throw new Error(`skill archive missing from the blob store: ${revision.archiveKey}`);
        checked = await replaceSkillMd(previous, skillMd);
      }
      const basedOn = "archive" in input ? undefined : current.currentRevisionId;
      return storeRevision(checked, async (tx, revision) => {
        const { skill } = await requireSkill(tx, principal, orgId, skillId, "change");
        if (basedOn !== undefined && skill.currentRevisionId !== basedOn) throw conflict("the skill got a new revision meanwhile; send skill_md again");
        return addRevision(tx, skill, revision);
      });
    },

    /** Deletes the skill, its revisions and grants, then its archives; 409 while an active agent attaches it. */
    async deleteSkill(principal: Principal, orgId: string, skillId: string): Promise<void> {
      const keys = await db.tx(async (tx) => {
        await requireSkill(tx, principal, orgId, skillId, "change");
        if (await activeAgentAttachesSkill(tx, orgId, skillId)) {
          throw conflict("an active agent's config attaches this skill; archive the agent or change its config first");
        }
        const archiveKeys = await store.archiveKeysOf(tx, skillId);
        await store.deleteSkill(tx, orgId, skillId);
        return archiveKeys;
      });
      // After the commit: a failed delete leaves an orphan for the sweep, never a row without its archive.
      await Promise.allSettled(keys.map((key) => blobs.delete(key)));
    },

    /**
     * For the deletion of a user's account (identity's `AccountHolder`): refuses while an active agent
     * attaches one of the user's skills, as deleting it alone would be. The skills go with the user's
     * memberships; their archives are deleted once that committed (the orphan sweep catches a failure).
     */
    async releaseUserSkills(tx: Tx, userId: string): Promise<void> {
      const owned = await store.listUserSkills(tx, userId);
      const checked = new Set<string>();
      for (const skill of owned) {
        if (checked.has(skill.id)) continue;
        checked.add(skill.id);
        if (await activeAgentAttachesSkill(tx, skill.orgId, skill.id)) {
          throw conflict(`an active agent's config attaches your skill "${skill.name}"; archive the agent or change its config, then delete the account`);
        }
      }
      const keys = owned.map((skill) => skill.archiveKey);
      if (keys.length > 0) tx.afterCommit(() => void Promise.allSettled(keys.map((key) => blobs.delete(key))));
    },

    async listProjectSkills(principal: Principal, orgId: string, projectId: string, query: { filters: store.SkillFilters; source?: AvailabilitySource; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.read");
        return store.listProjectSkills(tx, { orgId, projectId, filters: query.filters, source: query.source, page: query.page });
      });
    },

    /** For the agent runtime: a revision pinned by a compiled config, or undefined once its skill is deleted. */
    async readRevision(revisionId: string): Promise<store.RevisionRow | undefined> {
      return store.findRevision(db.read, revisionId);
    },

    /**
     * For the daemon's archive download: the revision of the org's skill and its archive's bytes, or
     * undefined when either is gone. Read outside any transaction (the blob store is not the database).
     */
    async readArchive(orgId: string, skillId: string, revisionId: string): Promise<{ revision: store.RevisionRow; bytes: Buffer } | undefined> {
      const revision = await store.findRevision(db.read, revisionId);
      if (!revision || revision.orgId !== orgId || revision.skillId !== skillId) return undefined;
      const bytes = await blobs.get(revision.archiveKey);
      return bytes ? { revision, bytes } : undefined;
    },

    /**
     * Deletes archives older than an hour that no revision references: uploads whose transaction failed
     * and archives of deleted skills whose removal failed. One batch per call, in key order.
     */
    sweepOrphanBlobs: orphanSweep(blobs, KEY_PREFIX, (ids) => store.archiveKeysAmong(db.read, ids)),
  };
}

export type SkillsService = ReturnType<typeof createSkillsService>;

/**
 * For the config compiler, inside its transaction: the skills among `skillIds` that the project owns or
 * was granted, with their current revisions (which the compiled config pins).
 */
export async function availableSkills(tx: Tx, orgId: string, projectId: string, skillIds: string[]): Promise<store.SkillRow[]> {
  return store.findProjectSkills(tx, orgId, projectId, skillIds);
}

interface NewRevision {
  id: string;
  archiveKey: string;
  checked: CheckedArchive;
}

async function insertRevision(tx: Tx, skill: store.SkillRow, number: number, revision: NewRevision): Promise<store.RevisionRow> {
  const { checked } = revision;
  return store.insertRevision(tx, {
    id: revision.id,
    orgId: skill.orgId,
    skillId: skill.id,
    revision: number,
    description: checked.skillMd.description,
    skillMd: checked.skillMd.text,
    files: checked.files,
    archiveKey: revision.archiveKey,
    archiveFormat: checked.format,
    archiveDigest: checked.digest,
    archiveSize: checked.bytes.length,
  });
}

/** The next revision of a locked skill, made current. */
async function addRevision(tx: Tx, skill: store.SkillRow, revision: NewRevision): Promise<SkillWithRevision> {
  const row = await insertRevision(tx, skill, skill.currentRevision + 1, revision);
  return { skill: await store.setCurrentRevision(tx, skill.id, row), revision: row };
}

/**
 * Races the in-transaction checks cannot see: a concurrent first upload of the same name (unique index)
 * is a 409, and a project or user deleted meanwhile (foreign key) is a 404.
 */
async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "skills_owner_name")) throw conflict("another upload created a skill of this name for this owner at the same time; upload again");
    if (sqlState(err) === "23503") throw notFound("owner or target project");
    throw err;
  }
}
