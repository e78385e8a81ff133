import { gzipSync } from "node:zlib";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { agentProject, yamlConfig } from "../../server/test/support/agents.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import Fastify from "fastify";
import type { HttpApp } from "../../server/src/platform/http/app.js";
import { CONSOLE_DIST, consoleRoutes } from "../../server/src/platform/http/console.js";
import { skillMd, skillZip } from "../../server/test/api/skills-fixtures.js";
import { expectText, PASSWORD, replaceConfigText, signIn, useConsole, waitForPath } from "./support.js";

const ui = useConsole();
const provider = useFakeProvider();

it("serves the console at / and its client routes, caches hashed assets for good, and leaves /api/* alone", async () => {
  const { api } = ui.server;
  const page = await api.get("/", { headers: { accept: "text/html" } });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  expect(page.headers.get("cache-control")).toBe("no-cache");
  expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
  expect(script).toBeDefined();
  const asset = await api.get(script!);
  expect(asset.status).toBe(200);
  expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);

  const clientRoute = await api.get("/orgs/org_x/projects/proj_y/agents", { headers: { accept: "text/html" } });
  expect(clientRoute.status).toBe(200);
  // Each load has its own style nonce, in the CSP and in the page's csp-nonce meta; otherwise the same page.
  const nonceOf = (reply: typeof page) => {
    const meta = /<meta property="csp-nonce" nonce="([A-Za-z0-9+/=]+)" \/>/.exec(reply.text)?.[1];
    expect(reply.headers.get("content-security-policy")).toContain(`style-src 'self' 'nonce-${meta}'`);
    return meta!;
  };
  expect(nonceOf(clientRoute)).not.toBe(nonceOf(page));
  expect(clientRoute.text.replace(nonceOf(clientRoute), "")).toBe(page.text.replace(nonceOf(page), ""));
  const apiMiss = await api.get("/api/v1/no-such-route", { headers: { accept: "text/html" } });
  expect(apiMiss.status).toBe(404);
  expect(apiMiss.body.code).toBe("not_found");
  expect((await api.get("/api/nothing", { headers: { accept: "text/html" } })).status).toBe(404);
  expect((await api.get("/assets/..%2Fpackage.json")).status).toBe(404);
  expect((await api.get("/assets/missing-0000.js")).status).toBe(404);

  // The first load's JavaScript (what index.html loads at once; lazy chunks come later), compressed, stays
  // under the issue's 300 KB (docs/console.md); `npm run build -w @svc/web` checks the same and prints it.
  const html = readFileSync(join(CONSOLE_DIST, "index.html"), "utf8");
  const first = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/?([^"]+\.js)"/g)].map((m) => m[1]!);
  expect(first.length).toBeGreaterThan(0);
  expect(readdirSync(join(CONSOLE_DIST, "assets")).filter((name) => name.endsWith(".js")).length).toBeGreaterThanOrEqual(first.length);
  const gzipped = first.reduce((sum, name) => sum + gzipSync(readFileSync(join(CONSOLE_DIST, name))).length, 0);
  expect(gzipped).toBeLessThan(300 * 1024);
});

it("says how to build the console when its build is missing, instead of a bare 404", async () => {
  const app = Fastify();
  // The console's routes alone, over a folder with no build in it.
  consoleRoutes(app as unknown as HttpApp, join(CONSOLE_DIST, "no-such-build"));
  try {
    for (const url of ["/", "/orgs/org_x/projects/proj_y/agents"]) {
      const reply = await app.inject({ method: "GET", url, headers: { accept: "text/html" } });
      expect(reply.statusCode).toBe(503);
      expect(reply.headers["content-type"]).toMatch(/^text\/plain/);
      expect(reply.body).toContain("The svc console is not built.");
      expect(reply.body).toContain("npm run build");
    }
  } finally {
    await app.close();
  }
});

it("signs up, creates an organization, signs out and signs back in", async () => {
  const page = await ui.page();
  const email = `console-${Date.now()}@example.com`;
  await page.goto("/");
  await page.waitForURL(/\/signin/);
  await page.getByRole("link", { name: "Create an account" }).click();
  await page.getByLabel("Name").fill("Ada");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await ui.shot(page, "signup");
  await page.getByRole("button", { name: "Create account" }).click();

  await page.getByLabel("Organization name").fill("Analytical Engines");
  await page.getByRole("button", { name: "Create organization" }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor();
  await expectText(page, "No agents yet.");
  expect(await page.getByLabel("Organization").locator("option:checked").textContent()).toBe("Analytical Engines");
  await ui.shot(page, "agents-empty");

  await page.getByRole("button", { name: "Sign out" }).click();
  await waitForPath(page, /\/signin$/);
  await page.goto("/tokens");
  await page.waitForURL(/\/signin\?next=%2Ftokens/);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("wrong password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").waitFor();
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Personal access tokens" }).waitFor();
  await page.context().close();
});

it("launches from YAML with issues at their line, follows the live timeline, works the backlog, answers an approval and a custom tool call, and archives", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  provider.script(
    { toolCalls: [{ name: "lookup_invoice", input: { number: "INV-7" } }] },
    { text: "Invoice INV-7 is paid." },
  );
  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/launch`);
  // Line 4 names a model provider that does not exist.
  const broken = `version: v1\ninstruction: hi\nmodel:\n  provider_config: nope\n  name: fast\n`;
  await replaceConfigText(page, broken);
  await page.getByRole("button", { name: "Launch" }).click();
  const issues = page.getByRole("list", { name: "Problems in the config" });
  await issues.waitFor();
  expect(await issues.textContent()).toMatch(/^Line 4, column 20: the organization has no model provider config named "nope"/);
  expect(await page.locator(".cm-lineNumbers .cm-gutterElement.marked").allTextContents()).toEqual(["4"]);
  await ui.shot(page, "launch-issues");

  const tools = `tools:\n  lookup_invoice:\n    type: custom\n    description: Find an invoice.\n    input_schema:\n      type: object\n      properties:\n        number: {type: string}\n      required: [number]\n    permission:\n      mode: always_ask\n`;
  await replaceConfigText(page, yamlConfig(project, tools));
  await page.getByLabel("Name (optional)").fill("billing");
  await page.getByLabel("Opening message (optional)").fill("Is INV-7 paid?");
  await page.getByRole("button", { name: "Launch" }).click();
  await page.getByRole("heading", { name: "billing" }).waitFor();
  await expectText(page, "Is INV-7 paid?");

  // The permission question, answered from the page.
  const approval = page.getByRole("form", { name: /lookup_invoice/ });
  await approval.waitFor();
  await ui.shot(page, "agent-approval");

  // While the turn waits, queued messages wait in the backlog: reorder, promote, demote and cancel them.
  for (const text of ["first follow-up", "second follow-up"]) {
    await page.getByLabel("Message").fill(text);
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await page.getByRole("button", { name: `Cancel: ${text}` }).waitFor();
  }
  const backlog = page.getByRole("list", { name: "Backlog" });
  await page.getByRole("button", { name: "Move down: first follow-up" }).click();
  await expect.poll(async () => (await backlog.locator(".clip").allTextContents()).join(" | ")).toBe("second follow-up | first follow-up");
  await page.getByRole("button", { name: "Promote: first follow-up" }).click();
  await expect.poll(async () => (await backlog.locator("li").first().textContent()) ?? "").toContain("steering first follow-up");
  await page.getByRole("button", { name: "Demote: first follow-up" }).click();
  await expect.poll(async () => (await backlog.locator(".badge").allTextContents()).join(" ")).toBe("queued queued");
  await ui.shot(page, "agent-backlog");
  for (const text of ["first follow-up", "second follow-up"]) await page.getByRole("button", { name: `Cancel: ${text}` }).click();
  await backlog.getByRole("listitem").first().waitFor({ state: "detached" });
  const left = await ui.api.get(`${project.base}/agents/${await agentIdOf(page)}/inputs/backlog`, { token: project.token });
  expect(left.body.data).toEqual([]);

  await approval.getByLabel("Allow").check();
  await approval.getByRole("button", { name: "Answer" }).click();

  // The approved custom call is now the caller's to run: its result is sent from the page.
  const result = page.getByRole("form", { name: "Result for lookup_invoice" });
  await result.waitFor();
  await result.getByLabel("Result").fill("paid on 3 March");
  await result.getByRole("button", { name: "Send result" }).click();
  await expectText(page, "Invoice INV-7 is paid.");
  await expectText(page, "paid on 3 March");
  await ui.shot(page, "agent-timeline");
  expect(await page.getByRole("list", { name: "Timeline" }).locator("li.event.model_output").count()).toBe(2);

  // At phone width the page still works: the agents list, then the agent itself.
  const phone = await ui.page(390);
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  await phone.getByRole("link", { name: "billing" }).click();
  await expectText(phone, "Invoice INV-7 is paid.");
  const overflow = await phone.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
  expect(overflow).toBe(0);
  await ui.shot(phone, "agent-phone");
  await phone.context().close();

  await page.getByRole("button", { name: "Archive" }).click();
  await page.locator(".badge.state-archived").waitFor();
  const archived = await ui.api.get(`${project.base}/agents/${await agentIdOf(page)}`, { token: project.token });
  expect(archived.body.agent.state).toBe("archived");
  await page.context().close();
});

it("approves a device login after signing in (explaining a wrong address), and the device's next poll gets its token", async () => {
  const session = await ui.api.signup({ password: PASSWORD });
  const started = await ui.api.post("/api/auth/device/code", { client_name: "acme-cli", token_name: "laptop" });
  const flow = started.body as { device_code: string; verification_uri_complete: string };
  expect(flow.verification_uri_complete.startsWith(`${ui.url}/device?user_code=`)).toBe(true);
  // Opened at another address than svc's public URL: the refusal says which address to use.
  const elsewhere = await ui.page();
  await elsewhere.goto(flow.verification_uri_complete.replace(ui.url, ui.server.url));
  await elsewhere.getByLabel("Email").fill(session.email);
  await elsewhere.getByLabel("Password").fill(PASSWORD);
  // Signing in from there is refused already (a session is only started from the public address).
  await elsewhere.getByRole("button", { name: "Sign in" }).click();
  await elsewhere.getByRole("alert").waitFor();
  const refusal = await elsewhere.getByRole("alert").textContent();
  expect(refusal).toBe(`This page was opened at ${ui.server.url}, but svc accepts changes only from its public address: open ${new URL(flow.verification_uri_complete).href} instead.`);
  await ui.shot(elsewhere, "device-wrong-origin");
  await elsewhere.context().close();

  const page = await ui.page();
  await page.goto(flow.verification_uri_complete);
  await expectText(page, "Sign in to approve this device.");
  await page.getByLabel("Email").fill(session.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expectText(page, "acme-cli");
  await ui.shot(page, "device-confirm");
  await page.getByRole("button", { name: "Approve" }).click();
  await expectText(page, "Device approved.");
  const poll = await ui.api.post("/api/auth/device/token", { device_code: flow.device_code });
  expect(poll.status).toBe(200);
  expect(poll.body.access_token).toMatch(/^svc_pat_v1_/);
  await page.context().close();
});

it("connects and grants a machine, uploads and grants a skill, adds and grants a secret, grants a model, invites a member and makes a token", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const second = await ui.api.post(`/api/v1/orgs/${project.orgId}/projects`, { name: "Second" }, { token: project.token });
  expect(second.status).toBe(201);
  const page = await ui.page();
  await signIn(page, project.session.email);
  const nav = page.getByRole("navigation", { name: "Sections" });

  await nav.getByRole("link", { name: "Machines" }).click();
  await page.getByLabel("Machine name").fill("build-box");
  // Connected without a grant: the one made next is its first.
  await page.getByLabel("For project").selectOption({ label: "No project yet" });
  await page.getByRole("button", { name: "Connect" }).click();
  await expectText(page, `curl -fsSL ${ui.url}/install/svcd.sh | SVC_DAEMON_TOKEN=`);
  expect(await page.getByRole("table", { name: "Machines" }).textContent()).toContain("offline");
  await page.getByLabel("To project").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  await expectText(page, "build-box is granted to Second.");
  const machineGrants = await ui.api.get(`/api/v1/orgs/${project.orgId}/projects/${second.body.id}/machine-grants`, { token: project.token });
  expect(machineGrants.body.data).toHaveLength(1);
  await ui.shot(page, "machines");

  await nav.getByRole("link", { name: "Skills" }).click();
  await page.getByLabel("Archive (.zip or .tar.gz with SKILL.md)").setInputFiles({ name: "notes.zip", mimeType: "application/zip", buffer: skillZip("release-notes") });
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expectText(page, "revision 1");
  await page.getByLabel("New revision of release-notes").setInputFiles({ name: "notes.zip", mimeType: "application/zip", buffer: skillZip("release-notes", skillMd("release-notes", "Use when writing notes, v2.")) });
  await page.getByRole("button", { name: "Upload revision" }).click();
  await expectText(page, "revision 2");
  await page.getByLabel("Grant release-notes to").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  await page.getByRole("list", { name: "Projects release-notes is granted to" }).getByText("Second").waitFor();
  await ui.shot(page, "skills");

  await nav.getByRole("link", { name: "Secrets" }).click();
  await page.getByLabel("Name").fill("deploy key");
  await page.getByLabel("Value").fill("s3cr3t");
  await page.getByRole("button", { name: "Add secret" }).click();
  await expectText(page, "deploy key");
  expect(await page.content()).not.toContain("s3cr3t");
  await page.getByLabel("Secret", { exact: true }).selectOption({ label: "deploy key" });
  await page.getByLabel("To project").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  await expectText(page, "deploy key is granted to Second.");
  const secrets = await ui.api.get(`/api/v1/orgs/${project.orgId}/secrets?limit=100`, { token: project.token });
  const deployKey = (secrets.body.data as Array<{ id: string; name: string }>).find((x) => x.name === "deploy key")!;
  const secretGrants = await ui.api.get(`/api/v1/orgs/${project.orgId}/secrets/${deployKey.id}/grants`, { token: project.token });
  expect(secretGrants.body.data).toHaveLength(1);

  await nav.getByRole("link", { name: "Models" }).click();
  await page.getByLabel("Project to grant models to").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant fast to the project" }).click();
  await page.getByRole("table", { name: "Models of fake" }).getByText("granted").waitFor();
  const grants = await ui.api.get(`/api/v1/orgs/${project.orgId}/projects/${second.body.id}/model-grants`, { token: project.token });
  expect(grants.body.data).toHaveLength(1);
  await ui.shot(page, "models");

  await nav.getByRole("link", { name: "Members" }).click();
  await page.getByLabel("Email").fill("grace@example.com");
  await page.getByRole("button", { name: "Invite" }).click();
  await page.getByRole("table", { name: "Invitations" }).getByText("grace@example.com").waitFor();
  await ui.shot(page, "members");

  await nav.getByRole("link", { name: "Tokens" }).click();
  await page.getByLabel("Token name").fill("ci");
  await page.getByRole("button", { name: "Create token" }).click();
  await expectText(page, "svc_pat_v1_");
  await page.getByRole("button", { name: "Revoke ci" }).click();
  await page.getByRole("table", { name: "Personal access tokens" }).getByText(/revoked/).waitFor();
  await ui.shot(page, "tokens");
  await page.context().close();
});

async function agentIdOf(page: import("playwright-core").Page): Promise<string> {
  return new URL(page.url()).pathname.split("/").pop()!;
}
