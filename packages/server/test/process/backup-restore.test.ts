import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { seedEmbeddedDataDir } from "../support/process-database.js";

/*
 * Issue 9, item 4: `svc backup` / `svc restore` for the embedded data directory, run as an operator
 * would: real `svc serve` and `svc backup|restore` processes on temporary data directories.
 */

const root = mkdtempSync(join(tmpdir(), "svc-backup-"));
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const SECRET_VALUE = "backup-secret-SENTINEL";

/** The embedded database only, whatever the suite runs on: these commands belong to it. */
const embeddedEnv = (dataDir: string): NodeJS.ProcessEnv => ({ ...process.env, DATABASE_URL: "", SVC_SECRET_KEY: "", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "error" });

function svc(args: string[], env: NodeJS.ProcessEnv) {
  const run = spawnSync(process.execPath, [...SVC_ENTRY, ...args], { env, encoding: "utf8", timeout: 120_000 });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

async function serve(dataDir: string) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], {
    env: { ...embeddedEnv(dataDir), PORT: String(port), HOST: "127.0.0.1", SVC_PUBLIC_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  await ready(url, child);
  return {
    api: new ApiClient(url, url),
    async stop() {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

const projectNames = async (api: ApiClient, token: string, orgId: string) =>
  ((await api.get(`/api/v1/orgs/${orgId}/projects`, { token })).body.data as Array<{ name: string }>).map((p) => p.name).sort();

// svc on the embedded database whatever database the suite runs on: the PostgreSQL run would repeat this unchanged.
describe.skipIf(process.env["DATABASE_URL"])("svc backup and svc restore", () => {
  const source = join(root, "source");
  const plain = join(root, "backup-plain");
  const withKey = join(root, "backup-with-key");
  let account: { email: string; orgId: string };

  it("backs up a running svc, with the master key only when asked for", { timeout: 180_000 }, async () => {
    seedEmbeddedDataDir(source);
    const node = await serve(source);
    const { session, token, org } = await node.api.userWithOrg("Backed Up");
    account = { email: session.email, orgId: org.id };
    expect((await node.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "before" }, { token })).status).toBe(201);
    const secret = await node.api.post(`/api/v1/orgs/${org.id}/secrets`, { owner: { kind: "org" }, name: "kept", material: { kind: "generic", value: SECRET_VALUE } }, { token });
    expect(secret.status, secret.text).toBe(201);

    const first = svc(["backup", plain], embeddedEnv(source));
    expect(first.code, first.out).toBe(0);
    expect(readdirSync(plain).sort()).toEqual(["database.sql", "manifest.json"]);
    const dump = readFileSync(join(plain, "database.sql"), "utf8");
    expect(dump).toContain("Backed Up");
    expect(dump).not.toContain(SECRET_VALUE);

    const second = svc(["backup", withKey, "--include-master-key"], embeddedEnv(source));
    expect(second.code, second.out).toBe(0);
    expect(readFileSync(join(withKey, "secret.key"), "utf8")).toBe(readFileSync(join(source, "secret.key"), "utf8"));
    expect(JSON.parse(readFileSync(join(withKey, "manifest.json"), "utf8"))).toMatchObject({ format: "svc-embedded-backup", version: 1, master_key_included: true });

    const refused = svc(["backup", plain], embeddedEnv(source));
    expect(refused.code).toBe(2);
    expect(refused.out).toContain("not empty");
    const whileRunning = svc(["restore", withKey, "--force"], embeddedEnv(source));
    expect(whileRunning.code).toBe(2);
    expect(whileRunning.out).toContain("stop svc before restoring");

    expect((await node.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "after" }, { token })).status).toBe(201);
    await node.stop();
  });

  it("restores into a new data directory: the data as it was at the backup, its secrets and the key that opens them", { timeout: 180_000 }, async () => {
    const target = join(root, "restored");
    const restored = svc(["restore", withKey], embeddedEnv(target));
    expect(restored.code, restored.out).toBe(0);
    expect(readFileSync(join(target, "secret.key"), "utf8")).toBe(readFileSync(join(source, "secret.key"), "utf8"));
    const node = await serve(target);
    const session = await node.api.login(account.email, "correct horse battery");
    const token = await node.api.pat(session);
    expect(await projectNames(node.api, token, account.orgId)).toEqual(["Default", "before"].sort());
    const secrets = await node.api.get(`/api/v1/orgs/${account.orgId}/secrets`, { token });
    expect(secrets.body.data.map((s: { name: string }) => s.name)).toEqual(["kept"]);
    await node.stop();
  });

  it("refuses a damaged backup and a data directory in use by another database unless forced, keeping what was there", { timeout: 180_000 }, async () => {
    const damaged = join(root, "damaged");
    rmSync(damaged, { recursive: true, force: true });
    spawnSync("cp", ["-r", plain, damaged]);
    writeFileSync(join(damaged, "database.sql"), readFileSync(join(damaged, "database.sql"), "utf8").replace("Backed Up", "Tampered!"));
    const tampered = svc(["restore", damaged], embeddedEnv(join(root, "never")));
    expect(tampered.code).toBe(2);
    expect(tampered.out).toContain("checksum");
    expect(existsSync(join(root, "never", "pgdata"))).toBe(false);

    const occupied = svc(["restore", plain], embeddedEnv(source));
    expect(occupied.code).toBe(2);
    expect(occupied.out).toContain("--force");
    const forced = svc(["restore", plain, "--force"], embeddedEnv(source));
    expect(forced.code, forced.out).toBe(0);
    expect(readdirSync(source).some((name) => name.startsWith("pgdata.replaced-"))).toBe(true);
  });

  it("refuses on a PostgreSQL deployment, where the server's own tools do this", () => {
    const env = { ...embeddedEnv(join(root, "unused")), DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test", SVC_SECRET_KEY: "0".repeat(63) + "1" };
    const backup = svc(["backup", join(root, "pg")], env);
    expect(backup.code).toBe(2);
    expect(backup.out).toContain("pg_dump");
  });
});
