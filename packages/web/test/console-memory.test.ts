import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { createConfig, eventually, finalOutputs, launch, untilEvents } from "../../server/test/support/agent-loop.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { signIn, useConsole } from "./support.js";

/*
 * The console's pages for issue 31 in Chromium against a real svc: the Memory page (stores, files by prefix
 * and search, a digest-guarded edit and its conflict, versions with who wrote them), a coordinator's
 * delegates in its agent view with links both ways, and a profile's description and MCP switch.
 * Screenshots go to test-artifacts/console/<database>/.
 */

const ui = useConsole();
const provider = useFakeProvider();

async function setUp(): Promise<{ project: AgentProject; page: Page }> {
  const project = await agentProject(ui.api, provider.baseUrl);
  const page = await ui.page();
  await signIn(page, project.session.email);
  return { project, page };
}

function nav(page: Page) {
  return page.getByRole("navigation", { name: "Sections" });
}

it("creates a memory store, writes, finds, edits (showing a conflict plainly) and reads the versions of a file, then deletes the store", async () => {
  const { project, page } = await setUp();
  const auth = { token: project.token };
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents`);
  await nav(page).getByRole("link", { name: "Memory" }).click();
  await page.getByText("No memory stores yet.").first().waitFor();

  await page.getByLabel("Store name").fill("notes");
  await page.getByLabel("Description", { exact: true }).fill("Team notes");
  await page.getByRole("button", { name: "Create store" }).click();
  const stores = page.getByRole("table", { name: "Memory stores" });
  await stores.getByRole("link", { name: "notes" }).waitFor();
  const [store] = (await ui.api.get(`${project.base}/memory-stores`, auth)).body.data;
  expect(store).toMatchObject({ name: "notes", description: "Team notes", writable: true });

  // Edit the description and make it read-only, then writable again.
  await page.getByLabel("Description of notes").fill("What the team decided");
  await page.getByLabel("notes is writable").uncheck();
  await page.getByRole("button", { name: "Save notes", exact: true }).click();
  await stores.getByText("read-only").waitFor();
  expect((await ui.api.get(`${project.base}/memory-stores/${store.id}`, auth)).body).toMatchObject({ description: "What the team decided", writable: false });
  await page.getByLabel("notes is writable").check();
  await page.getByRole("button", { name: "Save notes", exact: true }).click();
  await stores.getByText("writable", { exact: true }).waitFor();

  // Write a file from the page; it opens.
  await stores.getByRole("link", { name: "notes" }).click();
  await page.getByText("Write a file").click();
  await page.getByLabel("Path", { exact: true }).fill("docs/plan.md");
  await page.getByLabel("Content", { exact: true }).fill("Quarterly planning: ship memory.");
  await page.getByRole("button", { name: "Write file" }).click();
  await page.getByRole("heading", { name: "notes/docs/plan.md" }).waitFor();
  await page.getByLabel("Content of docs/plan.md", { exact: true }).getByText("Quarterly planning: ship memory.").waitFor();
  const other = await ui.api.put(`${project.base}/memory-stores/${store.id}/memories`, { path: "other/readme.md", content: "Penguins live here." }, auth);
  expect(other.status, other.text).toBe(201);

  // An agent with the store attached appends to the file: its version names the agent.
  const config = await createConfig(ui.api, project, yamlConfig(project, "memory:\n  - store: notes\n    access: read_write\n"));
  provider.script({ toolCalls: [{ name: "write_file", input: { path: "/memory/notes/docs/plan.md", content: "\nAgent: noted.", append: true } }] }, { text: "done" });
  const agentId = await launch(ui.api, project, config, "note it");
  await untilEvents(ui.api, project, agentId, (events) => finalOutputs(events).length === 1);

  // By path prefix, then by full-text search.
  const files = page.getByRole("table", { name: "Files of notes" });
  await page.getByLabel("Path starts with").fill("docs/");
  await page.getByRole("button", { name: "Find" }).click();
  await files.getByRole("link", { name: "docs/plan.md" }).waitFor();
  expect(await files.getByRole("link", { name: "other/readme.md" }).count()).toBe(0);
  await page.getByLabel("Path starts with").fill("");
  await page.getByLabel("Search text").fill("penguins");
  await page.getByRole("button", { name: "Find" }).click();
  await files.getByRole("link", { name: "other/readme.md" }).waitFor();
  await eventually(() => files.getByRole("link", { name: "docs/plan.md" }).count(), (n) => n === 0);
  await page.getByLabel("Search text").fill("");
  await page.getByRole("button", { name: "Find" }).click();
  await files.getByRole("link", { name: "docs/plan.md" }).click();
  await page.getByLabel("Content of docs/plan.md", { exact: true }).getByText("Agent: noted.").waitFor();

  // Edit; meanwhile someone else writes: the save is refused and says so, keeping the text typed.
  await page.getByRole("button", { name: "Edit", exact: true }).click();
  const editor = page.getByLabel("Content of docs/plan.md", { exact: true });
  await editor.fill("Quarterly planning: ship memory and the console page.");
  const [plan] = (await ui.api.get(`${project.base}/memory-stores/${store.id}/memories?path_prefix=docs/`, auth)).body.data;
  const theirs = await ui.api.put(`${project.base}/memory-stores/${store.id}/memories`, { path: "docs/plan.md", content: "Quarterly planning: ship memory. Also: docs." }, auth);
  expect(theirs.status, theirs.text).toBe(200);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByRole("alert").getByText("Not saved: someone changed docs/plan.md after you opened it").waitFor();
  expect(await editor.inputValue()).toBe("Quarterly planning: ship memory and the console page.");
  await ui.shot(page, "memory-conflict");
  await page.getByRole("button", { name: "Load the current version" }).click();
  await page.getByLabel("Current content of docs/plan.md").getByText("Also: docs.").waitFor();
  await editor.fill("Quarterly planning: ship memory and the console page. Also: docs.");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByLabel("Content of docs/plan.md", { exact: true }).getByText("Quarterly planning: ship memory and the console page. Also: docs.").waitFor();

  // Versions, newest first: the person, the person (from the API), the agent linked, the person.
  const versions = page.getByRole("table", { name: "Versions of docs/plan.md" });
  await versions.getByRole("cell", { name: "4", exact: true }).waitFor();
  const rows = await versions.locator("tbody tr").allTextContents();
  expect(rows).toHaveLength(4);
  expect(rows[2]).toContain(`agent ${agentId}`);
  expect(rows[0]).toContain(`user ${project.session.userId}`);
  await versions.getByRole("link", { name: agentId }).waitFor();
  await page.getByRole("button", { name: "Show version 1" }).click();
  await page.getByLabel("Content of version 1").getByText("Quarterly planning: ship memory.").waitFor();
  await ui.shot(page, "memory");
  const listed = (await ui.api.get(`${project.base}/memory-stores/${store.id}/memories/${plan.id}/versions`, auth)).body.data;
  expect(listed.map((v: any) => v.written_by.kind)).toEqual(["user", "user", "agent", "user"]);

  // Deleting the store: refused while the agent's config names it, then done once the agent is archived.
  await page.getByRole("button", { name: "Delete memory store notes", exact: true }).click();
  await page.getByText("This removes memory store notes, its 2 files and every version of them").waitFor();
  await page.getByRole("button", { name: "Yes, delete" }).click();
  await page.getByRole("alertdialog").getByRole("alert").waitFor();
  expect((await ui.api.post(`${project.base}/agents/${agentId}/archive`, {}, auth)).status).toBe(200);
  await page.getByRole("button", { name: "Yes, delete" }).click();
  await page.getByText("No memory stores yet.").first().waitFor();
  expect((await ui.api.get(`${project.base}/memory-stores`, auth)).body.data).toEqual([]);
  await page.context().close();
});

it("shows a coordinator's delegates with their activity and links both ways, and a profile's description and MCP switch", async () => {
  const { project, page } = await setUp();
  const auth = { token: project.token };
  const helperConfig = await createConfig(ui.api, project, yamlConfig(project));
  const helper = await ui.api.post(`${project.base}/agent-profiles`, { name: "helper", config: helperConfig }, auth);
  expect(helper.status, helper.text).toBe(201);
  const coordinatorConfig = await createConfig(ui.api, project, yamlConfig(project, 'delegates:\n  help:\n    profile: helper\n    description: "Helps."\n'));
  // Unscripted, the fake provider makes the call the message spells and echoes everything else.
  const launched = await ui.api.post(
    `${project.base}/agents`,
    { config: coordinatorConfig, name: "lead", message: `call tool delegate ${JSON.stringify({ to: "help", message: "say hi", wait: false })}` },
    auth,
  );
  expect(launched.status, launched.text).toBe(201);
  const coordinatorId = launched.body.agent.id as string;
  await untilEvents(ui.api, project, coordinatorId, (events) => finalOutputs(events).length === 1);
  const [child] = await eventually(
    async () => (await ui.api.get(`${project.base}/agents?parent_agent_id=${coordinatorId}`, auth)).body.data as any[],
    (list) => list.length === 1 && list[0].activity.status === "idle",
  );

  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents/${coordinatorId}`);
  const family = page.getByRole("region", { name: "Delegation" });
  const delegates = family.getByRole("list", { name: "Its delegates" });
  await delegates.getByRole("link", { name: "help" }).waitFor();
  await delegates.getByText("idle", { exact: true }).waitFor();
  await ui.shot(page, "agent-delegates");
  await delegates.getByRole("link", { name: "help" }).click();
  await page.waitForURL((url) => url.pathname.endsWith(`/agents/${child.id}`));
  const parentLink = page.getByRole("region", { name: "Delegation" }).getByRole("link", { name: "lead", exact: true });
  await page.getByText("Delegate of lead").waitFor();
  await ui.shot(page, "agent-delegate-of");
  await parentLink.click();
  await page.waitForURL((url) => url.pathname.endsWith(`/agents/${coordinatorId}`));

  // The profile's description and MCP switch.
  await nav(page).getByRole("link", { name: "Profiles" }).click();
  await page.getByLabel("Description of helper").fill("Answers short questions.");
  await page.getByRole("switch", { name: /Offer as an MCP tool/ }).check();
  await page.getByRole("button", { name: "Save description and MCP" }).click();
  await page.getByText("helper is a tool of the project's MCP endpoint.").waitFor();
  const saved = await ui.api.get(`${project.base}/agent-profiles/${helper.body.id}`, auth);
  expect(saved.body).toMatchObject({ description: "Answers short questions.", mcp_tool: true });
  await page.getByRole("switch", { name: /Offer as an MCP tool/ }).uncheck();
  await page.getByRole("button", { name: "Save description and MCP" }).click();
  await page.getByText("helper is not offered over MCP.").waitFor();
  expect((await ui.api.get(`${project.base}/agent-profiles/${helper.body.id}`, auth)).body.mcp_tool).toBe(false);
  await page.context().close();
});
