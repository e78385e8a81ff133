import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { ApiClient } from "../support/client.js";
import { connect, createServer } from "node:net";
import { exited, externalAddress, freePort, ready, SVC_ENTRY } from "../support/process.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

const dataDir = mkdtempSync(join(tmpdir(), "svc-process-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Children a test started on `dataDir`: one a failed test left running would hold the data directory for the next. */
const running = new Set<ChildProcess>();
afterEach(async () => {
  const left = [...running].filter((child) => child.exitCode === null && child.signalCode === null);
  running.clear();
  for (const child of left) child.kill("SIGKILL");
  await Promise.all(left.map(exited));
});

/** The real `svc` entry point in a child process, on the embedded database in `dataDir`. */
function svc(args: string[], port: number): ChildProcess {
  const child = spawn(process.execPath, [...SVC_ENTRY, ...args], {
    env: { ...process.env, DATABASE_URL: "", PORT: String(port), HOST: "127.0.0.1", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  return child;
}

// svc on the embedded database whatever database the suite runs on: the PostgreSQL run would repeat this unchanged.
describe.skipIf(process.env["DATABASE_URL"])("the svc process on the embedded database", () => {
  // Three processes one after another, the first one migrating: the slowest test here on a loaded machine.
  it("migrates on its own, serves, stops on SIGTERM and keeps every row across a restart", { timeout: 300_000 }, async () => {
    const migrate = svc(["migrate"], 0);
    expect(await exited(migrate)).toBe(0);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = new ApiClient(url, `http://localhost:${port}`);
    let server = svc(["serve"], port);
    await ready(url, server);
    const session = await api.signup({ email: "restart@example.com", password: "long enough" });
    const token = await api.pat(session);
    const org = await api.post("/api/v1/orgs", { name: "Durable" }, { token });
    expect(org.status).toBe(201);
    server.kill("SIGTERM");
    expect(await exited(server)).toBe(0);

    server = svc(["serve"], port);
    await ready(url, server);
    const me = await api.get("/api/v1/me", { token });
    expect(me.status).toBe(200);
    expect(me.body.orgs).toEqual([expect.objectContaining({ id: org.body.org.id, name: "Durable", role: "owner" })]);
    expect((await api.login("restart@example.com", "long enough")).userId).toBe(session.userId);
    server.kill("SIGTERM");
    expect(await exited(server)).toBe(0);
  });

  it("keeps a second process off a data directory in use, and takes over one whose process was killed", { timeout: 300_000 }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const first = svc(["serve"], port);
    await ready(url, first);
    for (const args of [["serve"], ["migrate"]]) {
      const second = svc(args, await freePort());
      let stderr = "";
      second.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await exited(second), args[0]).toBe(2);
      expect(stderr).toContain(`in use by svc process ${first.pid}`);
    }
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    first.kill("SIGKILL");
    await exited(first);
    const next = svc(["serve"], port);
    await ready(url, next);
    expect(readFileSync(join(dataDir, "svc.pid"), "utf8")).toBe(String(next.pid));
    next.kill("SIGTERM");
    expect(await exited(next)).toBe(0);
    expect(existsSync(join(dataDir, "svc.pid"))).toBe(false);
  });

  it("listens on loopback unless HOST says otherwise, and says in its log what listening on the network opens", { timeout: 300_000 }, async () => {
    const external = externalAddress();
    expect(external, "this test needs a non-loopback IPv4 address").toBeDefined();
    const port = await freePort();
    const start = (host: Record<string, string>) => {
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: "", PORT: String(port), SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "info", ...host };
      if (!("HOST" in host)) delete env["HOST"];
      const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
      // Ended with the test, passed or not: a child left running would hold the data directory.
      onTestFinished(() => void child.kill("SIGKILL"));
      let log = "";
      child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
      return { child, log: () => log };
    };
    const reachable = (host: string) =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, host, () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });

    const local = start({ SVC_DATADIR: "/misspelt" });
    await ready(`http://127.0.0.1:${port}`, local.child);
    expect(await reachable(external!)).toBe(false);
    expect(local.log()).toContain(`api on 127.0.0.1:${port}`);
    // One line says where to go, where svc listens, and where its data is; a misspelt setting is named.
    expect(local.log()).toContain(
      `svc is ready: console http://localhost:${port}/ (listening on 127.0.0.1:${port}); API reference http://localhost:${port}/api/docs; data dir ${dataDir}; database embedded (PGlite) in ${join(dataDir, "pgdata")}`,
    );
    expect(local.log()).toContain("unknown setting SVC_DATADIR; did you mean SVC_DATA_DIR?");
    expect(local.log()).not.toContain("reachable from the network");
    local.child.kill("SIGTERM");
    expect(await exited(local.child)).toBe(0);

    const exposed = start({ HOST: "0.0.0.0", SVC_SIGNUP: "invite" });
    await ready(`http://127.0.0.1:${port}`, exposed.child);
    expect(await reachable(external!)).toBe(true);
    expect(exposed.log()).toContain(`svc is reachable from the network on 0.0.0.0:${port}; sign-up needs an org invitation (SVC_SIGNUP)`);
    exposed.child.kill("SIGTERM");
    expect(await exited(exposed.child)).toBe(0);
  });

  it("refuses an unknown command and a bad setting with exit code 2", async () => {
    expect(await exited(svc(["fly"], 0))).toBe(2);
    const badPort = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env: { ...process.env, PORT: "http" }, stdio: "ignore" });
    expect(await exited(badPort)).toBe(2);
  });

  it("says at once that its port is in use, naming the setting, before it opens the database", async () => {
    const holder = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
    onTestFinished(() => void holder.close());
    const untouched = join(dataDir, "never-opened");
    const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], {
      env: { ...process.env, DATABASE_URL: "", PORT: String(port), HOST: "127.0.0.1", SVC_DATA_DIR: untouched, SVC_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exited(child)).toBe(2);
    expect(stderr.trim()).toBe(`svc: port ${port} on 127.0.0.1 is in use by another program; stop it, or set PORT to a free port`);
    expect(existsSync(untouched)).toBe(false);
  });

  it("refuses to run one role of a split deployment on the embedded database, which one process owns", async () => {
    for (const role of ["api", "worker", "maintenance"]) {
      const child = svc([role], 0);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await exited(child), role).toBe(2);
      expect(stderr).toContain("needs DATABASE_URL");
    }
  });
});
