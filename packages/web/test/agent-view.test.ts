import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentProject, yamlConfig, type AgentProject } from "../../server/test/support/agents.js";
import { createConfig, eventually, launch, send } from "../../server/test/support/agent-loop.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { freePort } from "../../server/test/support/process.js";
import { expectText, signIn, sidewaysOverflow, useConsole } from "./support.js";

/*
 * The agent view and the config editor as people use them (issue 33, items 1, 3, 5 and 6): a long run read by
 * turn, markdown, tool calls as lines that open, an approval answered inline by keyboard only, the backlog
 * reordered by drag and drop (and by keyboard), the editor's completion and svc's issues as you type, a
 * failing model call shown as "retrying (attempt N of M)" in the header, and an accessibility audit of the
 * agent page and the editor in both themes. Screenshots: test-artifacts/console/<database>/.
 */
const ui = useConsole();
const provider = useFakeProvider();
const require = createRequire(import.meta.url);

const LOOKUP = `tools:\n  lookup_invoice:\n    type: custom\n    description: Find an invoice.\n    input_schema:\n      type: object\n      properties:\n        number: {type: string}\n      required: [number]\n`;
const ASK = `${LOOKUP}    permission:\n      mode: always_ask\n`;
const WIDTHS = [1280, 390] as const;

async function openAgent(project: AgentProject, agentId: string, width: number, colorScheme: "light" | "dark" = "light"): Promise<Page> {
  const page = await ui.page(width, colorScheme);
  await signIn(page, project.session.email);
  await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/agents/${agentId}`);
  await page.getByText("live", { exact: true }).waitFor({ timeout: 30_000 });
  return page;
}

/** The timeline's scroll box: its position, and the top of the event with `sequence` within it. */
const box = (page: Page) =>
  page.evaluate<{ top: number; height: number; client: number }>(
    `(() => { const el = document.querySelector(".timeline-box"); return { top: el.scrollTop, height: el.scrollHeight, client: el.clientHeight }; })()`,
  );
const eventTop = (page: Page, sequence: number) =>
  page.evaluate<number>(
    `(() => { const el = document.querySelector(".timeline-box"); const ev = el.querySelector('[data-sequence="${sequence}"]'); return ev.getBoundingClientRect().top - el.getBoundingClientRect().top; })()`,
  );

async function waitForReadyCall(project: AgentProject, agentId: string): Promise<string> {
  const url = `${project.base}/agents/${agentId}/tool-calls?state=ready`;
  const ready = await eventually(async () => (await ui.api.get(url, { token: project.token })).body.data as Array<{ id: string }>, (d) => d.length === 1, 60_000);
  return ready[0]!.id;
}

async function eventCount(project: AgentProject, agentId: string): Promise<number> {
  const page = await ui.api.get(`${project.base}/agents/${agentId}/events?before_sequence=0&limit=1`, { token: project.token });
  return (page.body.data as Array<{ sequence: number }>)[0]?.sequence ?? 0;
}

describe("a long run", () => {
  it("reads by turn, renders markdown, opens a tool call's line, sticks to the latest and keeps its place when older events load", async () => {
    const project = await agentProject(ui.api, provider.baseUrl);
    provider.script(
      { toolCalls: [{ name: "lookup_invoice", input: { number: "INV-7" } }] },
      { text: "Invoice **INV-7** is paid:\n\n- amount: 120 EUR\n- paid on 3 March\n\n```\nstatus = paid\n```\n" },
    );
    const agentId = await launch(ui.api, project, await createConfig(ui.api, project, yamlConfig(project, LOOKUP)), "Is INV-7 paid?");
    const callId = await waitForReadyCall(project, agentId);
    const result = await ui.api.post(`${project.base}/agents/${agentId}/tool-calls/${callId}/result`, { outcome: "succeeded", content_blocks: [{ type: "text", text: "paid on 3 March, 120 EUR" }] }, { token: project.token });
    expect(result.status, result.text).toBe(200);
    // 5 events so far (config, input, tool call, result, answer); 55 more turns of two make more than one page (100).
    await eventually(() => eventCount(project, agentId), (n) => n === 5, 60_000);
    const turns = 55;
    provider.script(...Array.from({ length: turns }, (_, i) => ({ text: `Reply number ${i + 1}.` })));
    for (let i = 1; i <= turns; i++) await send(ui.api, project, agentId, `Question number ${i}`);
    const total = 5 + 2 * turns;
    await eventually(() => eventCount(project, agentId), (n) => n === total, 120_000);

    for (const width of WIDTHS) {
      const page = await openAgent(project, agentId, width);
      const timeline = page.getByRole("list", { name: "Timeline" });
      await timeline.getByText(`Reply number ${turns}.`).waitFor();
      // The newest page (100 events) is shown by turn, and the box sits at the bottom.
      expect(await timeline.locator("li.event").count()).toBe(100);
      // Turn 1 is the config, turn 2 the opening message; each question after that is a turn of its own.
      const lastTurn = page.getByRole("region", { name: `Turn ${turns + 2}`, exact: true });
      expect(await lastTurn.locator("li.event").count()).toBe(2);
      expect(await lastTurn.locator("li.event.agent_input").textContent()).toContain(`Question number ${turns}`);
      await expect.poll(async () => { const b = await box(page); return b.height - b.top - b.client; }).toBeLessThanOrEqual(2);
      expect(await sidewaysOverflow(page)).toBe(0);
      await ui.shot(page, `agent-long-run-${width}`);

      // Scrolled to the top: a jump to the latest is offered; loading older events keeps the same events in view.
      await page.evaluate(`document.querySelector(".timeline-box").scrollTop = 0`);
      await page.getByRole("button", { name: /Jump to latest/ }).waitFor();
      const first = Number(await timeline.locator("li.event").first().getAttribute("data-sequence"));
      expect(first).toBe(total - 99);
      const before = await eventTop(page, first);
      await page.getByRole("button", { name: "Load older events" }).click();
      await expect.poll(() => timeline.locator("li.event").count()).toBe(total);
      await page.getByText("The agent's first event.").waitFor();
      expect(Math.abs((await eventTop(page, first)) - before)).toBeLessThanOrEqual(2);

      // The opening message's turn (turn 1 is the config): markdown rendered, the tool call one line that opens (by keyboard) to arguments and result.
      const opening = page.getByRole("region", { name: "Turn 2", exact: true });
      const answer = opening.locator("li.event.model_output").last();
      await answer.locator("strong", { hasText: "INV-7" }).waitFor();
      expect(await answer.locator("li").allTextContents()).toEqual(["amount: 120 EUR", "paid on 3 March"]);
      await answer.locator("pre", { hasText: "status = paid" }).waitFor();
      const line = opening.locator("details.tool-call");
      expect(await line.locator("summary").textContent()).toMatch(/lookup_invoice\s*succeeded/);
      expect(await line.locator(".tool-body").count()).toBe(0);
      await line.locator("summary").focus();
      await page.keyboard.press("Enter");
      const body = line.locator(".tool-body");
      await body.waitFor();
      expect(await body.textContent()).toContain('"number": "INV-7"');
      expect(await body.textContent()).toContain("paid on 3 March, 120 EUR");
      await ui.shot(page, `agent-tool-call-${width}`);

      await page.getByRole("button", { name: /Jump to latest/ }).click();
      await expect.poll(async () => { const b = await box(page); return b.height - b.top - b.client; }).toBeLessThanOrEqual(2);
      await page.context().close();
    }
  });
});

describe("an approval", () => {
  for (const width of WIDTHS) {
    it(`is answered inline, where it was asked, with the keyboard only (${width} px)`, async () => {
      const project = await agentProject(ui.api, provider.baseUrl);
      provider.script({ toolCalls: [{ name: "lookup_invoice", input: { number: "INV-9" } }] }, { text: "Done." });
      const agentId = await launch(ui.api, project, await createConfig(ui.api, project, yamlConfig(project, ASK)), "Look up INV-9.");
      const page = await openAgent(project, agentId, width);
      const timeline = page.getByRole("list", { name: "Timeline" });
      // The approval sits in the timeline, under the call it is about.
      const approval = timeline.getByRole("form", { name: /lookup_invoice/ });
      await approval.waitFor();
      expect(await timeline.locator("li.event.model_output").filter({ has: page.getByRole("form", { name: /lookup_invoice/ }) }).count()).toBe(1);
      await expect.poll(() => page.getByRole("status", { name: "What the agent is doing" }).textContent()).toContain("waiting for you");
      await ui.shot(page, `agent-approval-${width}`);

      // Keyboard only: Tab to the notice, Enter moves to the first choice, Space chooses, Tab to Answer, Enter.
      const waits = "A question or approval waits for your answer.";
      for (let i = 0; i < 40 && (await focused(page)) !== waits; i++) await page.keyboard.press("Tab");
      expect(await focused(page)).toBe(waits);
      await page.keyboard.press("Enter");
      await expect.poll(() => focused(page)).toBe("Allow");
      await page.keyboard.press("Space");
      expect(await approval.getByLabel("Allow").isChecked()).toBe(true);
      for (let i = 0; i < 10 && (await focused(page)) !== "Answer"; i++) await page.keyboard.press("Tab");
      expect(await focused(page)).toBe("Answer");
      await page.keyboard.press("Enter");

      await timeline.getByText(/lookup_invoice: Allow/).waitFor();
      await approval.waitFor({ state: "detached" });
      const open = await ui.api.get(`${project.base}/agents/${agentId}/interactions?state=open`, { token: project.token });
      expect(open.body.data).toEqual([]);
      expect(await sidewaysOverflow(page)).toBe(0);
      await page.context().close();
    });
  }
});

describe("the backlog", () => {
  for (const width of WIDTHS) {
    it(`is reordered by dragging a handle and by the keyboard, and the server's order follows (${width} px)`, async () => {
      const project = await agentProject(ui.api, provider.baseUrl);
      // The turn waits for an approval, so messages sent meanwhile wait in the backlog.
      provider.script({ toolCalls: [{ name: "lookup_invoice", input: { number: "INV-1" } }] });
      const agentId = await launch(ui.api, project, await createConfig(ui.api, project, yamlConfig(project, ASK)), "Look up INV-1.");
      await eventually(async () => (await ui.api.get(`${project.base}/agents/${agentId}/interactions?state=open`, { token: project.token })).body.data.length, (n) => n === 1, 60_000);
      for (const text of ["first", "second", "third"]) await send(ui.api, project, agentId, text);
      const order = async () =>
        ((await ui.api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token })).body.data as Array<{ content_blocks: Array<{ text: string }> }>).map((i) => i.content_blocks[0]!.text).join(" ");
      expect(await order()).toBe("first second third");

      const page = await openAgent(project, agentId, width);
      const backlog = page.getByRole("list", { name: "Backlog" });
      await backlog.getByText("third").waitFor();
      // Drag "third" onto "first" with the mouse.
      const handle = page.getByRole("button", { name: "Drag to reorder: third" });
      const target = page.getByRole("button", { name: "Drag to reorder: first" });
      await handle.scrollIntoViewIfNeeded();
      const from = (await handle.boundingBox())!;
      const to = (await target.boundingBox())!;
      await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await page.mouse.down();
      await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2 - 10, { steps: 5 });
      await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2 - 4, { steps: 15 });
      await page.mouse.up();
      await expect.poll(order).toBe("third first second");
      await expect.poll(async () => (await backlog.locator(".clip").allTextContents()).join(" ")).toBe("third first second");

      // By keyboard: Space picks "first" up, Down moves it, Space drops it. dnd-kit announces where the item is
      // over: first over itself once it has measured the items' places (the arrow keys move between those;
      // pressed before, on a loaded machine, ArrowDown found nowhere to go), then over "second".
      // The server order is third, first, second.
      const ids = ((await ui.api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token })).body.data as Array<{ id: string }>).map((i) => i.id);
      await page.getByRole("button", { name: "Drag to reorder: first" }).focus();
      await page.keyboard.press("Space");
      await backlog.locator("li.dragging").waitFor();
      await page.getByText(`Draggable item ${ids[1]} was moved over droppable area ${ids[1]}.`).waitFor({ state: "attached" });
      // "second" is the last item, so a press that went unheard can be repeated without going past it (once, in
      // CI, the first press left no announcement for 60 s).
      const overSecond = page.getByText(`Draggable item ${ids[1]} was moved over droppable area ${ids[2]}.`);
      for (let press = 0; press < 5 && !(await overSecond.count()); press++) {
        await page.keyboard.press("ArrowDown");
        await overSecond.waitFor({ state: "attached", timeout: 10_000 }).catch(() => undefined);
      }
      await overSecond.waitFor({ state: "attached" });
      await page.keyboard.press("Space");
      await expect.poll(order).toBe("third second first");
      await expect.poll(async () => (await backlog.locator(".clip").allTextContents()).join(" ")).toBe("third second first");
      await ui.shot(page, `agent-backlog-${width}`);
      await page.context().close();
    });
  }
});

describe("a model call that fails and is retried", () => {
  it("shows retrying (attempt N of M) with the reason in the header and the timeline, attempt after attempt", async () => {
    const project = await agentProject(ui.api, `http://127.0.0.1:${await freePort()}/v1`);
    const agentId = await launch(ui.api, project, await createConfig(ui.api, project, yamlConfig(project)), "hello");
    const page = await openAgent(project, agentId, 1280);
    const header = page.getByRole("status", { name: "What the agent is doing" });
    const attemptShown = async () => Number(/retrying \(attempt (\d+) of 8\)/.exec((await header.textContent()) ?? "")?.[1] ?? 0);
    await expect.poll(attemptShown, { timeout: 60_000 }).toBeGreaterThan(0);
    const seen = await attemptShown();
    expect(await header.textContent()).toMatch(/retrying \(attempt \d of 8\): .*(refused|ECONNREFUSED)/i);
    // The next failure replaces it as it is streamed: the header counts every attempt, not a stale one.
    await expect.poll(attemptShown, { timeout: 60_000 }).toBe(seen + 1);
    // The timeline's notice counts with it (by the time it is read, a loaded machine may have made one more).
    const notice = page.getByRole("list", { name: "Timeline" }).locator("li.notice.retry");
    const noticeAttempt = async () => Number(/retrying \(attempt (\d+) of 8\)/.exec((await notice.textContent()) ?? "")?.[1] ?? 0);
    await expect.poll(noticeAttempt).toBeGreaterThanOrEqual(seen + 1);
    await ui.shot(page, "agent-retrying-1280");
    await ui.api.post(`${project.base}/agents/${agentId}/archive`, {}, { token: project.token });
    await page.context().close();
  });
});

describe("the config editor", () => {
  for (const width of WIDTHS) {
    it(`completes a key from svc's schema, explains a key on hover, and shows svc's issue at its line as you type (${width} px)`, async () => {
      const project = await agentProject(ui.api, provider.baseUrl);
      const page = await ui.page(width);
      await signIn(page, project.session.email);
      await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/launch`);
      const editor = page.getByLabel("Config (YAML)");
      await page.locator(".cm-content").waitFor();
      await expect.poll(() => editor.innerText()).toContain("provider_config: fake");

      // A provider config that does not exist, on line 4: svc's issue shows at that line without saving anything.
      await replaceText(page, `version: v1\ninstruction: hi\nmodel:\n  provider_config: nope\n  name: fast\n`);
      await expect.poll(() => page.locator(".cm-lineNumbers .cm-gutterElement.marked").allTextContents(), { timeout: 30_000 }).toEqual(["4"]);
      await page.locator(".cm-lintRange-error").first().waitFor();
      await expectText(page, 'line 4: the organization has no model provider config named "nope"');
      await ui.shot(page, `editor-issue-${width}`);

      // Fixed: the issue goes.
      await replaceText(page, yamlConfig(project));
      await expectText(page, "svc finds no problem in this config.");
      expect(await page.locator(".cm-lineNumbers .cm-gutterElement.marked").count()).toBe(0);

      // Completion: at the start of a new line, "too" offers the document's key "tools"; Enter takes it.
      await page.locator(".cm-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type("too");
      const option = page.locator(".cm-tooltip-autocomplete").getByRole("option", { name: "tools", exact: true });
      await option.waitFor();
      await ui.shot(page, `editor-completion-${width}`);
      await page.keyboard.press("Enter");
      await expect.poll(() => editor.innerText()).toMatch(/\ntools: ?$/);

      // Hover on a key: its description from the schema.
      await page.locator(".cm-line", { hasText: "instruction:" }).getByText("instruction").hover();
      await page.locator(".cm-schema-hover").waitFor();
      expect(await page.locator(".cm-schema-hover").textContent()).toContain("The system instruction the model works under.");
      expect(await sidewaysOverflow(page)).toBe(0);
      await page.context().close();
    });
  }
});

describe("accessibility", () => {
  it("the agent page and the editor have no serious or critical axe-core violation in either theme", async () => {
    const project = await agentProject(ui.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "lookup_invoice", input: { number: "INV-2" } }] });
    const agentId = await launch(ui.api, project, await createConfig(ui.api, project, yamlConfig(project, ASK)), "Look up **INV-2**.");
    await eventually(async () => (await ui.api.get(`${project.base}/agents/${agentId}/interactions?state=open`, { token: project.token })).body.data.length, (n) => n === 1, 60_000);
    await send(ui.api, project, agentId, "and then INV-3");
    for (const theme of ["light", "dark"] as const) {
      const page = await openAgent(project, agentId, 1280, theme);
      await page.getByRole("list", { name: "Timeline" }).getByRole("form", { name: /lookup_invoice/ }).waitFor();
      await page.getByRole("list", { name: "Backlog" }).getByText("and then INV-3").waitFor();
      await page.locator("details.tool-call summary").first().click();
      expect(await violations(page), `agent page, ${theme}`).toEqual([]);
      await ui.shot(page, `agent-${theme}-1280`);

      await page.goto(`/orgs/${project.orgId}/projects/${project.projectId}/launch`);
      await page.locator(".cm-content").waitFor();
      await expectText(page, "svc finds no problem in this config.");
      expect(await violations(page), `launch editor, ${theme}`).toEqual([]);
      await ui.shot(page, `editor-${theme}-1280`);
      await page.context().close();
    }
  });
});

/** Replaces the editor's text as a person would: select all, then type (inserted as one input). */
async function replaceText(page: Page, text: string): Promise<void> {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
  await expect.poll(() => page.locator(".cm-content").innerText()).toContain(text.split("\n")[0]!);
  expect((await page.locator(".cm-content").innerText()).split("version: v1").length).toBe(2);
}

/** The focused element's name: its aria-label, its label's text, or its own text. */
function focused(page: Page): Promise<string> {
  return page.evaluate<string>(
    `(() => { const el = document.activeElement; if (!el) return ""; return (el.getAttribute("aria-label") || (el.closest("label") && el.closest("label").textContent) || el.textContent || "").trim(); })()`,
  );
}

/** axe-core's serious and critical violations on the page: rule id, and the first offending element. */
async function violations(page: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the console's CSP refuses inline scripts, and rightly so.
  await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
  const found = await page.evaluate<Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>>(`axe.run(document).then((r) => r.violations)`);
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
