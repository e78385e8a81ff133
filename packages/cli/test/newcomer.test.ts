import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useTestServer } from "../../server/test/support/server.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { eventually } from "../../server/test/support/agent-loop.js";
import { json, useCli, userCodeIn, type Run } from "./support.js";

/*
 * docs/cli.md's walk-through, from the built `svc` only: log in by device login, create an organization,
 * a model key, a provider, a model and its grant, connect this computer (the real svcd, started by the
 * command `svc machines connect` printed), launch an agent whose command needs approval, tail it, approve.
 */
// The printed installer downloads svcd from svc's public URL, and svcd connects to it: a reachable one.
const server = useTestServer({ SVC_DEVICE_POLL_INTERVAL_SECONDS: "1" }, { worker: true, reachablePublicUrl: true });
const provider = useFakeProvider();
const { svc, tempDir, configDir } = useCli(server);

const daemons: ChildProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) {
    if (daemon.exitCode !== null || daemon.signalCode !== null) continue;
    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    // Its own process group: the installer (svcd install, after the shell execs it) and svcd under it.
    process.kill(-daemon.pid!, "SIGTERM");
    await exited;
  }
});

/**
 * Runs the command `svc machines connect` printed, as a person pastes it into a shell, with HOME in `home`.
 * No service manager: svcd runs in the foreground and stops with the test (never registered on this computer).
 */
function runPrinted(command: string, home: string): { child: ChildProcess; output: () => string } {
  const child = spawn("sh", ["-c", command], { cwd: home, env: { PATH: process.env["PATH"] ?? "", HOME: home, SVCD_SERVICE_MANAGER: "foreground" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  daemons.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

const ok = (run: Run) => {
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
};

describe("a newcomer, from the CLI only", () => {
  it("logs in, sets up a model and this computer, launches an agent, watches its command wait, approves it and sees the output", async () => {
    const env = { SVC_CONFIG_DIR: configDir() };
    const session = await server.api.signup();
    let approved: Promise<{ status: number }> | undefined;
    const login = await svc(["login", "--no-browser"], {
      env,
      onStderr: (text) => {
        const code = userCodeIn(text);
        if (code && !approved) approved = server.api.post("/api/auth/device/approve", { user_code: code }, { session });
      },
    });
    expect(ok(login)).toBe(`Logged in to ${server.url} as ${session.email}.\n`);
    expect((await approved!).status).toBe(200);

    const created = json(await svc(["orgs", "create", "Acme", "--json"], { env }));
    // One organization with one project: no --org or --project is needed from here on.
    expect(json(await svc(["projects", "list", "--json"], { env })).map((p: { id: string }) => p.id)).toEqual([created.project.id]);
    const key = json(await svc(["secrets", "create", "model key", "--json"], { env, input: "sk-anything\n" }));
    const mpc = json(await svc(["providers", "create", "local", "--secret", key.id, "--format", "openai-chat-completions", "--base-url", provider.baseUrl, "--json"], { env }));
    expect(mpc.config).toMatchObject({ name: "local", api_format: "openai-chat-completions", credential_secret_id: key.id });
    const model = json(await svc(["models", "create", "local", "fast", "--slug", "fake-model", "--context-window", "128000", "--json"], { env }));
    expect(ok(await svc(["models", "grant", model.id], { env }))).toContain(`Granted ${model.id} to ${created.project.id}`);
    expect(ok(await svc(["models"], { env }))).toBe(`local  fast  ${model.id}\n`);

    const workdir = tempDir("svc-cli-work-");
    const connect = await svc(["machines", "connect", "laptop"], { env, cwd: workdir });
    const printed = ok(connect).split("\n").find((line) => line.includes("install/svcd.sh"))!.trim();
    const daemon = runPrinted(printed, tempDir("svc-cli-home-"));
    await eventually(async () => json(await svc(["machines", "list", "--json"], { env })), (machines) => machines[0]?.connection_state === "online").catch((err: unknown) => {
      throw new Error(`svcd did not connect: ${String(err)}\n${daemon.output()}`);
    });

    const file = join(workdir, "agent.yaml");
    writeFileSync(file, "version: v1\ninstruction: You help.\nmodel:\n  provider_config: local\n  name: fast\nmachine_sources:\n  - machine_name: laptop\nmachine_tools:\n  permission: {mode: always_ask}\n");
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo made-on-$(basename $PWD)" } }] }, { text: "All done." });
    const agentId = json(await svc(["agents", "launch", "-f", file, "-m", "run it", "--json"], { env })).agent.id as string;

    let asked: (text: string) => void = () => {};
    const shown = new Promise<string>((resolve) => (asked = resolve));
    const tail = svc(["tail", agentId, "--until-idle", "--no-deltas"], { env, onStdout: (text) => text.includes("svc approve") && asked(text) });
    const waiting = await shown;
    expect(waiting).toContain("? Permission requested for run_command [int_");
    const approve = await svc(["approve", agentId], { env });
    expect(ok(approve)).toMatch(/^Approved int_[a-z2-7]{26}\.\n$/);
    const tailed = await tail;
    expect(tailed.code, tailed.stderr).toBe(0);
    const lines = tailed.stdout.split("\n");
    // The call, what waits for the person, its result with the command's output, then the model's answer.
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    expect(at("→ run_command")).toBeGreaterThan(-1);
    expect(at("? Permission requested")).toBeGreaterThan(at("→ run_command"));
    expect(at("← succeeded")).toBeGreaterThan(at("? Permission requested"));
    expect(lines[at("← succeeded") + 1]).toBe(`  made-on-${workdir.split("/").at(-1)}`);
    expect(lines[at("← succeeded") + 2]).toBe("  (exit 0)");
    expect(lines).toContain("All done.");

    // Nothing waits any more: approving again is a usage error, a made-up agent an API error.
    expect((await svc(["approve", agentId], { env })).code).toBe(2);
    const missing = await svc(["approve", "agt_aaaaaaaaaaaaaaaaaaaaaaaaaa"], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("HTTP 404");
  });
});

describe("signing up and in with a password", () => {
  it("svc signup reads the password from stdin and logs in; svc login --email does the same for an existing account", async () => {
    const dir = configDir();
    const email = `newcomer-${Date.now()}@example.com`;
    const signup = await svc(["signup", "--email", email, "--name", "Newcomer"], { env: { SVC_CONFIG_DIR: dir }, input: "a long password\n" });
    expect(ok(signup)).toBe(`Logged in to ${server.url} as ${email}.\n`);
    const file = join(dir, "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ url: server.url, token: expect.stringMatching(/^svc_pat_v1_/) });
    expect(json(await svc(["whoami", "--json"], { env: { SVC_CONFIG_DIR: dir } })).user.email).toBe(email);

    const other = configDir();
    expect(ok(await svc(["login", "--email", email], { env: { SVC_CONFIG_DIR: other }, input: "a long password\n" }))).toBe(`Logged in to ${server.url} as ${email}.\n`);
    const token = JSON.parse(readFileSync(join(other, "credentials.json"), "utf8")).token as string;
    // Two logins, two tokens, each named as device logins name theirs.
    const tokens = await server.api.get("/api/v1/personal-access-tokens", { token });
    expect(tokens.body.data.map((t: { name: string }) => t.name)).toEqual(["svc CLI", "svc CLI"]);

    const wrong = await svc(["login", "--email", email], { env: { SVC_CONFIG_DIR: configDir() }, input: "not the password\n" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("HTTP 401");
    expect((await svc(["signup", "--email", email, "--name", "Again"], { input: "" })).code).toBe(2);
  });
});

describe("secrets and grants", () => {
  it("stores every kind of secret from stdin or files, never echoing a value, and grants and revokes secrets, skills, machines and models", async () => {
    const { token, org, project } = await server.api.userWithOrg("Grants Org");
    const env = { SVC_TOKEN: token, SVC_CONFIG_DIR: configDir() };
    const files = tempDir("svc-cli-secrets-");
    const pem = join(files, "app.pem");
    writeFileSync(pem, "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n");
    const aws = json(await svc(["secrets", "create", "aws", "--kind", "aws_credentials", "--json"], { env, input: '{"access_key_id":"AKIA1","secret_access_key":"hush-1"}' }));
    expect(aws).toMatchObject({ kind: "aws_credentials", payload_keys: expect.arrayContaining(["access_key_id", "secret_access_key"]) });
    const github = json(await svc(["secrets", "create", "gh", "--kind", "github_app_credentials", "--field-file", `private_key=${pem}`, "--json"], { env, input: '{"app_id":"12345"}' }));
    expect(github.payload_keys).toEqual(expect.arrayContaining(["app_id", "private_key"]));
    const slackFile = join(files, "slack.json");
    writeFileSync(slackFile, JSON.stringify({ access_token: "xoxb-1", client_id: "c", client_secret: "hush-2", signing_secret: "hush-3" }));
    expect(json(await svc(["secrets", "create", "slack", "--kind", "slack_app_credentials", "--from-file", slackFile, "--json"], { env })).kind).toBe("slack_app_credentials");
    expect(json(await svc(["secrets", "create", "oauth", "--kind", "oauth_token_set", "--json"], { env, input: '{"access_token":"hush-4"}' })).kind).toBe("oauth_token_set");
    const generic = json(await svc(["secrets", "create", "plain", "--owner", "org", "--metadata", "env=prod", "--json"], { env, input: "hush-5\n" }));
    expect(json(await svc(["secrets", "update", generic.id, "--json"], { env, input: "hush-6" })).current_version_number).toBe(2);
    const listed = ok(await svc(["secrets", "list", "--json"], { env }));
    for (const value of ["hush-1", "hush-2", "hush-3", "hush-4", "hush-5", "hush-6", "MIIB"]) expect(listed).not.toContain(value);

    // The server names a missing field; bad JSON and a field file for a generic secret are usage errors.
    const missing = await svc(["secrets", "create", "half", "--kind", "aws_credentials"], { env, input: '{"access_key_id":"AKIA1"}' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("HTTP 400");
    expect((await svc(["secrets", "create", "bad", "--kind", "aws_credentials"], { env, input: "{not json" })).code).toBe(2);
    expect((await svc(["secrets", "create", "bad", "--field-file", `value=${pem}`], { env, input: "" })).code).toBe(2);
    expect((await svc(["secrets", "create", "bad", "--kind", "password"], { env, input: "x" })).code).toBe(2);

    expect(ok(await svc(["secrets", "grant", generic.id], { env }))).toBe(`Granted ${generic.id} to ${project.id}.\n`);
    expect(json(await svc(["secrets", "grants", generic.id, "--json"], { env })).map((g: { target_project: { id: string } }) => g.target_project.id)).toEqual([project.id]);
    expect(ok(await svc(["secrets", "revoke", generic.id], { env }))).toBe(`Revoked ${generic.id} from ${project.id}.\n`);
    expect(json(await svc(["secrets", "grants", generic.id, "--json"], { env }))).toEqual([]);
    expect((await svc(["secrets", "revoke", generic.id], { env })).code).toBe(2);

    const skillDir = tempDir("svc-cli-skill-");
    writeFileSync(join(skillDir, "SKILL.md"), "---\nname: notes\ndescription: Use when taking notes.\n---\nBe brief.\n");
    const skill = json(await svc(["skills", "push", skillDir, "--json"], { env }));
    expect(ok(await svc(["skills", "grant", skill.id], { env }))).toBe(`Granted ${skill.id} to ${project.id}.\n`);
    expect(ok(await svc(["skills", "revoke", skill.id], { env }))).toBe(`Revoked ${skill.id} from ${project.id}.\n`);
    expect(json(await svc(["skills", "grants", skill.id, "--json"], { env }))).toEqual([]);

    const machine = json(await svc(["machines", "connect", "box", "--json"], { env })).machine.id as string;
    expect(ok(await svc(["machines", "revoke", machine], { env }))).toBe(`Revoked box from ${project.id}.\n`);
    expect(ok(await svc(["machines", "grant", machine], { env }))).toMatch(new RegExp(`^Granted box to ${project.id} \\(`));
    expect(ok(await svc(["machines", "delete", machine], { env }))).toBe("Deleted.\n");

    const mpc = json(await svc(["providers", "create", "remote", "--secret", generic.id, "--preset", "anthropic", "--json"], { env })).config;
    expect(mpc).toMatchObject({ api_format: "anthropic-messages", auth_kind: "api_key_header" });
    expect((await svc(["providers", "create", "half", "--secret", generic.id], { env })).code).toBe(2);
    const model = json(await svc(["models", "create", mpc.id, "big", "--slug", "claude", "--context-window", "200000", "--json"], { env }));
    expect(json(await svc(["models", "list", "--provider", "remote", "--json"], { env })).map((m: { id: string }) => m.id)).toEqual([model.id]);
    ok(await svc(["models", "grant", model.id], { env }));
    expect(ok(await svc(["models", "revoke", model.id], { env }))).toBe(`Revoked big from ${project.id}.\n`);
    expect(json(await svc(["models", "--json"], { env }))).toEqual([]);
    expect(ok(await svc(["models", "delete", "remote", model.id], { env }))).toBe("Deleted.\n");
    expect(json(await svc(["providers", "list", "--json"], { env })).map((p: { name: string }) => p.name)).toEqual(["remote"]);

    expect(json(await svc(["integrations", "list", "--json"], { env }))).toEqual([]);
    expect(json(await svc(["schedules", "--json"], { env }))).toEqual([]);
    expect(org.id).toMatch(/^org_/);
  });
});
