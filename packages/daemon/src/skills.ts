import { createHash, randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SkillOffer, SkillReport } from "@svc/protocol";
import type { DaemonApi } from "./api.js";
import { writeAtomically } from "./home.js";
import { unpackSkill } from "./unpack.js";

/*
 * Skill installs (reference design-brief.md §7, `skill_offer` → `skill_report`): svc offers a skill revision with a
 * short-lived download token; svcd downloads the archive, checks its digest, unpacks it and reports where
 * the files are. Each skill goes to `<home>/skills/<name>/`, replaced whole (unpacked beside it, then
 * renamed into place), so a command never sees half of a revision. `<home>/skills/.installed/<name>.json`
 * records the digest in place: an offer of the same digest is answered `ready` without a download.
 * Installs of one name run one at a time; nothing is journaled, since svc asks again when a call needs it.
 */

const DOWNLOAD_TIMEOUT_MS = 60_000;
/** svc refuses uploads over 25 MiB; anything much larger is not a skill archive. */
const MAX_ARCHIVE_BYTES = 32 * 1024 * 1024;
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

interface Installed {
  skill_id: string;
  revision_id: string;
  digest: string;
}

export class SkillInstaller {
  readonly root: string;
  private readonly markers: string;
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    home: string,
    private readonly api: DaemonApi,
    private readonly report: (report: SkillReport) => void,
  ) {
    this.root = join(home, "skills");
    this.markers = join(this.root, ".installed");
    mkdirSync(this.markers, { recursive: true });
    // Left by an install a crash interrupted: never in use.
    for (const name of readdirSync(this.root)) if (name.startsWith(".staging-") || name.startsWith(".old-")) rmSync(join(this.root, name), { recursive: true, force: true });
  }

  /** Installs the offered revision (after any install of the same name in progress) and reports the outcome. */
  offer(offer: SkillOffer): void {
    const base = { request_id: offer.request_id, skill_id: offer.skill_id };
    if (typeof offer.skill_name !== "string" || offer.skill_name.length > 64 || !NAME.test(offer.skill_name)) {
      this.report({ ...base, state: "failed", error: `svc offered a skill without a valid name: ${JSON.stringify(offer.skill_name)}` });
      return;
    }
    const previous = this.queues.get(offer.skill_name) ?? Promise.resolve();
    const next = previous.then(() =>
      this.install(offer).then(
        (path) => this.report({ ...base, state: "ready", path }),
        (err: unknown) => this.report({ ...base, state: "failed", error: String((err as Error).message ?? err).slice(0, 2000) }),
      ),
    );
    this.queues.set(offer.skill_name, next);
    void next.finally(() => {
      if (this.queues.get(offer.skill_name) === next) this.queues.delete(offer.skill_name);
    });
  }

  private async install(offer: SkillOffer): Promise<string> {
    const target = join(this.root, offer.skill_name);
    const marker = join(this.markers, `${offer.skill_name}.json`);
    if (readInstalled(marker)?.digest === offer.digest && existsSync(join(target, "SKILL.md"))) return target;
    const bytes = await this.download(offer);
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    if (digest !== offer.digest) throw new Error(`the downloaded archive's digest ${digest} is not the offered ${offer.digest}; nothing was installed`);
    const files = unpackSkill(bytes);
    const staging = join(this.root, `.staging-${randomUUID()}`);
    try {
      for (const file of files) {
        const path = join(staging, file.path);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, file.data, { mode: 0o644 });
        if (file.executable) chmodSync(path, 0o755);
      }
      mkdirSync(staging, { recursive: true });
      const old = join(this.root, `.old-${randomUUID()}`);
      if (existsSync(target)) renameSync(target, old);
      renameSync(staging, target);
      rmSync(old, { recursive: true, force: true });
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    writeAtomically(marker, JSON.stringify({ skill_id: offer.skill_id, revision_id: offer.revision_id, digest: offer.digest } satisfies Installed));
    return target;
  }

  private async download(offer: SkillOffer): Promise<Buffer> {
    const url = new URL(`/api/v1/daemon/skills/${encodeURIComponent(offer.skill_id)}/archive`, this.api.origin);
    url.searchParams.set("revision_id", offer.revision_id);
    url.searchParams.set("expires_at", String(offer.download_expires_at));
    url.searchParams.set("download_token", offer.download_token);
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: this.api.authorization }, signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    } catch (err) {
      throw new Error(`downloading the skill archive failed: ${(err as Error).message}`);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new Error(`svc answered ${response.status} to the skill archive download: ${text.slice(0, 300)}`);
    }
    if (Number(response.headers.get("content-length") ?? 0) > MAX_ARCHIVE_BYTES) throw new Error("the skill archive is larger than 32 MiB");
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > MAX_ARCHIVE_BYTES) throw new Error("the skill archive is larger than 32 MiB");
    return bytes;
  }
}

function readInstalled(path: string): Installed | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Installed;
  } catch {
    return undefined;
  }
}
