import { deflateSync } from "node:zlib";
import { afterAll, beforeEach, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { startFakeSlack } from "../../server/test/support/fake-slack.js";
import { skillZip } from "../../server/test/api/skills-fixtures.js";
import { slackSecret } from "../../server/test/api/integrations-fixtures.js";
import { expectText, sidewaysOverflow, signIn, useConsole } from "./support.js";

/*
 * The console's administration pages in Chromium against a real svc: model providers and models, revocable
 * grants, machine pools, integrations (against a fake Slack Web API), profiles and schedules, and image
 * artifacts previewed in the timeline. Screenshots go to test-artifacts/console/<database>/.
 */

const slack = await startFakeSlack();
const ui = useConsole({ SVC_MACHINE_PROVIDERS: "local", SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl });
const provider = useFakeProvider();
afterAll(() => slack.close());
beforeEach(() => slack.reset());

/** A project with a second project beside it, and a signed-in page at desktop width. */
async function setUp(): Promise<{ project: AgentProject; second: { id: string }; page: Page }> {
  const project = await agentProject(ui.api, provider.baseUrl);
  const second = await ui.api.post(`/api/v1/orgs/${project.orgId}/projects`, { name: "Second" }, { token: project.token });
  expect(second.status, second.text).toBe(201);
  const page = await ui.page();
  await signIn(page, project.session.email);
  return { project, second: second.body as { id: string }, page };
}

function nav(page: Page) {
  return page.getByRole("navigation", { name: "Sections" });
}

async function confirmDelete(page: Page, name: string): Promise<void> {
  await page.getByRole("button", { name: `Delete ${name}`, exact: true }).click();
  await page.getByRole("button", { name: "Yes, delete" }).click();
}

it("adds a model provider over an existing secret and a model to it, grants and revokes the model, then deletes both", async () => {
  const { project, second, page } = await setUp();
  await nav(page).getByRole("link", { name: "Models" }).click();
  await page.getByLabel("Project to grant models to").selectOption({ label: "Second" });
  const form = page.getByRole("form", { name: "Add a model provider" });
  await form.getByLabel("Provider name").fill("second");
  await form.getByLabel("API format").selectOption("anthropic-messages");
  await form.getByLabel("Base URL").fill(provider.baseUrl);
  await form.getByLabel("API key secret").selectOption({ label: "provider key" });
  await form.getByRole("button", { name: "Add provider" }).click();

  const section = page.getByRole("region", { name: "Provider second" });
  await section.waitFor();
  await section.getByLabel("Model name").fill("smart");
  await section.getByLabel("Provider model id").fill("claude-test");
  await section.getByLabel("Context window (tokens)").fill("200000");
  await section.getByRole("button", { name: "Add model" }).click();
  await section.getByRole("button", { name: "Grant smart to the project" }).click();
  await section.getByRole("button", { name: "Revoke smart from the project" }).waitFor();
  const grants = () => ui.api.get(`/api/v1/orgs/${project.orgId}/projects/${second.id}/model-grants`, { token: project.token });
  expect(((await grants()).body.data as Array<{ model: { name: string } }>).map((g) => g.model.name)).toEqual(["smart"]);
  await ui.shot(page, "models-provider");

  await section.getByRole("button", { name: "Revoke smart from the project" }).click();
  await section.getByRole("button", { name: "Grant smart to the project" }).waitFor();
  expect((await grants()).body.data).toEqual([]);

  await confirmDelete(page, "model smart");
  await section.getByText("No configured models.").waitFor();
  await confirmDelete(page, "provider second");
  await section.waitFor({ state: "detached" });
  // The region leaves the accessibility tree as soon as the modal confirmation hides the page behind it, which
  // can be before the delete is answered (seen once on PostgreSQL): the provider is gone once it is.
  const providerNames = async () => {
    const providers = await ui.api.get(`/api/v1/orgs/${project.orgId}/model-provider-configs`, { token: project.token });
    return (providers.body.data as Array<{ name: string }>).map((p) => p.name);
  };
  await expect.poll(providerNames).toEqual(["fake"]);
  await page.context().close();
});

it("shows what machines, skills and secrets are granted to and revokes each grant", async () => {
  const { project, second, page } = await setUp();
  const auth = { token: project.token };

  await nav(page).getByRole("link", { name: "Machines" }).click();
  await page.getByLabel("Machine name").fill("build-box");
  // Connected without a grant, so that the one made next is its only one.
  await page.getByLabel("For project").selectOption({ label: "No project yet" });
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByLabel("To project").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  const revokeMachine = page.getByRole("button", { name: "Revoke build-box from Second" });
  await revokeMachine.waitFor();
  await ui.shot(page, "machines-granted");
  await revokeMachine.click();
  await page.getByText("Granted to no project.").waitFor();
  expect((await ui.api.get(`/api/v1/orgs/${project.orgId}/projects/${second.id}/machine-grants`, auth)).body.data).toEqual([]);

  await nav(page).getByRole("link", { name: "Skills" }).click();
  await page.getByLabel("Archive (.zip or .tar.gz with SKILL.md)").setInputFiles({ name: "notes.zip", mimeType: "application/zip", buffer: skillZip("release-notes") });
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await page.getByLabel("Grant release-notes to").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  await page.getByRole("button", { name: "Revoke release-notes from Second" }).click();
  await page.getByText("Granted to no project.").waitFor();
  const skills = await ui.api.get(`/api/v1/orgs/${project.orgId}/skills`, auth);
  const skillId = (skills.body.data as Array<{ id: string }>)[0]!.id;
  expect((await ui.api.get(`/api/v1/orgs/${project.orgId}/skills/${skillId}/grants`, auth)).body.data).toEqual([]);

  await nav(page).getByRole("link", { name: "Secrets" }).click();
  await page.getByLabel("Name", { exact: true }).fill("deploy key");
  await page.getByLabel("Value").fill("s3cr3t");
  await page.getByRole("button", { name: "Add secret" }).click();
  await page.getByLabel("Secret", { exact: true }).selectOption({ label: "deploy key" });
  await page.getByLabel("To project").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  const revokeSecret = page.getByRole("button", { name: "Revoke deploy key from Second" });
  await revokeSecret.waitFor();
  await ui.shot(page, "secrets-granted");
  await revokeSecret.click();
  await revokeSecret.waitFor({ state: "detached" });
  const secrets = await ui.api.get(`/api/v1/orgs/${project.orgId}/secrets?limit=100`, auth);
  const deployKey = (secrets.body.data as Array<{ id: string; name: string }>).find((x) => x.name === "deploy key")!;
  expect((await ui.api.get(`/api/v1/orgs/${project.orgId}/secrets/${deployKey.id}/grants`, auth)).body.data).toEqual([]);
  await page.context().close();
});

it("creates a machine pool, grants it to a project, revokes the pool grant and deletes the pool", async () => {
  const { project, second, page } = await setUp();
  const auth = { token: project.token };
  await nav(page).getByRole("link", { name: "Pools" }).click();
  await page.getByLabel("Pool name").fill("sandbox");
  await page.getByLabel("Most machines at once").fill("3");
  await page.getByLabel("Delete idle machines after (minutes, optional)").fill("30");
  await page.getByRole("button", { name: "Create pool" }).click();
  const table = page.getByRole("table", { name: "Machine pools" });
  await table.getByText("0 / 3").waitFor();
  await page.getByLabel("Pool", { exact: true }).selectOption({ label: "sandbox" });
  await page.getByLabel("To project").selectOption({ label: "Second" });
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  const revoke = page.getByRole("button", { name: "Revoke sandbox from Second" });
  await revoke.waitFor();
  const poolGrants = () => ui.api.get(`/api/v1/orgs/${project.orgId}/projects/${second.id}/machine-pool-grants`, auth);
  expect((await poolGrants()).body.data).toHaveLength(1);
  await ui.shot(page, "pools");
  await revoke.click();
  await table.getByText("Granted to no project.").waitFor();
  expect((await poolGrants()).body.data).toEqual([]);
  await confirmDelete(page, "pool sandbox");
  await page.getByText("No machine pools yet.").waitFor();
  expect((await ui.api.get(`/api/v1/orgs/${project.orgId}/machine-pools`, auth)).body.data).toEqual([]);
  await page.context().close();
});

it("adds a Slack integration, connects it with a project secret, disconnects, reconnects and deletes it", async () => {
  const { project, page } = await setUp();
  const bot = slack.addBot();
  await slackSecret(ui.api, project, bot.token);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/integrations`);
  await page.getByLabel("Kind").selectOption("slack_thread");
  await page.getByLabel("Integration name").fill("eng");
  await page.getByRole("button", { name: "Add integration" }).click();
  const item = page.getByRole("list", { name: "Integrations" }).getByRole("listitem");
  await item.getByText("disconnected").waitFor();
  const connect = page.getByRole("form", { name: "Connect eng" });
  await connect.getByLabel("Display name (optional)").fill("Eng bot");
  await connect.getByRole("button", { name: "Connect" }).click();
  await item.getByText("active", { exact: true }).waitFor();
  await expectText(page, "Shown as “Eng bot”.");
  const read = async () => (await ui.api.get(`${project.base}/integrations`, { token: project.token })).body.data as Array<{ state: string; setup_revision: number; provider_tenant_id?: string }>;
  expect((await read())[0]).toMatchObject({ state: "active", setup_revision: 2, provider_tenant_id: bot.teamId });
  await ui.shot(page, "integrations-active");

  await page.getByRole("button", { name: "Disconnect eng" }).click();
  await page.getByRole("button", { name: "Reconnect eng" }).click();
  await page.getByRole("button", { name: "Disconnect eng" }).waitFor();
  expect((await read())[0]).toMatchObject({ state: "active", setup_revision: 4 });
  await confirmDelete(page, "eng");
  await page.getByText("No integrations yet.").waitFor();
  expect(await read()).toEqual([]);
  await page.context().close();
});

it("creates a profile from an agent's config, renames it and moves it to another config; schedules it, pauses, resumes and deletes", async () => {
  const { project, page } = await setUp();
  for (const [name, instruction] of [["nightly", "Write the nightly report."], ["weekly", "Write the weekly report."]] as const) {
    const config = await ui.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project, "", instruction), source_format: "yaml" }, { token: project.token });
    const agent = await ui.api.post(`${project.base}/agents`, { config: config.body.id, name }, { token: project.token });
    expect(agent.status, agent.text).toBe(201);
  }
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/profiles`);
  await page.getByLabel("Profile name").fill("reporter");
  await page.getByLabel("Config", { exact: true }).selectOption({ label: "config of nightly" });
  await page.getByRole("button", { name: "Create profile" }).click();
  await page.getByLabel("New name for reporter").fill("reports");
  await page.getByRole("button", { name: "Rename" }).click();
  await page.getByLabel("New config for reports").selectOption({ label: "config of weekly" });
  await page.getByRole("button", { name: "Use config" }).click();
  const profiles = page.getByRole("table", { name: "Agent profiles" });
  await profiles.getByRole("cell", { name: "2", exact: true }).waitFor();
  const listed = await ui.api.get(`${project.base}/agent-profiles`, { token: project.token });
  expect(listed.body.data).toMatchObject([{ name: "reports", current_generation: 2 }]);
  await ui.shot(page, "profiles");

  await nav(page).getByRole("link", { name: "Schedules" }).click();
  await page.getByLabel("Schedule name").fill("weekday report");
  await page.getByLabel("Cron expression").fill("0 9 * * MON-FRI");
  await page.getByLabel("Timezone").fill("Europe/Berlin");
  await page.getByLabel("Target").selectOption({ label: "profile reports" });
  await page.getByLabel("Message").fill("Report for {{.trigger.local_date}}");
  await page.getByRole("button", { name: "Create schedule" }).click();
  const table = page.getByRole("table", { name: "Schedules" });
  await table.getByText("profile reports").waitFor();
  const triggers = async () => (await ui.api.get(`${project.base}/cron-triggers`, { token: project.token })).body.data as Array<{ enabled: boolean; next_fire_at: string | null; timezone: string }>;
  const [created] = await triggers();
  expect(created).toMatchObject({ enabled: true, timezone: "Europe/Berlin" });
  // The page shows the next fire time the API computed: relative to now, and exactly, in the browser's
  // locale, on hover (the time element's title) with its machine-readable form.
  const shown = await page.evaluate((at) => new Date(at).toLocaleString(), created!.next_fire_at!);
  const next = table.locator(`time[datetime="${created!.next_fire_at!}"]`);
  await next.waitFor();
  expect(await next.getAttribute("title")).toBe(shown);
  expect(await next.textContent()).toMatch(/^in \d+ (second|minute|hour|day)s?$|^tomorrow$|^now$/);
  // The cron expression in words, beside it.
  await table.getByText("At 09:00, Monday through Friday").waitFor();
  await ui.shot(page, "schedules");

  await page.getByRole("button", { name: "Pause weekday report" }).click();
  // Exact: the actions cell reads "PauseDelete", which holds "paused" case-insensitively.
  await table.getByText("paused", { exact: true }).waitFor();
  expect(await triggers()).toMatchObject([{ enabled: false, next_fire_at: null }]);
  await page.getByRole("button", { name: "Resume weekday report" }).click();
  await table.getByText("active", { exact: true }).waitFor();
  expect((await triggers())[0]!.enabled).toBe(true);

  const phone = await ui.page(390);
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(page.url());
  await phone.getByRole("table", { name: "Schedules" }).waitFor();
  expect(await sidewaysOverflow(phone)).toBe(0);
  await ui.shot(phone, "schedules-phone");
  await phone.context().close();

  await confirmDelete(page, "schedule weekday report");
  await page.getByText("No schedules yet.").waitFor();
  expect(await triggers()).toEqual([]);
  await nav(page).getByRole("link", { name: "Profiles" }).click();
  await confirmDelete(page, "profile reports");
  await page.getByText("No profiles yet.").waitFor();
  await page.context().close();
});


it("previews an image artifact inline with its filename as alt text and links any other artifact", async () => {
  const project = await agentProject(ui.api, provider.baseUrl);
  provider.script({ toolCalls: [{ name: "render_chart", input: {} }] }, { text: "Here is the chart." });
  const tools = "tools:\n  render_chart:\n    type: custom\n    description: Renders the chart.\n    input_schema: { type: object }\n";
  const config = await ui.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project, tools), source_format: "yaml" }, { token: project.token });
  const launched = await ui.api.post(`${project.base}/agents`, { config: config.body.id, name: "charts", message: "Draw it." }, { token: project.token });
  const calls = `${project.base}/agents/${launched.body.agent.id}/tool-calls`;
  await expect.poll(async () => (await ui.api.get(`${calls}?state=ready`, { token: project.token })).body.data.length, { timeout: 30_000 }).toBe(1);
  const ready = (await ui.api.get(`${calls}?state=ready`, { token: project.token })).body.data[0] as { id: string };
  const blocks = [
    { type: "media", media_type: "image/png", filename: "chart.png", data: bars(96, 48).toString("base64") },
    { type: "media", media_type: "text/csv", filename: "chart.csv", data: Buffer.from("x,y\n1,2\n").toString("base64") },
  ];
  const result = await ui.api.post(`${calls}/${ready.id}/result`, { outcome: "succeeded", content_blocks: blocks }, { token: project.token });
  expect(result.status, result.text).toBe(200);

  const page = await ui.page();
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents/${launched.body.agent.id}`);
  await expectText(page, "Here is the chart.");
  // Config change, input, tool call, tool result, answer: each once.
  expect(await page.getByRole("list", { name: "Timeline" }).locator("li.event").count()).toBe(5);
  const image = page.getByRole("img", { name: "chart.png" });
  await image.waitFor();
  // Decoded: the session cookie authenticated the content route and the CSP let the image load.
  // The server's tsconfig (which checks these tests too) has no DOM types: the image's two fields, typed here.
  type Decoded = { complete: boolean; naturalWidth: number };
  const decodedWidth = () => image.evaluate((img) => (img as unknown as Decoded).complete && (img as unknown as Decoded).naturalWidth);
  await expect.poll(decodedWidth).toBe(96);
  expect(await page.getByRole("img").count()).toBe(1);
  const link = page.getByRole("link", { name: "chart.csv" });
  expect(await link.getAttribute("href")).toMatch(/\/artifacts\/art_[a-z2-7]{26}\/content$/);
  await ui.shot(page, "agent-image-artifact");
  await page.context().close();
});

/** A width×height PNG of vertical bars (a "chart"): RGB rows, deflated, with the chunk CRCs PNG requires. */
function bars(width: number, height: number): Buffer {
  const row = (y: number) => Buffer.concat([Buffer.from([0]), ...Array.from({ length: width }, (_, x) => (height - y < ((x >> 4) + 1) * 8 ? Buffer.from([11, 87, 208]) : Buffer.from([246, 248, 250])))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, (_, y) => row(y))));
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), chunk("IHDR", header), chunk("IDAT", pixels), chunk("IEND", Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
