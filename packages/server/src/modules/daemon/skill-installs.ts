import { sql } from "drizzle-orm";
import type { SkillOffer, SkillReport } from "@svc/protocol";
import type { Database } from "../../platform/db/index.js";
import { rawRows } from "../../platform/db/raw.js";
import type { CapabilitySigner } from "../../platform/crypto/capabilities.js";
import { AppError, forbidden, notFound } from "../../platform/errors.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import { offerableInstalls, reportInstall } from "../../runtime/store/skill-installs.js";
import { completeSkillCall } from "../../runtime/tools/skill.js";
import type { AgentMachines } from "../../runtime/tools/machine-tools.js";
import type { ArtifactsService } from "../artifacts/service.js";
import type { SkillsService } from "../skills/service.js";

/*
 * The daemon's side of the `skill` tool (reference design-brief.md §7): `skill_offer`s for a machine's pending installs,
 * each with a download token for `GET /daemon/skills/{id}/archive`, and the `skill_report`s that end them.
 * A token is an HMAC over (machine, skill, revision, expiry): bound to one machine and one revision, valid
 * for minutes, and checked without a row.
 */

/** Offers sent per drain of a socket. */
const OFFERS_PER_DRAIN = 8;

export interface ArchiveQuery {
  revision_id: string;
  expires_at: number;
  download_token: string;
}

export interface SkillInstallDeps {
  db: Database;
  artifacts: Pick<ArtifactsService, "prepareContentBlocks" | "recordArtifacts">;
  skills: Pick<SkillsService, "readRevision" | "readArchive">;
  signer: CapabilitySigner;
  /** How long an offered download token stays valid. */
  tokenSeconds: number;
  /** Names the machines in a completed call's result. */
  machines: Pick<AgentMachines, "names">;
}

export function createSkillInstallService(deps: SkillInstallDeps) {
  const { db, signer } = deps;
  const fields = (machineId: string, skillId: string, revisionId: string, expiresAt: number) => [machineId, skillId, revisionId, String(expiresAt)];

  /** Pending installs for the daemon's machine not yet offered on this connection (`skip`, public ids). */
  async function skillOffers(daemon: DaemonPrincipal, skip: readonly string[]): Promise<SkillOffer[]> {
    const skipped = skip.map((id) => decodeId("skillInstall", id)).filter((id): id is string => id !== null);
    const rows = await offerableInstalls(db.read, daemon.machineId, skipped, OFFERS_PER_DRAIN, deps.tokenSeconds);
    return rows.map(({ install, expiresAt }) => ({
      request_id: encodeId("skillInstall", install.id),
      skill_id: encodeId("skill", install.skillId),
      revision_id: encodeId("skillRevision", install.revisionId),
      skill_name: install.skillName,
      download_token: signer.sign(fields(daemon.machineId, install.skillId, install.revisionId, expiresAt)),
      download_expires_at: expiresAt,
      digest: install.digest,
    }));
  }

  /**
   * Ends the install with the daemon's report, once, and completes its call when it was the last one
   * pending. A report for an install that ended already (its deadline passed) changes nothing.
   */
  async function skillReport(daemon: DaemonPrincipal, report: SkillReport): Promise<void> {
    const id = decodeId("skillInstall", report.request_id);
    if (!id) return;
    const ended = await reportInstall(db.write, daemon.machineId, id, { state: report.state, error: report.error ?? "", path: report.path ?? "" });
    if (ended) await completeSkillCall(deps, ended.toolCallId);
  }

  /**
   * The archive of a skill revision for the daemon holding a token issued to its machine for it: 403 for a
   * token made for another machine, skill or revision (or none at all), 410 once it expired (database
   * clock), 404 when the skill or revision is gone.
   */
  async function skillArchive(daemon: DaemonPrincipal, skillId: string, query: ArchiveQuery): Promise<{ bytes: Buffer; digest: string }> {
    const revisionId = decodeId("skillRevision", query.revision_id);
    if (!revisionId || !signer.verify(fields(daemon.machineId, skillId, revisionId, query.expires_at), query.download_token)) {
      throw forbidden("this download token was not issued to this machine for this skill revision");
    }
    const [clock] = await rawRows<{ now: number }>(db.read, sql`SELECT extract(epoch from statement_timestamp())::float8 AS now`);
    if (query.expires_at < Number(clock!.now)) throw new AppError("gone", "this download token has expired; the skill tool offers a new one when it is called again");
    const found = await deps.skills.readArchive(daemon.orgId, skillId, revisionId);
    if (!found) throw notFound("skill revision");
    return { bytes: found.bytes, digest: found.revision.archiveDigest };
  }

  return { skillOffers, skillReport, skillArchive };
}

export type SkillInstallService = ReturnType<typeof createSkillInstallService>;
