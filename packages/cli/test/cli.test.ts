import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../../server/test/support/server.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { eventually, untilEvents } from "../../server/test/support/agent-loop.js";
import { json, ROOT, useCli } from "./support.js";

const server = useTestServer({ SVC_DEVICE_POLL_INTERVAL_SECONDS: "1" }, { worker: true });
const provider = useFakeProvider();
const { svc, tempDir, configDir } = useCli(server);

describe("svc login", () => {
  it("prints the code, finishes when the user approves, stores the token with mode 0600, and whoami works", async () => {
    const dir = configDir();
    const env = { SVC_CONFIG_DIR: dir };
    const session = await server.api.signup();
    let approved: Promise<unknown> | undefined;
    const login = await svc(["login", "--no-browser"], {
      env,
      onStderr: (text) => {
        const code = /shows the code ([0-9A-F]{5}-[0-9A-F]{5})/.exec(text)?.[1];
        if (code && !approved) approved = server.api.post("/api/auth/device/approve", { user_code: code }, { session });
      },
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`Open ${server.config.publicUrl}/device?user_code=`);
    expect(login.stdout).toBe(`Logged in to ${server.url} as ${session.email}.\n`);
    expect(((await approved) as { status: number }).status).toBe(200);
    const file = join(dir, "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ url: server.url, token: expect.stringMatching(/^svc_pat_v1_/) });

    const me = json(await svc(["whoami", "--json"], { env }));
    expect(me.user).toMatchObject({ id: session.userId, email: session.email });
    const human = await svc(["whoami"], { env });
    expect(human.stdout.split("\n")[0]).toBe(`${session.email} (${session.userId}) on ${server.url}`);

    // The stored token is only for the server it came from.
    const sameServerSpelledOtherwise = await svc(["whoami"], { env: { ...env, SVC_URL: `${server.url.toUpperCase()}/` } });
    expect(sameServerSpelledOtherwise.code, sameServerSpelledOtherwise.stderr).toBe(0);
    const elsewhere = await svc(["whoami"], { env: { ...env, SVC_URL: server.url.replace("127.0.0.1", "localhost") } });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain("(unauthorized, HTTP 401)");
    const logout = await svc(["logout"], { env });
    expect([logout.code, logout.stdout]).toEqual([0, "Logged out.\n"]);
    expect((await svc(["whoami"], { env })).code).toBe(1);
  });

  it("fails with exit code 1 when the user denies", async () => {
    const session = await server.api.signup();
    let denied = false;
    const login = await svc(["login", "--no-browser"], {
      onStderr: (text) => {
        const code = /shows the code ([0-9A-F]{5}-[0-9A-F]{5})/.exec(text)?.[1];
        if (code && !denied) {
          denied = true;
          void server.api.post("/api/auth/device/deny", { user_code: code }, { session });
        }
      },
    });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain("(access_denied, HTTP 400)");
  });
});

describe("exit codes", () => {
  it("is 2 for usage errors and 1 for API errors, with the error's code", async () => {
    expect((await svc(["no-such-command"])).code).toBe(2);
    expect((await svc(["agents", "launch"], { env: { SVC_TOKEN: "x", SVC_ORG: "org_x", SVC_PROJECT: "proj_x" } })).code).toBe(2);
    expect((await svc(["projects", "list", "--limit", "zero"])).code).toBe(2);
    expect((await svc(["tail", "agt_x", "--after", "-1"])).code).toBe(2);
    const unauthorized = await svc(["whoami", "--token", "svc_pat_v1_nope"]);
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toContain("(unauthorized, HTTP 401)");
    expect((await svc(["--help"])).code).toBe(0);
    const version = JSON.parse(readFileSync(join(ROOT, "packages/cli/package.json"), "utf8")).version as string;
    for (const flag of ["--version", "-V"]) expect(await svc([flag])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe("orgs and projects", () => {
  it("lists, creates and remembers the organization and project to use", async () => {
    const { token, org, project } = await server.api.userWithOrg("Cli Org");
    const env = { SVC_TOKEN: token, SVC_CONFIG_DIR: configDir() };
    expect(json(await svc(["orgs", "list", "--json"], { env })).map((o: { id: string }) => o.id)).toEqual([org.id]);
    const created = json(await svc(["projects", "create", "second", "--json"], { env }));
    const listed = json(await svc(["projects", "list", "--json"], { env }));
    expect(listed.map((p: { id: string }) => p.id).sort()).toEqual([project.id, created.id].sort());
    // Two projects: commands that need one ask which, until one is chosen.
    const ambiguous = await svc(["agents", "list"], { env });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain("choose a project");
    expect((await svc(["projects", "use", created.id], { env })).code).toBe(0);
    expect(json(await svc(["agents", "list", "--json"], { env }))).toEqual([]);
    expect(JSON.parse(readFileSync(join(env.SVC_CONFIG_DIR, "credentials.json"), "utf8"))).toEqual({ url: server.url, org: org.id, project: created.id });
    // Stored for this server only: another address is asked which project again.
    const other = await svc(["agents", "list"], { env: { ...env, SVC_URL: server.url.replace("127.0.0.1", "localhost") } });
    expect(other.code).toBe(2);
  });
});

describe("configs, agents and tail", () => {
  let project: AgentProject;
  let env: Record<string, string>;
  let files: string;
  beforeAll(async () => {
    project = await agentProject(server.api, provider.baseUrl);
    env = { SVC_TOKEN: project.token, SVC_ORG: project.orgId, SVC_PROJECT: project.projectId, SVC_CONFIG_DIR: configDir() };
    files = tempDir("svc-cli-files-");
  });

  it("shows a config's problems at their line and column in the file", async () => {
    const file = join(files, "broken.yaml");
    writeFileSync(file, "version: v1\ninstruction: hi\nmodel:\n  provider_config: fake\n  name: 42\n");
    const run = await svc(["configs", "create", "-f", file], { env });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${file.replaceAll("/", "\\/")}:\\d+:\\d+: .+`));
    expect(lines.some((l) => l.startsWith(`${file}:5:`))).toBe(true);
  });

  it("launches from a file, sends, tails the replies, cancels and archives", async () => {
    provider.script({ text: "first answer" }, { text: "second answer" });
    const file = join(files, "agent.yaml");
    writeFileSync(file, yamlConfig(project));
    const launched = json(await svc(["agents", "launch", "-f", file, "-m", "hello", "--json"], { env }));
    const agentId = launched.agent.id as string;
    const first = await svc(["tail", agentId, "--until-idle", "--no-deltas"], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("> hello\n");
    expect(first.stdout).toContain("first answer\n");

    const upTo = (await untilEvents(server.api, project, agentId, () => true)).at(-1).sequence as number;
    expect((await svc(["agents", "send", agentId, "and", "again"], { env })).code).toBe(0);
    const second = await svc(["tail", agentId, "--after", String(upTo), "--until-idle", "--json"], { env });
    const frames = second.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const saved = frames.filter((f) => f.sequence !== undefined);
    expect(saved[0].sequence).toBe(upTo + 1);
    expect(saved.map((f) => f.data.content_blocks?.[0]?.text)).toEqual(expect.arrayContaining(["and again", "second answer"]));

    const listed = json(await svc(["agents", "list", "--json"], { env }));
    expect(listed.map((a: { id: string }) => a.id)).toEqual([agentId]);
    expect(json(await svc(["agents", "get", agentId, "--json"], { env })).agent.state).toBe("active");
    expect((await svc(["agents", "cancel", agentId], { env })).code).toBe(0);
    expect((await svc(["agents", "archive", agentId], { env })).code).toBe(0);
    expect(json(await svc(["agents", "get", agentId, "--json"], { env })).agent.state).toBe("archived");
  });

  it("shows an open question while tailing; svc answer answers it and the turn goes on", async () => {
    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "Blue it is." });
    const file = join(files, "asking.yaml");
    writeFileSync(file, yamlConfig(project, "tools:\n  ask_question: {}\n"));
    const agentId = json(await svc(["agents", "launch", "-f", file, "-m", "ask me", "--json"], { env })).agent.id as string;
    let asked: (text: string) => void = () => {};
    const shown = new Promise<string>((resolve) => (asked = resolve));
    const tail = svc(["tail", agentId, "--until-idle", "--no-deltas"], { env, onStdout: (text) => text.includes("svc answer") && asked(text) });
    const text = await shown;
    const interactionId = /\[(\S+)\]\n/.exec(text.slice(text.indexOf("? ")))?.[1];
    expect(text).toContain("  Which colour?\n    0) red\n    1) blue\n");
    expect((await svc(["answer", agentId, interactionId!, "--option", "1"], { env })).code).toBe(0);
    const tailed = await tail;
    expect(tailed.code, tailed.stderr).toBe(0);
    expect(tailed.stdout).toContain("Blue it is.\n");
    const interactions = await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token });
    expect(interactions.body.data).toMatchObject([{ id: interactionId, state: "resolved", resolution: { answers: [{ option_indices: [1] }] } }]);
  });

  it("approves the agent's only open permission request", async () => {
    const tools = "tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_ask\n    input_schema:\n      type: object\n";
    provider.script({ toolCalls: [{ name: "lookup", input: {} }] });
    const file = join(files, "permission.yaml");
    writeFileSync(file, yamlConfig(project, tools));
    const agentId = json(await svc(["agents", "launch", "-f", file, "-m", "look", "--json"], { env })).agent.id as string;
    const path = `${project.base}/agents/${agentId}/interactions`;
    const open = await eventually(() => server.api.get(path, { token: project.token }), (r) => r.body.data.length === 1);
    const approved = await svc(["approve", agentId], { env });
    expect([approved.code, approved.stdout], approved.stderr).toEqual([0, `Approved ${open.body.data[0].id}.\n`]);
    expect((await server.api.get(path, { token: project.token })).body.data).toMatchObject([{ state: "resolved", resolution: { answers: [{ option_indices: [0] }] } }]);
  });

  it("lists models, keeps a secret read from stdin, pushes a skill and prints the svcd command", async () => {
    const models = json(await svc(["models", "--json"], { env }));
    expect(models.map((m: { model: { name: string } }) => m.model.name)).toEqual(["fast"]);

    const secret = json(await svc(["secrets", "create", "cli-secret", "--json"], { env, input: "s3cret\n" }));
    const secrets = json(await svc(["secrets", "list", "--json"], { env }));
    expect(secrets.map((s: { id: string }) => s.id)).toContain(secret.id);
    expect(JSON.stringify(secrets)).not.toContain("s3cret");

    const skill = join(files, "release-notes");
    mkdirSync(join(skill, "templates"), { recursive: true });
    writeFileSync(join(skill, "SKILL.md"), "---\nname: release-notes\ndescription: Use when writing release notes.\n---\nBe brief.\n");
    writeFileSync(join(skill, "templates", "example.md"), "# Example\n");
    const pushed = json(await svc(["skills", "push", skill, "--json"], { env }));
    expect(pushed.name).toBe("release-notes");
    expect(json(await svc(["skills", "list", "--json"], { env })).map((s: { id: string }) => s.id)).toEqual([pushed.id]);

    const connect = await svc(["machines", "connect", "laptop"], { env });
    expect(connect.code, connect.stderr).toBe(0);
    const command = connect.stdout.split("\n").find((l) => l.includes("install/svcd.sh"))!.trim();
    expect(command).toMatch(new RegExp(`^curl -fsSL ${server.url.replaceAll(".", "\\.")}/install/svcd\\.sh \\| SVC_DAEMON_TOKEN=svc_daemon_v1_\\S+ sh$`));
    const machines = json(await svc(["machines", "list", "--json"], { env }));
    expect(machines.map((m: { display_name: string }) => m.display_name)).toEqual(["laptop"]);
  });

  it("lists a coordinator's delegates with --parent and shows the parent in get", async () => {
    const auth = { token: project.token };
    const helperConfig = (await server.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project), source_format: "yaml" }, auth)).body.id as string;
    expect((await server.api.post(`${project.base}/agent-profiles`, { name: "cli-helper", config: helperConfig }, auth)).status).toBe(201);
    const file = join(files, "coordinator.yaml");
    writeFileSync(file, yamlConfig(project, "delegates:\n  helper:\n    profile: cli-helper\n    description: Answers anything.\n"));
    const message = 'call tool delegate {"to":"helper","message":"hi"}';
    const boss = json(await svc(["agents", "launch", "-f", file, "-m", message, "--name", "boss", "--json"], { env })).agent.id as string;
    const read = async () => json(await svc(["agents", "list", "--parent", "boss", "--json"], { env })) as Array<{ id: string; parent_agent_id: string }>;
    const [child] = await eventually(read, (kids) => kids.length === 1);
    expect(child!.parent_agent_id).toBe(boss);
    const shown = await svc(["agents", "get", child!.id], { env });
    expect(shown.stdout).toMatch(new RegExp(`parent_agent_id\\s+${boss}`));
  });
});

describe("the server's commands", () => {
  it("are forwarded to svc-server, with or without `server`", async () => {
    for (const args of [["server", "help"], ["serve", "--help"], ["server", "migrate", "-h"]]) {
      const run = await svc(args);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("usage: svc <command>");
    }
    const dataDir = tempDir("svc-cli-data-");
    const migrate = await svc(["migrate"], { env: { SVC_DATA_DIR: dataDir, SVC_LOG_FORMAT: "json" } });
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain("migrations applied");
    expect(statSync(join(dataDir, "pgdata")).isDirectory()).toBe(true);
  });
});
