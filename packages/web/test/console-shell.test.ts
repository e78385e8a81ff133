import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { eventually } from "../../server/test/support/agent-loop.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { expectText, PASSWORD, replaceConfigText, sidewaysOverflow, signIn, useConsole } from "./support.js";

/*
 * The console's frame and its pages as a new user meets them (issue 33): the sidebar, breadcrumbs and
 * command palette, what each agent is doing (activity badges, `retrying` from a provider that refuses
 * connections), the agents table's filters, pending invitations, every kind of secret, keyboard-only
 * launch, the public-address notice, and an axe-core audit of every page in both themes with screenshots.
 */

const ui = useConsole();
const provider = useFakeProvider();
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** A loopback port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function launchAgent(project: AgentProject, name: string, source: string, message?: string): Promise<string> {
  const config = await ui.api.post(`${project.base}/agent-configs`, { source, source_format: "yaml" }, { token: project.token });
  expect([200, 201], config.text).toContain(config.status);
  const made = await ui.api.post(`${project.base}/agents`, { config: config.body.id, name, ...(message ? { message } : {}) }, { token: project.token });
  expect(made.status, made.text).toBe(201);
  return made.body.agent.id as string;
}

/** A second model provider in the project's org whose address refuses connections, granted to the project. */
async function refusingModel(project: AgentProject): Promise<string> {
  const auth = { token: project.token };
  const secrets = await ui.api.get(`/api/v1/orgs/${project.orgId}/secrets`, auth);
  const down = await ui.api.post(
    `/api/v1/orgs/${project.orgId}/model-provider-configs`,
    { name: "down", api_format: "openai-chat-completions", base_url: `http://127.0.0.1:${await closedPort()}/v1`, credential_secret_id: secrets.body.data[0].id },
    auth,
  );
  expect(down.status, down.text).toBe(201);
  const model = await ui.api.post(
    `/api/v1/orgs/${project.orgId}/model-provider-configs/${down.body.config.id}/models`,
    { name: "unreachable", provider_model_slug: "fake-model", context_window_tokens: 128_000, max_output_tokens: 4096 },
    auth,
  );
  expect(model.status, model.text).toBe(201);
  const grant = await ui.api.post(`${project.base}/model-grants`, { configured_model_id: model.body.id }, auth);
  expect(grant.status, grant.text).toBe(201);
  return `version: v1\ninstruction: "Say hello."\nmodel:\n  provider_config: down\n  name: unreachable\n`;
}

async function audit(page: Page, label: string): Promise<void> {
  // The page's CSP allows no inline script, so axe is evaluated through the DevTools protocol instead
  // of an added script tag.
  await page.evaluate(readFileSync(AXE, "utf8"));
  // A string, as the other console tests evaluate: the tests are typed without the DOM's types.
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ["violations"] }).then((result) =>
    result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.map((n) => n.target.join(" ")).join(", ")))`);
  expect(violations, label).toEqual([]);
}

it("follows the project's activity: a row and the header change as the agent does, without reading the list again", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const steady = await launchAgent(project, "steady", yamlConfig(project, "tools:\n  ask_question: {}\n"));
  await eventually(
    async () => (await ui.api.get(`${project.base}/agents/${steady}`, { token: project.token })).body.agent.activity.status,
    (status) => status === "idle",
  );
  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  const row = page.getByRole("table", { name: "Agents" }).getByRole("row").filter({ has: page.getByRole("link", { name: "steady", exact: true }) });
  await row.getByText("idle").waitFor();
  await page.getByText("live", { exact: true }).waitFor();
  // From here the table's own list is not read again: an idle list without the stream would be read every 15 s.
  const tableReads: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (request.method() === "GET" && url.pathname.endsWith(`/projects/${project.projectId}/agents`) && !url.searchParams.has("activity")) tableReads.push(url.search);
  });
  provider.script({ toolCalls: [{ name: "ask_question", input: { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] } }] });
  const sent = await ui.api.post(`${project.base}/agents/${steady}/inputs`, { content_blocks: [{ type: "text", text: "ask me" }] }, { token: project.token });
  expect(sent.status, sent.text).toBe(201);
  await row.getByText("waiting").waitFor();
  expect(await row.textContent()).toContain("an answer (ask_question)");
  await page.getByRole("button", { name: "1 waiting for you" }).waitFor();
  expect(tableReads).toEqual([]);

  // A newly launched agent joins the table: its first page is read again for it.
  await launchAgent(project, "newcomer", yamlConfig(project));
  await page.getByRole("table", { name: "Agents" }).getByRole("link", { name: "newcomer", exact: true }).waitFor();
  expect(tableReads.length).toBeGreaterThan(0);
  await page.context().close();
});

it("shows what each agent does (waiting, retrying with the provider's refusal, idle), filters by activity and archived, searches by name, and counts what waits", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const question = { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] };
  provider.script({ toolCalls: [{ name: "ask_question", input: question }] });
  const asking = await launchAgent(project, "asker", yamlConfig(project, "tools:\n  ask_question: {}\n"), "ask me");
  await launchAgent(project, "quiet", yamlConfig(project));
  await launchAgent(project, "unlucky", await refusingModel(project), "hello");
  const archivedId = await launchAgent(project, "retired", yamlConfig(project));
  expect((await ui.api.post(`${project.base}/agents/${archivedId}/archive`, undefined, { token: project.token })).status).toBe(200);
  await eventually(
    async () => (await ui.api.get(`${project.base}/agents/${asking}`, { token: project.token })).body.agent.activity.status,
    (status) => status === "waiting",
  );

  const page = await ui.page();
  await signIn(page, project.session.email);
  const list = `/orgs/${project.orgId}/projects/${project.projectId}/agents`;
  await page.goto(list);
  const table = page.getByRole("table", { name: "Agents" });
  const row = (name: string) => table.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
  await row("asker").getByText("waiting").waitFor();
  expect(await row("asker").textContent()).toContain("an answer (ask_question)");
  await row("quiet").getByText("idle").waitFor();
  // The refused connection shows as a retry at once, worded as svc words it, with the attempt.
  await row("unlucky").getByText(/^retrying \(attempt \d of 8\)$/).waitFor({ timeout: 60_000 });
  expect(await row("unlucky").textContent()).toMatch(/attempt \d of 8; svc tries again in/);
  expect(await table.getByRole("link", { name: "retired" }).count()).toBe(0);
  // The exact time is on hover.
  expect(await row("quiet").locator("time").getAttribute("title")).toBeTruthy();
  await ui.shot(page, "agents-table-light-1280");

  // The header counts what waits for the signed-in person, each linked.
  const bell = page.getByRole("button", { name: "1 waiting for you" });
  await bell.click();
  await page.getByRole("list", { name: "Waiting for you" }).getByRole("link", { name: "asker" }).click();
  await page.waitForURL(new RegExp(`/agents/${asking}$`));

  // Filters are search parameters: shareable, and back/forward work.
  await page.goto(list);
  await page.getByLabel("Activity").selectOption("waiting");
  await page.waitForURL(/activity=waiting/);
  await expect.poll(async () => (await table.getByRole("link").allTextContents()).join(",")).toBe("asker");
  await page.getByLabel("Activity").selectOption("");
  await page.getByLabel("Search by name").fill("QUI");
  await page.getByLabel("Search by name").press("Enter");
  await page.waitForURL(/q=QUI/);
  await expect.poll(async () => (await table.getByRole("link").allTextContents()).join(",")).toBe("quiet");
  await page.getByLabel("Search by name").fill("");
  await page.getByLabel("Search by name").press("Enter");
  await page.getByLabel("Archived").check();
  await expect.poll(async () => (await table.getByRole("link").allTextContents()).join(",")).toBe("retired");
  expect(await row("retired").textContent()).toContain("archived");
  // The activity filter says why it is off for archived agents.
  expect(await page.getByLabel("Activity").isDisabled()).toBe(true);
  expect(await page.getByLabel("Activity").getAttribute("aria-describedby")).toBe("agents-activity-why");

  // At phone width the table folds into cards and the page does not scroll sideways.
  const phone = await ui.page(390);
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(list);
  await phone.getByRole("link", { name: "unlucky" }).waitFor();
  expect(await sidewaysOverflow(phone)).toBe(0);
  await ui.shot(phone, "agents-table-light-390");
  await phone.context().close();
  await page.context().close();
});

it("groups the pages in a sidebar with breadcrumbs, opens pages, agents and actions from the palette (Ctrl-K), and folds the sidebar into a menu on a phone", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const agentId = await launchAgent(project, "navigator", yamlConfig(project));
  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  const sections = page.getByRole("navigation", { name: "Sections" });
  await sections.getByRole("link", { name: "Schedules" }).waitFor();
  for (const [group, pages] of Object.entries({
    Agents: ["Agents", "Launch"],
    Build: ["Profiles", "Configs", "Memory", "Skills"],
    Connect: ["Machines", "Pools", "Integrations", "Schedules"],
    Administer: ["Models", "Secrets", "Members", "Usage", "Budgets", "Webhooks", "Tokens"],
  })) {
    expect(await sections.getByRole("list", { name: group }).getByRole("link").allTextContents()).toEqual(pages);
  }
  const crumbs = page.getByRole("navigation", { name: "Breadcrumbs" });
  const crumbLinks = await crumbs.getByRole("link").allTextContents();
  expect(crumbLinks).toHaveLength(2);
  expect(crumbLinks[0]).toBe("Acme");
  expect(await crumbs.textContent()).toContain("Agents");
  await sections.getByRole("link", { name: "Secrets" }).click();
  await page.getByRole("heading", { name: "Secrets" }).waitFor();
  expect(await sections.getByRole("link", { name: "Secrets" }).getAttribute("aria-current")).toBe("page");

  // The palette by keyboard alone: a page, then an agent by name, then an action.
  await page.keyboard.press("Control+k");
  const palette = page.getByRole("dialog");
  await palette.getByRole("combobox", { name: "Search pages, agents and actions" }).waitFor();
  await page.keyboard.type("machines");
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Machines" }).waitFor();
  await page.keyboard.press("Control+k");
  await page.keyboard.type("navig");
  await palette.getByRole("option", { name: /navigator/ }).waitFor();
  await ui.shot(page, "palette-light-1280");
  await page.keyboard.press("Enter");
  await page.waitForURL(new RegExp(`/agents/${agentId}$`));
  await page.keyboard.press("Control+k");
  await page.keyboard.type("dark theme");
  await page.keyboard.press("Enter");
  expect(await page.evaluate<string | undefined>("document.documentElement.dataset.theme")).toBe("dark");
  await page.getByRole("button", { name: "Theme: dark" }).click();
  await page.getByRole("menuitemradio", { name: "System" }).click();
  expect(await page.evaluate<string>('document.documentElement.dataset.theme ?? "system"')).toBe("system");

  // A phone: the sidebar is behind the Menu button, and nothing scrolls sideways.
  const phone = await ui.page(390);
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  const menu = phone.getByRole("button", { name: "Menu" });
  await menu.waitFor();
  expect(await phone.getByRole("navigation", { name: "Sections" }).isVisible()).toBe(false);
  await menu.click();
  await phone.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Models" }).click();
  await phone.getByRole("heading", { name: "Models" }).waitFor();
  expect(await sidewaysOverflow(phone)).toBe(0);
  await phone.context().close();
  await page.context().close();
});

it("shows pending invitations to a signed-in person, who accepts one and declines another", async () => {
  const first = await ui.api.userWithOrg("Lovelace Labs");
  const second = await ui.api.userWithOrg("Babbage Works");
  const invitee = `invitee-${Date.now()}@example.com`;
  for (const owner of [first, second]) {
    const sent = await ui.api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee, role: "member" }, { token: owner.token });
    expect(sent.status, sent.text).toBe(201);
  }
  const page = await ui.page(390);
  await page.goto("/signup");
  await page.getByLabel("Name").fill("Ida");
  await page.getByLabel("Email").fill(invitee);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  const pending = page.getByRole("list", { name: "Pending invitations" });
  await pending.waitFor();
  expect(await sidewaysOverflow(page)).toBe(0);
  await ui.shot(page, "invitations-light-390");
  await page.getByRole("button", { name: "Decline the invitation to Babbage Works" }).click();
  await expect.poll(async () => (await pending.getByRole("listitem").count())).toBe(1);
  await page.getByRole("button", { name: "Accept the invitation to Lovelace Labs" }).click();
  // Accepted: the console opens the organization, and the person is a member of it.
  await page.waitForURL(new RegExp(`/orgs/${first.org.id}`));
  const me = await ui.api.get("/api/v1/invitations", { session: await ui.api.login(invitee, PASSWORD) });
  expect(me.body.data).toEqual([]);
  const members = await ui.api.get(`/api/v1/orgs/${first.org.id}/members`, { token: first.token });
  expect(members.body.data.map((m: { email: string }) => m.email)).toContain(invitee);
  await page.context().close();
});

it("creates every kind of secret integrations and pools need, and a disabled button says why", async () => {
  const { session, org, token } = await ui.api.userWithOrg("Secretive");
  const page = await ui.page();
  await signIn(page, session.email);
  await page.goto(`/orgs/${org.id}/models`);
  // No secret yet: Add provider is disabled, and says why.
  const add = page.getByRole("button", { name: "Add provider" });
  await add.waitFor();
  expect(await add.isDisabled()).toBe(true);
  const why = await add.getAttribute("aria-describedby");
  expect(await page.locator(`#${why}`).textContent()).toContain("Secrets page");

  await page.goto(`/orgs/${org.id}/secrets`);
  const form = page.getByRole("form", { name: "Add an organization secret" });
  const kinds: Array<[string, string, Record<string, string>]> = [
    ["slack_app_credentials", "slack app", { "Bot token (xoxb-…)": "xoxb-1", "Client ID": "1.2", "Client secret": "cs", "Signing secret": "ss" }],
    ["github_app_credentials", "github app", { "App ID": "12345", "Private key (PEM)": "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----" }],
    ["aws_credentials", "aws", { "Access key ID": "AKIA1", "Secret access key": "sak" }],
    ["oauth_token_set", "oauth", { "Access token": "at-1" }],
    ["generic", "plain", { Value: "v" }],
  ];
  for (const [kind, name, fields] of kinds) {
    await form.getByLabel("Kind").selectOption(kind);
    await form.getByLabel("Name", { exact: true }).fill(name);
    for (const [label, value] of Object.entries(fields)) await form.getByLabel(label, { exact: true }).fill(value);
    await form.getByRole("button", { name: "Add secret" }).click();
    await page.getByRole("table", { name: "Secrets" }).getByRole("cell", { name, exact: true }).waitFor();
  }
  await ui.shot(page, "secrets-light-1280");
  const listed = await ui.api.get(`/api/v1/orgs/${org.id}/secrets`, { token });
  expect(Object.fromEntries(listed.body.data.map((s: { name: string; kind: string }) => [s.name, s.kind]))).toEqual(Object.fromEntries(kinds.map(([kind, name]) => [name, kind])));

  // Deleting asks in a dialog that names what goes.
  await page.getByRole("button", { name: "Delete plain", exact: true }).click();
  const dialog = page.getByRole("alertdialog");
  expect(await dialog.textContent()).toContain("Delete secret plain?");
  await dialog.getByRole("button", { name: "Yes, delete" }).click();
  await page.getByRole("table", { name: "Secrets" }).getByRole("cell", { name: "plain", exact: true }).waitFor({ state: "detached" });
  await page.context().close();
});

it("launches an agent with the keyboard alone", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  provider.script({ text: "Typed and launched." });
  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  await page.getByRole("heading", { name: "Agents", exact: true }).waitFor();
  await page.keyboard.press("Control+k");
  await page.keyboard.type("launch an agent");
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: /Launch/ }).waitFor();
  // Tab from the page's start to each field in turn; everything is typed.
  const focused = () => page.evaluate<string>('document.activeElement?.id ?? ""');
  const tabTo = async (id: string) => {
    for (let i = 0; i < 80 && (await focused()) !== id; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe(id);
  };
  await page.getByLabel("Config (YAML)").waitFor();
  await expect.poll(async () => page.getByLabel("Config (YAML)").isEnabled()).toBe(true);
  await tabTo("agent-name");
  await page.keyboard.type("by-keys");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(yamlConfig(project));
  await tabTo("agent-message");
  await page.keyboard.type("Hello from the keyboard");
  await page.keyboard.press("Tab");
  expect(await page.evaluate<string | undefined>("document.activeElement?.textContent?.trim()")).toBe("Launch");
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "by-keys" }).waitFor();
  await expectText(page, "Typed and launched.");
  await page.context().close();
});

it("says on load when the console is opened at an address other than svc's public URL", async () => {
  const page = await ui.page();
  await page.goto(`${ui.server.url}/signin`);
  const notice = page.locator("#public-url-notice");
  await notice.waitFor();
  expect(await notice.textContent()).toBe(`This page was opened at ${ui.server.url}, but svc accepts sign-ins and changes only from its public address: open ${ui.url}/signin instead.`);
  await page.goto("/signin");
  await page.getByRole("heading", { name: "Sign in to svc" }).waitFor();
  expect(await page.locator("#public-url-notice").count()).toBe(0);
  await page.context().close();
});

it("shows each agent's parent, lists a coordinator's delegates, names the agent in the breadcrumbs, and the sidebar runs the height of a long page", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const auth = { token: project.token };
  const helperConfig = await ui.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project), source_format: "yaml" }, auth);
  expect((await ui.api.post(`${project.base}/agent-profiles`, { name: "helper", config: helperConfig.body.id }, auth)).status).toBe(201);
  // The fake provider makes the call its message names: the coordinator delegates to a child named helper.
  const delegates = 'delegates:\n  helper:\n    profile: helper\n    description: "Use for helper work."\n';
  const coordinatorId = await launchAgent(project, "coordinator", yamlConfig(project, delegates), `call tool delegate ${JSON.stringify({ to: "helper", message: "a task" })}`);
  const children = await eventually(
    async () => (await ui.api.get(`${project.base}/agents?parent_agent_id=${coordinatorId}`, auth)).body.data as Array<{ id: string; name: string }>,
    (list) => list.length === 1,
  );
  await launchAgent(project, "loner", yamlConfig(project));

  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  const table = page.getByRole("table", { name: "Agents" });
  const row = (name: string) => table.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
  // The parent column links the coordinator by name; a top-level agent has none.
  await row("helper").getByRole("link", { name: "coordinator" }).waitFor();
  expect(await row("loner").getByRole("cell").last().textContent()).toBe("none");
  await row("helper").getByRole("link", { name: "coordinator" }).click();
  await page.waitForURL(new RegExp(`/agents/${coordinatorId}$`));

  // The breadcrumbs end with the agent's name, after a link back to the list.
  const crumbs = page.getByRole("navigation", { name: "Breadcrumbs" });
  await crumbs.getByText("coordinator").waitFor();
  expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe("coordinator");
  expect(await crumbs.getByRole("link").allTextContents()).toEqual(["Acme", expect.any(String), "Agents"]);

  // Its delegates: the list filtered by parent.
  await page.getByRole("link", { name: "agents it delegated to" }).click();
  await page.waitForURL(new RegExp(`parent=${coordinatorId}`));
  // One row: helper, with its parent.
  await expect.poll(async () => (await table.getByRole("link").allTextContents()).join(",")).toBe("helper,coordinator");
  expect(children[0]!.name).toBe("helper");

  // A long page at a short window: the sidebar's column (its background) is as tall as the whole page.
  await page.setViewportSize({ width: 1280, height: 300 });
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  await row("helper").waitFor();
  const heights = () => page.evaluate<{ page: number; window: number; column: number }>(`({
    page: document.documentElement.scrollHeight,
    window: window.innerHeight,
    column: document.getElementById("sidebar").parentElement.getBoundingClientRect().height,
  })`);
  const measured = await heights();
  expect(measured.page).toBeGreaterThan(measured.window);
  // Layout heights are fractional; the page's scroll height is whole pixels.
  expect(Math.round(measured.column)).toBe(measured.page);
  await page.context().close();
});

it("lists the project's configs from the sidebar, opens one in the editor, saves an edit as a new config and launches from one", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  const auth = { token: project.token };
  await launchAgent(project, "first", yamlConfig(project, "", "The first config."));
  await launchAgent(project, "second", yamlConfig(project, "", "The second config."));
  const listed = (await ui.api.get(`${project.base}/agent-configs`, auth)).body.data as Array<{ id: string; source: string }>;
  expect(listed).toHaveLength(2);

  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  // From the palette, as from the sidebar.
  await page.getByRole("heading", { name: "Agents", exact: true }).waitFor();
  await page.keyboard.press("Control+k");
  await page.keyboard.type("configs");
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/configs$/);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Configs" }).click();
  const table = page.getByRole("table", { name: "Agent configs" });
  await table.waitFor();
  // Newest first, as the API lists them.
  await expect.poll(async () => (await table.getByRole("link").evaluateAll((links) => links.map((a) => a.getAttribute("title")))).join(",")).toBe(listed.map((c) => c.id).join(","));
  await ui.shot(page, "configs-light-1280");
  await table.locator(`a[title="${listed[1]!.id}"]`).click();
  await page.waitForURL(new RegExp(`/configs/${listed[1]!.id}$`));
  const editor = page.getByLabel("Config (YAML)");
  await expect.poll(async () => editor.textContent()).toContain("The first config.");
  // Saving is offered once the text has changed; the edit compiles to a third config, which opens.
  expect(await page.getByRole("button", { name: "Save as a new config" }).isDisabled()).toBe(true);
  await replaceConfigText(page, yamlConfig(project, "", "An edited config."));
  await page.getByRole("button", { name: "Save as a new config" }).click();
  await page.waitForURL((url) => /\/configs\/acfg_/.test(url.pathname) && !url.pathname.endsWith(listed[1]!.id));
  const after = (await ui.api.get(`${project.base}/agent-configs`, auth)).body.data as Array<{ id: string; source: string }>;
  expect(after).toHaveLength(3);
  expect(after[0]!.source).toContain("An edited config.");
  expect(page.url()).toContain(after[0]!.id);

  // Launch from it: the Launch page's editor starts from the config's text.
  await page.getByRole("link", { name: "Launch an agent from this config" }).click();
  await page.getByRole("heading", { name: "Launch an agent" }).waitFor();
  await expect.poll(async () => page.getByLabel("Config (YAML)").textContent()).toContain("An edited config.");
  await page.context().close();
});

/** One project for the audits, with an agent that has answered. */
let audited: { project: AgentProject; agentId: string; configId: string } | undefined;
async function auditedProject() {
  if (!audited) {
    const project = await agentProject(ui.api, provider.baseUrl);
    provider.script({ text: "An answer to audit." });
    const agentId = await launchAgent(project, "audited", yamlConfig(project), "hello");
    const agent = await ui.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    audited = { project, agentId, configId: agent.body.agent.current_config_id as string };
  }
  return audited;
}

/** The pages of each audit, as [screenshot name, path, heading]; split so each audit fits a test's time. */
function auditPages(project: AgentProject, agentId: string, configId: string, part: "signed-out" | "project" | "org"): Array<[string, string, string]> {
  const base = `/orgs/${project.orgId}/projects/${project.projectId}`;
  const org = `/orgs/${project.orgId}`;
  if (part === "signed-out") return [["signin", "/signin", "Sign in to svc"], ["signup", "/signup", "Create your svc account"], ["device", "/device", "Device login"]];
  if (part === "project") {
    return [
      ["agents", `${base}/agents`, "Agents"],
      ["agent", `${base}/agents/${agentId}`, "audited"],
      ["launch", `${base}/launch`, "Launch"],
      ["profiles", `${base}/profiles`, "Profiles"],
      ["configs", `${base}/configs`, "Agent configs"],
      ["config", `${base}/configs/${configId}`, "Config acfg_"],
      ["memory", `${base}/memory`, "Memory"],
      ["schedules", `${base}/schedules`, "Schedules"],
      ["integrations", `${base}/integrations`, "Integrations"],
    ];
  }
  return [
    ["machines", `${org}/machines`, "Machines"],
    ["pools", `${org}/pools`, "Pools"],
    ["skills", `${org}/skills`, "Skills"],
    ["secrets", `${org}/secrets`, "Secrets"],
    ["models", `${org}/models`, "Models"],
    ["members", `${org}/members`, "Members"],
    ["usage", `${org}/usage`, "Usage"],
    ["budgets", `${org}/budgets`, "Budgets"],
    ["webhooks", `${org}/webhooks`, "Webhook endpoints"],
    ["tokens", "/tokens", "Personal access tokens"],
    ["invitations", "/invitations", "Invitations"],
  ];
}

// The audits and screenshots read the rendered pages, which are the same whatever database is behind them:
// they run in the embedded run only, where the flows above run on both (CI's time is bounded).
for (const theme of ["light", "dark"] as const) {
  for (const part of ["signed-out", "project", "org"] as const) {
    it.skipIf(process.env["DATABASE_URL"])(`passes an axe-core audit with no serious or critical violation on the ${part} pages in the ${theme} theme, with screenshots`, async () => {
      const { project, agentId, configId } = await auditedProject();
      const page = await ui.page();
      await page.addInitScript(`localStorage.setItem("svc:theme", ${JSON.stringify(theme)})`);
      if (part !== "signed-out") await signIn(page, project.session.email);
      for (const [name, path, heading] of auditPages(project, agentId, configId, part)) {
        await page.goto(path);
        await page.getByRole("heading", { name: heading, exact: false }).first().waitFor();
        // Lists and forms have loaded: nothing says "Loading" any more.
        await expect.poll(async () => page.getByText("Loading…").count()).toBe(0);
        expect(await page.evaluate<string | undefined>("document.documentElement.dataset.theme")).toBe(theme);
        await audit(page, `${name} (${theme})`);
        await ui.shot(page, `${name}-${theme}-1280`);
      }
      await page.context().close();
    });
  }
}
