import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { svcdInstallCommand } from "@svc/sdk";
import { beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { builtSvcdTarball, connectMachine, untilConnection } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

vi.setConfig({ testTimeout: 240_000 });

/*
 * svcd installed from svc itself (docs/machines.md, "Install svcd"): the command the console and
 * `svc machines connect` show, run by sh with a fresh HOME under bubblewrap, which hides this checkout (the
 * installed svcd has nothing but what svc served: CI installs bwrap, and without it this fails as the pool
 * isolation test does). No service manager in a test (SVCD_SERVICE_MANAGER=foreground): svcd runs in the
 * foreground of the installer, as on a computer without systemd or launchd.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

// No SVC_PUBLIC_URL: the installer names the origin it was fetched from (the test server's real address).
const server = useTestServer({ SVC_PUBLIC_URL: "", SVC_MAINTENANCE_INTERVAL_MS: "200", SVC_MACHINE_GRACE_SECONDS: "1" }, { worker: true });
const provider = useFakeProvider();

// What svc serves is svcd's build.
beforeAll(() => void builtSvcdTarball(), 240_000);

/** Runs `command` with sh under bubblewrap: this checkout hidden, HOME the given directory, nothing of this process's environment but PATH. */
function sandboxed(command: string, home: string) {
  const child = spawn("bwrap", ["--unshare-user-try", "--die-with-parent", "--dev-bind", "/", "/", "--tmpfs", ROOT, "--chdir", home, "--", "sh", "-c", command], {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, SVCD_SERVICE_MANAGER: "foreground" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { output: () => output, exited };
}

describe("svcd installed from svc", () => {
  it("the console's command, on a computer with only Node.js: installs svcd under HOME, which comes online, runs a command (its token in no environment), and uninstalls", async () => {
    const api = server.api;
    const project = await agentProject(api, provider.baseUrl);
    const machine = await connectMachine(api, project.token, project.orgId, project.projectId, "fresh-laptop");
    const home = mkdtempSync(join(tmpdir(), "svcd-install-home-"));
    onTestFinished(() => rmSync(home, { recursive: true, force: true }));

    const installer = sandboxed(svcdInstallCommand(server.url, machine.daemonToken), home);
    await untilConnection(api, project.token, project.orgId, machine.machineId, "online").catch((err: Error) => {
      throw new Error(`${err.message}\n${installer.output()}`);
    });
    const machineHome = join(home, ".svcd", machine.machineId);
    expect(statSync(join(machineHome, "token")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(machineHome, "token"), "utf8").trim()).toBe(machine.daemonToken);
    expect(readFileSync(join(machineHome, "svcd.json"), "utf8")).not.toContain(machine.daemonToken);
    expect(installer.output()).toContain(`${machineHome}/svcd start|stop|restart|status|uninstall`);

    // A command on it: it runs, and no process environment it can read holds the machine's token.
    const configId = await createConfig(api, project, yamlConfig(project, `machine_sources:\n  - machine_name: fresh-laptop\n    cwd: ${home}\n`));
    const probe = `echo ran; env | grep -c SVC_DAEMON_TOKEN; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${machine.daemonToken}`;
    provider.script({ toolCalls: [{ name: "run_command", input: { command: probe } }] }, { text: "done" });
    const agentId = await launch(api, project, configId, "probe");
    const list = await untilEvents(api, project, agentId, (e) => finalOutputs(e).length === 1);
    const result = list.find((e) => e.event_kind === "tool_result")!.content_blocks[0].value;
    expect(result.output, JSON.stringify(result)).toBe("ran\n0\n0\n");

    const status = sandboxed(`${machineHome}/svcd status`, home);
    expect(await status.exited, status.output()).toBe(0);
    expect(status.output()).toMatch(/state +running \(pid \d+\)/);

    const uninstall = sandboxed(`${machineHome}/svcd uninstall`, home);
    expect(await uninstall.exited, uninstall.output()).toBe(0);
    // The foreground svcd ended its runtime, and the installer that ran it exited with it.
    expect(await installer.exited, installer.output()).toBe(0);
    await untilConnection(api, project.token, project.orgId, machine.machineId, "offline");
    expect(existsSync(machineHome)).toBe(false);
    // The installer left nothing behind in ~/.svcd: no stage, no token.
    expect(spawnSync("ls", ["-A", join(home, ".svcd")], { encoding: "utf8" }).stdout).toBe("");
  });
});
