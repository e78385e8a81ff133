import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../../server/test/support/server.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { json, useCli, type Run } from "./support.js";

/*
 * What the server sends is not trusted by the terminal it is printed on, the credentials file is not
 * written where someone else chose, an answer that is not svc's is one sentence, and things are named as
 * the console names them.
 */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();
const { svc, tempDir, configDir } = useCli(server);

const ESC = "\u001b";
const BEL = "\u0007";
/** A link that shows one address and opens another, a window title, a cleared screen, a clipboard write, and C1's CSI. */
const HOSTILE = `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\ ${ESC}]0;pwned${BEL} ${ESC}[2J ${ESC}]52;c;ZWNobyBwd25lZA==${BEL} \u009b31m`;
/** An agent's name is at most 64 characters: a title change and a clear. */
const HOSTILE_NAME = `bot ${ESC}]0;pwned${BEL} ${ESC}[2J`;
/** How the CLI shows it: every control character written out. */
const SHOWN = ["\\x1b]8;;https://evil.example\\x1b\\click", "\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x1b]52;c;ZWNobyBwd25lZA==\\x07", "\\x9b31m"];
/** A control character a terminal would obey; newline and tab are the CLI's own layout. */
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const ok = (run: Run) => {
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
};

function expectShown(text: string): void {
  expect(text).not.toMatch(OBEYED);
  for (const shown of SHOWN) expect(text).toContain(shown);
}

describe("text from the server", () => {
  let project: AgentProject;
  let env: Record<string, string>;
  let config: string;
  beforeAll(async () => {
    project = await agentProject(server.api, provider.baseUrl);
    env = { SVC_TOKEN: project.token, SVC_ORG: project.orgId, SVC_PROJECT: project.projectId };
    config = join(tempDir("svc-cli-safety-"), "agent.yaml");
    writeFileSync(config, yamlConfig(project));
  });

  it("reaches the terminal with its control characters shown, in names, inputs, model output and JSON", async () => {
    provider.script({ text: `line one\nanswer ${HOSTILE}` }, { text: `again ${HOSTILE}` });
    const launched = json(await svc(["agents", "launch", "-f", config, "--name", HOSTILE_NAME, "-m", `hello ${HOSTILE}`, "--json"], { env }));
    const agentId = launched.agent.id as string;

    const previews = ok(await svc(["tail", agentId, "--until-idle"], { env }));
    expectShown(previews);
    expect(previews).toContain("line one\nanswer ");
    const whole = ok(await svc(["tail", agentId, "--until-idle", "--no-deltas"], { env }));
    expectShown(whole.slice(whole.indexOf("answer")));
    expectShown(whole.slice(0, whole.indexOf("answer")));

    const listed = ok(await svc(["agents", "list"], { env }));
    expect(listed).not.toMatch(OBEYED);
    expect(listed).toContain("bot \\x1b]0;pwned\\x07 \\x1b[2J");

    const listedJson = (await svc(["agents", "list", "--json"], { env })).stdout;
    expect(listedJson).not.toMatch(OBEYED);
    expect(JSON.parse(listedJson)[0].name).toBe(HOSTILE_NAME);
    const frames = ok(await svc(["tail", agentId, "--until-idle", "--json"], { env }));
    expect(frames).not.toMatch(OBEYED);
    const texts = frames.trim().split("\n").map((line) => JSON.parse(line)).map((f) => f.data?.content_blocks?.[0]?.text);
    expect(texts).toEqual(expect.arrayContaining([`hello ${HOSTILE}`, `line one\nanswer ${HOSTILE}`]));
  });

  it("shows the error block of a failed model call, its text made safe too", async () => {
    provider.script({ error: { status: 400, message: `the model refused ${HOSTILE}` } });
    const launched = json(await svc(["agents", "launch", "-f", config, "-m", "fail", "--json"], { env }));
    const tailed = ok(await svc(["tail", launched.agent.id, "--until-idle", "--no-deltas"], { env }));
    const line = tailed.split("\n").find((l) => l.startsWith("! model error: "));
    expect(line, tailed).toContain("the model refused");
    expectShown(line!);
  });
});

describe("the credentials file", () => {
  it("is not read or written through a link planted at its path", async () => {
    const { token, org } = await server.api.userWithOrg("Linked");
    const dir = configDir();
    const target = join(tempDir("svc-cli-elsewhere-"), "planted.json");
    const planted = `${JSON.stringify({ url: server.url, token })}\n`;
    writeFileSync(target, planted);
    symlinkSync(target, join(dir, "credentials.json"));

    const read = await svc(["whoami"], { env: { SVC_CONFIG_DIR: dir } });
    expect(read.code).toBe(1);
    expect(read.stderr).toContain(`${join(dir, "credentials.json")} is a symbolic link, which svc does not follow`);
    const written = await svc(["orgs", "use", org.id], { env: { SVC_CONFIG_DIR: dir, SVC_TOKEN: token } });
    expect(written.code).toBe(1);
    expect(readFileSync(target, "utf8")).toBe(planted);
    expect(lstatSync(join(dir, "credentials.json")).isSymbolicLink()).toBe(true);
  });

  it("is kept only in a folder other users may not write", async () => {
    const { token, org } = await server.api.userWithOrg("Shared");
    const dir = join(configDir(), "svc");
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770);
    const refused = await svc(["orgs", "use", org.id], { env: { SVC_CONFIG_DIR: dir, SVC_TOKEN: token } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`svc: ${dir} may be written by other users (mode 770): run \`chmod 700 ${dir}\`, then try again\n`);
    expect(existsSync(join(dir, "credentials.json"))).toBe(false);

    chmodSync(dir, 0o700);
    // An older file with wider bits is replaced by a new one of mode 0600.
    writeFileSync(join(dir, "credentials.json"), "{}\n", { mode: 0o644 });
    chmodSync(join(dir, "credentials.json"), 0o644);
    ok(await svc(["orgs", "use", org.id], { env: { SVC_CONFIG_DIR: dir, SVC_TOKEN: token } }));
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8"))).toEqual({ url: server.url, org: org.id });
  });
});

describe("an answer svc's API does not give", () => {
  let other: Server;
  let base: string;
  beforeAll(async () => {
    // Another server on loopback: a wrong address, an old or new svc, a proxy's page.
    other = createServer((request, response) => {
      const url = request.url ?? "";
      if (url.startsWith("/shape/")) return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ user: { id: "usr_x" } }));
      if (url.startsWith("/teapot/")) return response.writeHead(418, { "content-type": "text/plain" }).end("I'm a teapot");
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: `bad ${HOSTILE}`, code: "invalid_request" }));
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())));

  const hint = "is --url (or SVC_URL) the address of svc, in a version this CLI knows?";

  it("is one sentence naming the method, the route and the status", async () => {
    const shape = await svc(["whoami", "--url", `${base}/shape`, "--token", "t"]);
    expect(shape.code).toBe(1);
    expect(shape.stderr).toBe(`svc: GET /api/v1/me answered HTTP 200 with a body the contract does not describe (/ must have required property 'orgs'): ${hint}\n`);

    const teapot = await svc(["projects", "list", "--url", `${base}/teapot`, "--token", "t", "--org", "org_x"]);
    expect(teapot.code).toBe(1);
    expect(teapot.stderr).toBe(`svc: GET /api/v1/orgs/{orgID}/projects answered HTTP 418 with a body that is not JSON: ${hint}\n`);
  });

  it("still shows svc's own error envelope, its message made safe", async () => {
    const envelope = await svc(["whoami", "--url", base, "--token", "t"]);
    expect(envelope.code).toBe(1);
    expect(envelope.stderr.startsWith("svc: bad ")).toBe(true);
    expect(envelope.stderr.endsWith(" (invalid_request, HTTP 400)\n")).toBe(true);
    expectShown(envelope.stderr);
  });
});

describe("names", () => {
  let project: AgentProject;
  let env: Record<string, string>;
  let config: string;
  beforeAll(async () => {
    project = await agentProject(server.api, provider.baseUrl);
    env = { SVC_TOKEN: project.token, SVC_ORG: project.orgId, SVC_PROJECT: project.projectId };
    config = join(tempDir("svc-cli-names-"), "agent.yaml");
    writeFileSync(config, yamlConfig(project));
  });

  const launch = async (name: string) => json(await svc(["agents", "launch", "-f", config, "--name", name, "--json"], { env })).agent.id as string;

  it("find an agent by its name, the name's wildcards matching only themselves; none or several are a usage error", async () => {
    const exact = await launch("night?build");
    await launch("nightXbuild");
    await launch("twin");
    await launch("twin");
    expect(json(await svc(["agents", "get", "night?build", "--json"], { env })).agent.id).toBe(exact);
    expect(json(await svc(["agents", "get", "NIGHT?BUILD", "--json"], { env })).agent.id).toBe(exact);
    expect(json(await svc(["agents", "get", exact, "--json"], { env })).agent.id).toBe(exact);

    const none = await svc(["agents", "send", "nobody", "hi"], { env });
    expect([none.code, none.stderr]).toEqual([2, "svc: no agent of the project is named nobody (`svc agents list` lists them)\n"]);
    const several = await svc(["tail", "twin"], { env });
    expect([several.code, several.stderr]).toEqual([2, "svc: several agents of the project are named twin: give the id (agt_…) of one (`svc agents list` lists them)\n"]);
  });

  it("find secrets, skills and machines by their names", async () => {
    const secret = json(await svc(["secrets", "create", "deploy-key", "--json"], { env, input: "value\n" }));
    expect(json(await svc(["secrets", "get", "deploy-key", "--json"], { env })).id).toBe(secret.id);
    ok(await svc(["secrets", "delete", "deploy-key"], { env }));
    expect(json(await svc(["secrets", "list", "--json"], { env })).map((s: { id: string }) => s.id)).not.toContain(secret.id);

    const skill = join(tempDir("svc-cli-skill-"), "notes");
    mkdirSync(skill);
    writeFileSync(join(skill, "SKILL.md"), "---\nname: notes\ndescription: Use when taking notes.\n---\nBe brief.\n");
    ok(await svc(["skills", "push", skill, "--owner", "user"], { env }));
    ok(await svc(["skills", "grant", "notes"], { env }));
    expect(json(await svc(["skills", "grants", "notes", "--json"], { env })).map((g: { target_project: { id: string } }) => g.target_project.id)).toEqual([project.projectId]);

    const connected = await server.api.post(`/api/v1/orgs/${project.orgId}/machines/connect`, { display_name: "build box", cwd: "/tmp", project_ids: [project.projectId] }, { token: project.token });
    expect(connected.status, connected.text).toBe(201);
    expect(ok(await svc(["machines", "revoke", "build box"], { env }))).toBe(`Revoked build box from ${project.projectId}.\n`);
    ok(await svc(["machines", "grant", "Build Box"], { env }));
    ok(await svc(["machines", "delete", "build box"], { env }));
    expect(json(await svc(["machines", "list", "--json"], { env }))).toEqual([]);
  });
});
