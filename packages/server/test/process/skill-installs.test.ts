import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, send, untilEvents } from "../support/agent-loop.js";
import { connectMachine, untilConnection, useDaemons } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { sendForm, skillFiles, skillMd, skillZip, tarGz, uploadSkill, zip } from "../api/skills-fixtures.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * The skill tool with machines, end to end with real `svcd` processes: the skill's files installed on each
 * attached machine (GET /daemon/skills/{id}/archive with the offered token), a command reading one, the
 * same digest installed again as a no-op, an offline machine reported unreachable, an archive whose bytes
 * do not match its digest refused, and svcd's start failure recorded on its machine.
 */

const server = useTestServer({ SVC_MAINTENANCE_INTERVAL_MS: "200" }, { worker: true });
const provider = useFakeProvider();

const { dir, daemon } = useDaemons(server);

/** A machine granted to the project with a daemon connected (unless `offline`); its name and home. */
async function machine(project: AgentProject, name: string, offline = false) {
  const connected = await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
  const home = dir("svcd-home-");
  if (!offline) {
    daemon(connected.daemonToken, home);
    await untilConnection(server.api, project.token, project.orgId, connected.machineId, "online");
  }
  return { ...connected, name, home };
}

const config = (project: AgentProject, skillId: string, machines: string[]) =>
  yamlConfig(project, `skills:\n  - ${skillId}\nmachine_sources:\n${machines.map((m) => `  - machine_name: ${m}\n`).join("")}`);

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");
const installs = (result: any) => result.content_blocks.find((b: any) => b.type === "structured_data").value.installations;

async function projectSkill(project: AgentProject, archive: Buffer) {
  return uploadSkill(server.url, { token: project.token }, project.orgId, { kind: "project", project_id: project.projectId }, archive);
}

describe("the skill tool with machines", () => {
  it("installs the files on the machine, where a command reads them; the same revision again is a no-op", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const md = skillMd("release-notes", "Use when writing release notes.", "Use templates/example.md.\n");
    // A UTF-8 name without zip's UTF-8 flag (as Linux's zip writes it) and an executable script.
    const extra = [
      { name: "", rawName: Buffer.from("release-notes/notes/résumé.md"), data: "cv" },
      { name: "release-notes/scripts/run.sh", mode: 0o100755, data: "#!/bin/sh\n" },
    ];
    const skill = await projectSkill(project, zip([...skillFiles("release-notes", md), ...extra]));
    const box = await machine(project, "skill-box");
    const folder = join(box.home, "skills", "release-notes");
    provider.script(
      { toolCalls: [{ name: "skill", input: { name: "release-notes" } }] },
      { toolCalls: [{ name: "run_command", input: { command: `cat ${join(folder, "templates", "example.md")}` } }] },
      { text: "Done." },
    );
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, skill.id, ["skill-box"])), "go");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const [loaded, cat] = toolResults(list);
    expect(loaded.outcome, JSON.stringify(loaded.content_blocks)).toBe("succeeded");
    expect(installs(loaded)).toEqual([{ machine_id: box.machineId, machine_name: "skill-box", state: "ready", path: folder }]);
    const text = loaded.content_blocks[0].text as string;
    expect(text).toContain(md);
    expect(text).toContain(`- skill-box (${box.machineId}): ready, the files are in ${folder}`);
    expect(cat.content_blocks[0].value).toMatchObject({ state: "exited", exit_code: 0, output: "# Example\n" });
    // The machine has exactly the files svc listed, by the names svc showed.
    const installed = readdirSync(folder, { recursive: true, encoding: "utf8" }).filter((path) => statSync(join(folder, path)).isFile());
    expect(installed.sort()).toEqual(skill.files.map((f: { path: string }) => f.path).sort());
    expect(skill.files.map((f: { path: string }) => f.path)).toContain("notes/résumé.md");
    expect(readFileSync(join(folder, "notes", "résumé.md"), "utf8")).toBe("cv");
    expect(statSync(join(folder, "scripts", "run.sh")).mode & 0o111).not.toBe(0);

    // A file the agent left there stays: the second install of the same digest changes nothing.
    writeFileSync(join(folder, "notes.txt"), "mine");
    const before = statSync(join(folder, "SKILL.md")).mtimeMs;
    provider.script({ toolCalls: [{ name: "skill", input: { name: "release-notes" } }] }, { text: "Again." });
    await send(server.api, project, agentId, "load it again");
    const again = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect(installs(toolResults(again)[2])).toEqual([expect.objectContaining({ state: "ready", path: folder })]);
    expect(existsSync(join(folder, "notes.txt"))).toBe(true);
    expect(statSync(join(folder, "SKILL.md")).mtimeMs).toBe(before);
  }, 90_000);

  it("replaces the folder whole with a later revision, loaded by an agent whose config pins it", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const skill = await projectSkill(project, skillZip("changing", skillMd("changing", "Use when changing.", "First.\n")));
    const box = await machine(project, "changing-box");
    const folder = join(box.home, "skills", "changing");
    const load = async () => {
      provider.script({ toolCalls: [{ name: "skill", input: { name: "changing" } }] }, { text: "Done." });
      const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, skill.id, ["changing-box"])), "go");
      return toolResults(await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1))[0];
    };
    expect(installs(await load())).toEqual([expect.objectContaining({ state: "ready", path: folder })]);
    writeFileSync(join(folder, "leftover.txt"), "from revision 1");
    // Revision 2 replaces SKILL.md only: svc writes it as a .tar.gz with the other files kept.
    const updated = await sendForm(server.url, "POST", `/api/v1/orgs/${project.orgId}/skills/${skill.id}`, { token: project.token }, { skill_md: { file: Buffer.from(skillMd("changing", "Use when changing.", "Second.\n")) } });
    expect(updated.body.revision, updated.text).toBe(2);
    const second = await load();
    expect(second.content_blocks[0].text).toContain("(revision 2)");
    expect(installs(second)).toEqual([expect.objectContaining({ state: "ready", path: folder })]);
    expect(readFileSync(join(folder, "SKILL.md"), "utf8")).toContain("Second.");
    expect(readdirSync(folder).sort()).toEqual(["SKILL.md", "templates"]);
  }, 90_000);

  it("installs on every attached machine and says which machine was offline", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    // A .tar.gz this time, with an executable script and a path too long for a plain tar header (pax).
    const deep = `deploy/${"nested-folder/".repeat(8)}notes.md`;
    const archive = await tarGz([...skillFiles("deploy"), { name: "deploy/scripts/run.sh", mode: 0o755, data: "#!/bin/sh\necho deployed\n" }, { name: deep, data: "deep" }]);
    const skill = await projectSkill(project, archive);
    const one = await machine(project, "fleet-1");
    const two = await machine(project, "fleet-2");
    const away = await machine(project, "fleet-away", true);
    provider.script({ toolCalls: [{ name: "skill", input: { name: "deploy" } }] }, { text: "Done." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, skill.id, ["fleet-1", "fleet-2", "fleet-away"])), "go");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("succeeded");
    expect(installs(result)).toEqual([
      { machine_id: one.machineId, machine_name: "fleet-1", state: "ready", path: join(one.home, "skills", "deploy") },
      { machine_id: two.machineId, machine_name: "fleet-2", state: "ready", path: join(two.home, "skills", "deploy") },
      { machine_id: away.machineId, machine_name: "fleet-away", state: "unreachable", error: expect.stringContaining("offline") },
    ]);
    for (const m of [one, two]) {
      const folder = join(m.home, "skills", "deploy");
      expect(readFileSync(join(folder, "templates", "example.md"), "utf8")).toBe("# Example\n");
      expect(statSync(join(folder, "scripts", "run.sh")).mode & 0o111).not.toBe(0);
      expect(readFileSync(join(folder, deep.slice("deploy/".length)), "utf8")).toBe("deep");
    }
  }, 90_000);

  it("refuses an archive whose bytes are not the revision's digest, and installs nothing", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const skill = await projectSkill(project, skillZip("tampered"));
    // The stored archive is changed behind svc's back (a damaged or tampered store).
    const stored = archivesIn(join(server.config.dataDir, "blobs", "skills"));
    const newest = stored.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
    writeFileSync(newest, zip([{ name: "tampered/SKILL.md", data: skillMd("tampered", "Changed.") }]));
    const box = await machine(project, "careful");
    provider.script({ toolCalls: [{ name: "skill", input: { name: "tampered" } }] }, { text: "Done." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, skill.id, ["careful"])), "go");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    // The instructions still come back (svc has them); the machine says why it has no files.
    expect(result.outcome).toBe("succeeded");
    expect(installs(result)).toEqual([{ machine_id: box.machineId, machine_name: "careful", state: "failed", error: expect.stringMatching(/digest sha256:[0-9a-f]{64} is not the offered sha256:/) }]);
    expect(existsSync(join(box.home, "skills", "tampered"))).toBe(false);
  }, 90_000);
});

describe("svcd's failure reports", () => {
  it("records a daemon that cannot use its home on the machine, and clears it once a daemon registers", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const connected = await connectMachine(server.api, project.token, project.orgId, project.projectId, "broken-home");
    const file = join(dir("svcd-file-"), "not-a-directory");
    writeFileSync(file, "");
    const failing = daemon(connected.daemonToken, join(file, "home"));
    expect(await failing.exited, failing.output()).toBe(1);
    const path = `/api/v1/orgs/${project.orgId}/machines/${connected.machineId}`;
    const seen = (await server.api.get(path, { token: project.token })).body;
    expect(seen.failure_report).toEqual({
      stage: "daemon_start",
      exit_status: 1,
      output_tail: expect.stringContaining(`svcd could not use its home ${join(file, "home")}`),
      output_truncated: false,
      daemon_version: expect.any(String),
      reported_at: expect.any(String),
    });

    daemon(connected.daemonToken, dir("svcd-home-"));
    await untilConnection(server.api, project.token, project.orgId, connected.machineId, "online");
    await eventually(async () => (await server.api.get(path, { token: project.token })).body, (machine) => machine.failure_report === undefined);
  }, 60_000);
});

describe("svcd's failure reports, registration", () => {
  it("reports a registration svc refuses for good (a damaged journal) and keeps trying", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const connected = await connectMachine(server.api, project.token, project.orgId, project.projectId, "bad-journal");
    const home = dir("svcd-home-");
    // A journal svc can never accept: its process id is longer than any svc makes.
    const processId = "x".repeat(100);
    mkdirSync(join(home, "processes", processId), { recursive: true });
    writeFileSync(
      join(home, "processes", processId, "journal.json"),
      JSON.stringify({ process_id: processId, supervisor_instance_id: "old", phase: "terminal", offer: {}, pid: null, started_at: null }),
    );
    const running = daemon(connected.daemonToken, home);
    const path = `/api/v1/orgs/${project.orgId}/machines/${connected.machineId}`;
    const seen = await eventually(async () => (await server.api.get(path, { token: project.token })).body, (machine) => machine.failure_report !== undefined);
    expect(seen.failure_report).toMatchObject({ stage: "daemon_start", output_tail: expect.stringContaining("svcd could not register with svc: POST /api/v1/daemon/runtimes answered 400") });
    expect(seen.connection_state).toBe("offline");
    expect(running.child.exitCode).toBe(null);
  }, 60_000);
});

/** Every stored file under `root`. */
function archivesIn(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const path = join(root, entry.name);
    return entry.isDirectory() ? archivesIn(path) : [path];
  });
}
