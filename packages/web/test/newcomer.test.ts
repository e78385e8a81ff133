import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { builtSvcdTarball } from "../../server/test/support/daemon.js";
import { expectText, PASSWORD, replaceConfigText, sidewaysOverflow, useConsole } from "./support.js";

/*
 * Issue #23's newcomer, in the console only: sign up, create the organization, add the model key, a
 * provider (the fake one) and a model granted to the project, connect this computer by running the svcd
 * command the page shows (a real svcd), launch an agent whose command needs approval, watch it stream,
 * approve it and read the command's output and the final answer. The API is used only to script the fake
 * provider and to read facts back. Screenshots: test-artifacts/console/<database>/newcomer-*.png.
 */

const ui = useConsole();
const provider = useFakeProvider();
const daemons: ChildProcess[] = [];
/** Temporary folders: svcd's home, the machine's working directory. */
const homes: string[] = [];

// The command installs the svcd svc serves: its build's package, made when stale or missing.
beforeAll(() => void builtSvcdTarball(), 240_000);

afterAll(async () => {
  for (const daemon of daemons) {
    if (daemon.exitCode !== null || daemon.signalCode !== null) continue;
    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    // Its own process group: the installer (svcd install, after the shell execs it) and svcd under it.
    process.kill(-daemon.pid!, "SIGTERM");
    await exited;
  }
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/**
 * Runs the command the page showed as a person pastes it into a terminal, in a fresh home. No service
 * manager (SVCD_SERVICE_MANAGER=foreground): svcd runs in the foreground, as where there is no systemd or
 * launchd, and stops with the test rather than staying registered on the computer running it.
 */
function runInTerminal(command: string): { output: () => string } {
  const home = mkdtempSync(join(tmpdir(), "svc-newcomer-home-"));
  homes.push(home);
  const child = spawn("sh", ["-c", command], { cwd: home, env: { PATH: process.env["PATH"] ?? "", HOME: home, SVCD_SERVICE_MANAGER: "foreground" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  daemons.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { output: () => output };
}

const AGENT_CONFIG = `version: v1
instruction: You run commands on my computer when asked.
model:
  provider_config: local
  name: fast
machine_sources:
  - machine_name: laptop
machine_tools:
  permission: {mode: always_ask}
`;

function sections(page: Page) {
  return page.getByRole("navigation", { name: "Sections" });
}

/** Reads a fact back through the API with the page's own session (GETs need no CSRF header). */
async function read<T>(page: Page, path: string): Promise<T> {
  const reply = await page.request.get(`${ui.url}${path}`);
  expect(reply.status(), await reply.text()).toBe(200);
  return (await reply.json()) as T;
}

it("signs up, sets up a model and this computer, launches an agent, approves its command and reads the output, all in the console", async () => {
  const page = await ui.page();
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: ui.url });

  // 1. Sign up and create the organization (it comes with its first project).
  await page.goto("/");
  await page.getByRole("link", { name: "Create an account" }).click();
  await page.getByLabel("Name").fill("Ada");
  await page.getByLabel("Email").fill(`newcomer-${Date.now()}@example.com`);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByLabel("Organization name").fill("Analytical Engines");
  await page.getByRole("button", { name: "Create organization" }).click();
  const start = page.getByRole("region", { name: /Getting started/ });
  await start.waitFor();
  await ui.shot(page, "newcomer-1-getting-started");

  // 2. The model key, as an organization secret: reached from the getting-started steps.
  await start.getByRole("link", { name: "Secrets" }).click();
  await page.getByLabel("Name", { exact: true }).fill("model key");
  await page.getByLabel("Value").fill("sk-anything");
  await page.getByRole("button", { name: "Add secret" }).click();
  await page.getByRole("table", { name: "Secrets" }).getByText("model key").waitFor();
  expect(await page.content()).not.toContain("sk-anything");

  // 3. The model provider (the fake one), a model, and its grant to the project.
  await sections(page).getByRole("link", { name: "Models" }).click();
  const form = page.getByRole("form", { name: "Add a model provider" });
  await form.getByLabel("Provider name").fill("local");
  await form.getByLabel("API format").selectOption("openai-chat-completions");
  await form.getByLabel("Base URL").fill(provider.baseUrl);
  await form.getByLabel("API key secret").selectOption({ label: "model key" });
  await form.getByRole("button", { name: "Add provider" }).click();
  const local = page.getByRole("region", { name: "Provider local" });
  await local.getByLabel("Model name").fill("fast");
  await local.getByLabel("Provider model id").fill("fake-model");
  await local.getByLabel("Context window (tokens)").fill("128000");
  await local.getByRole("button", { name: "Add model" }).click();
  await local.getByRole("button", { name: "Grant fast to the project" }).click();
  await local.getByRole("button", { name: "Revoke fast from the project" }).waitFor();
  await ui.shot(page, "newcomer-2-models");

  // 4. Connect this computer: copy the command the page shows and run it; the page sees svcd come online.
  await sections(page).getByRole("link", { name: "Machines" }).click();
  const connect = page.getByRole("form", { name: "Connect a machine" });
  await connect.getByLabel("Machine name").fill("laptop");
  const workdir = mkdtempSync(join(tmpdir(), "svc-newcomer-work-"));
  homes.push(workdir);
  await connect.getByLabel("Working directory (optional)").fill(workdir);
  await connect.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Copy the svcd command" }).click();
  await expectText(page, "Copied.");
  const command = await page.evaluate<string>("navigator.clipboard.readText()");
  expect(command).toBe(await page.locator("pre.copy").textContent());
  expect(command).toMatch(new RegExp(`^curl -fsSL ${ui.url}/install/svcd\\.sh \\| SVC_DAEMON_TOKEN=svc_daemon_v1_\\S+ sh$`));
  await expectText(page, "Waiting for laptop to connect…");
  await ui.shot(page, "newcomer-3-connect");
  const svcd = runInTerminal(command);
  await page
    .getByText("laptop is online.")
    .waitFor({ timeout: 90_000 })
    .catch((err: unknown) => {
      throw new Error(`svcd did not connect: ${String(err)}\n${svcd.output()}`);
    });
  const machines = page.getByRole("table", { name: "Machines" });
  await machines.getByText("online", { exact: true }).waitFor();
  expect(await machines.getByRole("list", { name: "Projects laptop is granted to" }).textContent()).toContain("Default");
  await ui.shot(page, "newcomer-4-machine-online");

  // 5. Launch an agent whose commands wait for approval; the model calls run_command, then answers.
  provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo hello-from-svcd && pwd" } }] }, { text: "Your computer said hello-from-svcd." });
  await sections(page).getByRole("link", { name: "Launch" }).click();
  // The starter already names the model the project was granted.
  await expect.poll(() => page.getByLabel("Config (YAML)").innerText()).toContain("provider_config: local\n  name: fast");
  await replaceConfigText(page, AGENT_CONFIG);
  await page.getByLabel("Name (optional)").fill("hello");
  await page.getByLabel("Opening message (optional)").fill("Say hello from my computer.");
  await ui.shot(page, "newcomer-5-launch");
  await page.getByRole("button", { name: "Launch" }).click();
  await page.getByRole("heading", { name: "hello" }).waitFor();
  await page.getByText("live", { exact: true }).waitFor();
  await expectText(page, "Say hello from my computer.");

  // 6. The command waits for a person: the approval names it; approve it from the page.
  const approval = page.getByRole("form", { name: /run_command/ });
  await approval.waitFor();
  expect(await approval.textContent()).toContain("echo hello-from-svcd && pwd");
  expect(await approval.textContent()).toContain(workdir);
  await ui.shot(page, "newcomer-6-approval");
  const [org, , project, , agent] = new URL(page.url()).pathname.split("/").slice(2);
  const base = `/api/v1/orgs/${org}/projects/${project}/agents/${agent}`;
  await phoneShot(page, "newcomer-6-approval-phone", "A question or approval waits for your answer.");
  await approval.getByLabel("Allow").check();
  await approval.getByRole("button", { name: "Answer" }).click();

  // 7. The streamed timeline shows the command's output and the final answer, without a reload.
  const timeline = page.getByRole("list", { name: "Timeline" });
  await timeline.getByText("Your computer said hello-from-svcd.").waitFor({ timeout: 60_000 });
  const result = timeline.locator("li.event.tool_result");
  expect(await result.locator(".event-head strong").textContent()).toBe("Tool result: run_command succeeded");
  expect(await result.getByLabel("Output").textContent()).toBe(`hello-from-svcd\n${workdir}\n`);
  expect(await result.locator("figcaption").textContent()).toBe("$ echo hello-from-svcd && pwd");
  await result.getByText("exit 0").waitFor();
  expect(await timeline.locator("li.event.model_output").count()).toBe(2);
  await page.getByText("Nothing waits for an answer.").waitFor();
  await timeline.getByText("Permission requested for run_command: Allow").waitFor();
  await ui.shot(page, "newcomer-7-answer");
  await phoneShot(page, "newcomer-7-answer-phone", "Your computer said hello-from-svcd.");

  // Facts, read back: the call ran on the machine and succeeded; nothing is left open.
  const calls = await read<{ data: Array<{ name: string; state: string }> }>(page, `${base}/tool-calls?limit=100`);
  expect(calls.data.map((c) => [c.name, c.state])).toEqual([["run_command", "completed"]]);
  const open = await read<{ data: unknown[] }>(page, `${base}/interactions?state=open`);
  expect(open.data).toEqual([]);
  await page.context().close();
});

/** The agent's page at phone width (390 px), with the desktop page's session: it fits without sideways scrolling. */
async function phoneShot(desktop: Page, name: string, waitFor: string): Promise<void> {
  const phone = await ui.page(390);
  await phone.context().addCookies(await desktop.context().cookies());
  await phone.goto(desktop.url());
  await expectText(phone, waitFor);
  expect(await sidewaysOverflow(phone)).toBe(0);
  await ui.shot(phone, name);
  await phone.context().close();
}
