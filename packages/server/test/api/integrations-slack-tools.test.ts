import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { collectPages } from "../support/paging.js";
import { eventCallback, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl }, { worker: true });
const provider = useFakeProvider();
afterAll(() => slack.close());
beforeEach(() => slack.reset());

const CHANNEL = "C0TOOLS01";
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");

/**
 * A connected Slack integration `eng` launching a profile on the fake provider's model; `configRest`, given
 * the project, prepares what the profile's config needs and answers the config's extra sections.
 */
async function slackProject(configRest: (p: AgentProject) => Promise<string> = async () => "") {
  const p = await agentProject(server.api, provider.baseUrl);
  const auth = { token: p.token };
  const integration = await createIntegration(server.api, { integrations: `${p.base}/integrations`, token: p.token }, "eng");
  const path = `${p.base}/integrations/${integration.id}`;
  const config = await createConfig(server.api, p, yamlConfig(p, await configRest(p)));
  const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "helper", config }, auth);
  expect(profile.status, profile.text).toBe(201);
  expect((await server.api.put(path, { settings: { launcher: { profiles: [profile.body.id] } } }, auth)).status).toBe(200);
  const bot = slack.addBot();
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: await slackSecret(server.api, p, bot.token) }, auth);
  expect(setup.status, setup.text).toBe(200);
  const integrationId = decodeId("integration", integration.id)!;
  /** Mentions the bot at `ts` (a new thread) and answers the agent it launched. */
  const mention = async (ts: string, text = "go") => {
    const event = eventCallback(bot, { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> ${text}`, ts, channel: CHANNEL });
    expect((await postSlackEvent(server.url, "signing-SENTINEL", event)).status).toBe(200);
    await eventually(
      () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId)),
      (rows) => rows.length > 0 && rows.every((row) => row.state === "processed"),
      30_000,
    );
    const agents = (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
    return agents[0].id as string;
  };
  return { p, auth, path, bot, mention };
}

/** A memory store `name` of the project holding `files` (path to content); answers its id. */
async function memoryStore(project: AgentProject, name: string, files: Record<string, string>): Promise<string> {
  const auth = { token: project.token };
  const store = await server.api.post(`${project.base}/memory-stores`, { name }, auth);
  expect(store.status, store.text).toBe(201);
  for (const [path, content] of Object.entries(files)) {
    const put = await server.api.put(`${project.base}/memory-stores/${store.body.id}/memories`, { path, content }, auth);
    expect(put.status, put.text).toBe(201);
  }
  return store.body.id as string;
}

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");
const slackCalls = (method: string) => slack.calls.filter((call) => call.method === method);
/** The calls a post makes: its sends and the thread reads that check a lost one. */
const postingCalls = () => slack.calls.filter((call) => call.method === "chat.postMessage" || call.method === "conversations.replies");

describe("integrations: Slack thread tools", () => {
  it("a mention-launched agent posts in its thread with int__eng__post_message, with an artifact uploaded as a file", async () => {
    const { p, auth, mention } = await slackProject();
    provider.script({ text: "reading" });
    const agentId = await mention("1700001000.000100");
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    provider.script({ text: "got the chart" });
    const sent = await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "media", media_type: "image/png", data: PNG.toString("base64"), filename: "chart.png" }], delivery_mode: "queued" }, auth);
    expect(sent.status, sent.text).toBe(201);
    const artifactId = sent.body.agent_input.content_blocks[0].artifact_id as string;
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2);
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "Here is the chart", artifact_ids: [artifactId] } }] }, { text: "posted" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "post it" }], delivery_mode: "queued" }, auth);
    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 3);
    const [result] = toolResults(list);
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    // One message: the file shared into the thread with the text as its comment, never the text alone first.
    const fileId = slack.thread.files[0]!.id;
    expect(slack.thread.posted.filter((m) => m.thread_ts === "1700001000.000100")).toEqual([expect.objectContaining({ channel: CHANNEL, text: "Here is the chart", files: [fileId] })]);
    expect(slackCalls("chat.postMessage")).toEqual([]);
    expect(slack.thread.files).toEqual([expect.objectContaining({ filename: "chart.png", length: PNG.length, bytes: PNG, channel: CHANNEL, thread_ts: "1700001000.000100" })]);
    expect(result.content_blocks[0].value).toEqual({ channel_id: CHANNEL, thread_ts: "1700001000.000100", file_ids: [fileId] });
  });

  it("post_message attaches memory files and artifacts by exact path (reference: send_integration_message's paths)", async () => {
    let storeId = "";
    const { p, auth, mention } = await slackProject(async (project) => {
      storeId = await memoryStore(project, "notes", { "reports/weekly.md": "# Week 48\n\nAll green.\n" });
      return "memory:\n  - store: notes\n    access: read_only\n";
    });
    const thread = "1700001050.000100";
    provider.script({ text: "reading" });
    const agentId = await mention(thread);
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    provider.script({ text: "got it" });
    const sent = await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "media", media_type: "image/png", data: PNG.toString("base64"), filename: "chart.png" }], delivery_mode: "queued" }, auth);
    expect(sent.status, sent.text).toBe(201);
    const artifactId = sent.body.agent_input.content_blocks[0].artifact_id as string;
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2);
    const paths = ["/memory/notes/reports/weekly.md", `/artifacts/${artifactId}`];
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "The weekly report", paths } }] }, { text: "posted" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "post it" }], delivery_mode: "queued" }, auth);
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 3));
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    const report = Buffer.from("# Week 48\n\nAll green.\n", "utf8");
    expect(slack.thread.files).toEqual([
      expect.objectContaining({ filename: "weekly.md", length: report.length, bytes: report, thread_ts: thread }),
      expect.objectContaining({ filename: "chart.png", length: PNG.length, bytes: PNG, thread_ts: thread }),
    ]);
    const fileIds = slack.thread.files.map((file) => file.id);
    expect(slack.thread.posted.filter((m) => m.thread_ts === thread)).toEqual([expect.objectContaining({ text: "The weekly report", files: fileIds })]);
    // Reading memory to send it is not a change: the file is still at its first version.
    const [memory] = (await server.api.get(`${p.base}/memory-stores/${storeId}/memories`, auth)).body.data;
    const versions = await server.api.get(`${p.base}/memory-stores/${storeId}/memories/${memory.id}/versions`, auth);
    expect(versions.body.data.map((v: any) => v.version)).toEqual([1]);
  });

  it("post_message refuses a glob, a store not attached, a missing memory file and more than 20 files, and posts nothing", async () => {
    const { p, mention } = await slackProject(async (project) => {
      await memoryStore(project, "notes", { "a.md": "a" });
      await memoryStore(project, "secrets", { "b.md": "b" });
      return "memory:\n  - store: notes\n    access: read_write\n";
    });
    const post = (paths: string[]) => ({ name: "int__eng__post_message", input: { text: "files", paths } });
    const many = Array.from({ length: 15 }, (_, i) => `/memory/notes/f${i}.md`);
    const artifactIds = Array.from({ length: 6 }, (_, i) => `art_${"a".repeat(25)}${"bcdefg"[i]}`);
    provider.script(
      { toolCalls: [post(["/memory/notes/*.md"]), post(["/memory/notes/a.md", "/memory/secrets/b.md"]), post(["/memory/notes/missing.md"])] },
      { toolCalls: [{ name: "int__eng__post_message", input: { text: "files", paths: many, artifact_ids: artifactIds } }] },
      { text: "could not" },
    );
    const agentId = await mention("1700001060.000100");
    const results = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(results.map((r) => r.outcome)).toEqual(["failed", "failed", "failed", "failed"]);
    const texts = results.map((r) => r.content_blocks[0].text as string);
    // The first step's three calls run as one batch, whose results are recorded in no set order.
    const batch = texts.slice(0, 3);
    for (const expected of [
      "is a pattern; int__eng__post_message attaches individual files and expands no globs",
      'No memory store "secrets" is attached to this agent; its stores are notes',
      "No file /memory/notes/missing.md exists",
    ]) {
      expect(batch.filter((text) => text.includes(expected)), expected).toHaveLength(1);
    }
    expect(texts[3]).toContain("a message carries at most 20 files; got 21");
    for (const text of texts) expect(text).toMatch(/nothing was posted/i);
    expect(slack.thread.files).toEqual([]);
    expect(slackCalls("files.getUploadURLExternal")).toEqual([]);
    expect(slackCalls("files.completeUploadExternal")).toEqual([]);
    expect(slackCalls("chat.postMessage")).toEqual([]);
  });

  it("int__eng__read pages through the assigned thread, oldest first", async () => {
    const { p, mention } = await slackProject();
    const thread = "1700001100.000100";
    slack.thread.addMessages(CHANNEL, thread, [
      { ts: thread, user: "U0ASKER01", text: "the question" },
      { ts: "1700001100.000200", user: "U0OTHER01", text: "first reply" },
      { ts: "1700001100.000300", user: "U0ASKER01", text: "second reply" },
    ]);
    provider.script({ toolCalls: [{ name: "int__eng__read", input: { limit: 2 } }] }, { text: "more" });
    const agentId = await mention(thread);
    const first = toolResults(await untilEvents(server.api, p, agentId, (e) => toolResults(e).length === 1))[0];
    expect(first.outcome).toBe("succeeded");
    const page = first.content_blocks[0].value;
    expect(page.messages.map((m: any) => m.text)).toEqual(["the question", "first reply"]);
    expect(page.next_cursor).toEqual(expect.any(String));
    provider.script({ toolCalls: [{ name: "int__eng__read", input: { limit: 2, cursor: page.next_cursor } }] }, { text: "done" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "read on" }], delivery_mode: "queued" }, { token: p.token });
    const second = toolResults(await untilEvents(server.api, p, agentId, (e) => toolResults(e).length === 2))[1];
    expect(second.content_blocks[0].value).toEqual({ messages: [{ ts: "1700001100.000300", user: "U0ASKER01", text: "second reply" }] });
    expect(slackCalls("conversations.replies").map((call) => [call.args["channel"], call.args["ts"], call.args["limit"]])).toEqual([
      [CHANNEL, thread, "2"],
      [CHANNEL, thread, "2"],
    ]);
  });

  it("an agent with no assigned conversation gets a tool error, and Slack is not called", async () => {
    const { p } = await slackProject();
    slack.reset();
    const config = await createConfig(server.api, p, yamlConfig(p, "tools:\n  int__eng__post_message: {}\n"));
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "hello" } }] }, { text: "gave up" });
    const agentId = await launch(server.api, p, config, "post hello");
    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("this agent has no assigned conversation for eng");
    expect(slack.calls).toEqual([]);
  });

  it("a Slack 500 on every send is a tool error that says when to retry, and sets the integration's runtime_failure", async () => {
    const { p, auth, path, mention } = await slackProject();
    slack.failNext("chat.postMessage", 500, { times: 3 });
    slack.thread.addMessages(CHANNEL, "1700001200.000100", [{ ts: "1700001200.000100", user: "U0ASKER01", text: "go" }]);
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "hello" } }] }, { text: "will retry" });
    const agentId = await mention("1700001200.000100");
    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toMatch(/HTTP 500.*Try again in 60 seconds/);
    expect(slack.thread.posted.filter((m) => m.text === "hello")).toEqual([]);
    // Each lost answer was read back (nothing found) before the next send; three sends in all.
    expect(postingCalls().map((call) => [call.method, call.status])).toEqual(Array(3).fill([["chat.postMessage", 500], ["conversations.replies", 200]]).flat());
    const integration = await server.api.get(path, auth);
    expect(integration.body.runtime_failure).toEqual({ message: expect.stringContaining("chat.postMessage"), retry_at: expect.any(String) });
  });

  it("after the integration is deleted, a call of its tool is a tool error and the agent goes on", async () => {
    const { p, auth, path, mention } = await slackProject();
    provider.script({ text: "hello" });
    const agentId = await mention("1700001300.000100");
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    const deleted = await server.api.delete(path, auth);
    expect(deleted.status, deleted.text).toBe(204);
    slack.reset();
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "still there?" } }] }, { text: "it is gone" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "post" }], delivery_mode: "queued" }, auth);
    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("the integration it names no longer exists");
    expect(slack.calls).toEqual([]);
  });

  it("a Slack 429 is a tool error that passes on Slack's Retry-After, also as the runtime_failure's retry_at", async () => {
    const { p, auth, path, mention } = await slackProject();
    slack.rateLimitNext("conversations.replies", 120);
    provider.script({ toolCalls: [{ name: "int__eng__read", input: {} }] }, { text: "later" });
    const agentId = await mention("1700001400.000100");
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("Try again in 120 seconds");
    const failure = (await server.api.get(path, auth)).body.runtime_failure;
    const ahead = (Date.parse(failure.retry_at) - Date.now()) / 1000;
    expect(ahead).toBeGreaterThan(60);
    expect(ahead).toBeLessThanOrEqual(121);
  });

  it("a thread page over 50 KiB is saved whole as an artifact, and the model gets a preview and its path", async () => {
    const { p, auth, mention } = await slackProject();
    const thread = "1700001500.000100";
    const long = "x".repeat(30_000);
    slack.thread.addMessages(CHANNEL, thread, [
      { ts: thread, user: "U0ASKER01", text: long },
      { ts: "1700001500.000200", user: "U0ASKER01", text: long },
    ]);
    provider.script({ toolCalls: [{ name: "int__eng__read", input: {} }] }, { text: "long" });
    const agentId = await mention(thread);
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(result.outcome).toBe("succeeded");
    const marker = result.content_blocks[0].value;
    expect(marker).toMatchObject({ truncated: true, content_type: "text/plain", path: expect.stringMatching(/^\/artifacts\/art_/) });
    expect(marker.preview.length).toBe(8 * 1024);
    const artifactId = marker.path.slice("/artifacts/".length);
    const saved = await server.api.get(`${p.base}/agents/${agentId}/artifacts/${artifactId}/content`, auth);
    expect(JSON.parse(saved.text).messages.map((m: any) => m.text.length)).toEqual([30_000, 30_000]);
    expect(Buffer.byteLength(saved.text)).toBe(marker.size_bytes);
  });
});

/** Mentions the bot in a new thread at `ts`; the agent posts `text` once; answers the call's result and the thread's messages. */
async function postInNewThread(project: Awaited<ReturnType<typeof slackProject>>, ts: string, text: string) {
  // The mention is the thread's parent in Slack: a read-back lists it.
  slack.thread.addMessages(CHANNEL, ts, [{ ts, user: "U0ASKER01", text: "go" }]);
  provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text } }] }, { text: "done" });
  const agentId = await project.mention(ts);
  const [result] = toolResults(await untilEvents(server.api, project.p, agentId, (e) => finalOutputs(e).length === 1));
  return { result, posted: slack.thread.posted.filter((m) => m.thread_ts === ts) };
}

describe("integrations: Slack posts as the reference makes them", () => {
  it("retries a rate-limited post inside the call after Slack's Retry-After, never before it, and posts once", async () => {
    const project = await slackProject();
    slack.rateLimitNext("chat.postMessage", 1);
    const { result, posted } = await postInNewThread(project, "1700002000.000100", "after the wait");
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    // The fake refuses every call inside the Retry-After window: an early retry would show as a second 429.
    expect(slackCalls("chat.postMessage").map((call) => call.status)).toEqual([429, 200]);
    expect(posted.map((m) => m.text)).toEqual(["after the wait"]);
    expect(result.content_blocks[0].value.ts).toBe(posted[0]!.ts);
    expect((await server.api.get(project.path, project.auth)).body.runtime_failure).toBeUndefined();
  });

  it("a post whose 5xx came after Slack stored it is found by its metadata marker and not sent again", async () => {
    const project = await slackProject();
    slack.failNext("chat.postMessage", 503, { afterStoring: true });
    const { result, posted } = await postInNewThread(project, "1700002100.000100", "exactly once");
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    expect(posted).toEqual([expect.objectContaining({ text: "exactly once", metadata: { event_type: "svc_post", event_payload: { post_id: expect.any(String) } } })]);
    expect(result.content_blocks[0].value.ts).toBe(posted[0]!.ts);
    const [read] = slackCalls("conversations.replies");
    expect(read!.args).toMatchObject({ channel: CHANNEL, ts: "1700002100.000100", include_all_metadata: "true" });
    expect(postingCalls().map((call) => [call.method, call.status])).toEqual([["chat.postMessage", 503], ["conversations.replies", 200]]);
  });

  it("a post whose answer never came (the connection dropped after Slack stored it) is read back, not sent again", async () => {
    const project = await slackProject();
    slack.dropNext("chat.postMessage");
    const { result, posted } = await postInNewThread(project, "1700002200.000100", "no answer");
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    expect(posted.map((m) => m.text)).toEqual(["no answer"]);
    expect(postingCalls().map((call) => [call.method, call.status])).toEqual([["chat.postMessage", 0], ["conversations.replies", 200]]);
  });

  it("a post Slack lost before storing it is read back, found missing and sent again: one message", async () => {
    const project = await slackProject();
    slack.failNext("chat.postMessage", 502);
    const { result, posted } = await postInNewThread(project, "1700002300.000100", "second send");
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");
    expect(posted.map((m) => m.text)).toEqual(["second send"]);
    expect(postingCalls().map((call) => [call.method, call.status])).toEqual([["chat.postMessage", 502], ["conversations.replies", 200], ["chat.postMessage", 200]]);
  });

  it("a lost post the thread cannot be checked for is not sent again: the model is told to read the thread first", async () => {
    const project = await slackProject();
    slack.failNext("chat.postMessage", 503, { afterStoring: true });
    slack.failNext("conversations.replies", 503);
    const { result, posted } = await postInNewThread(project, "1700002400.000100", "maybe posted");
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("Slack may have posted the message, so read the thread before posting again");
    expect(posted.map((m) => m.text)).toEqual(["maybe posted"]);
    expect(slackCalls("chat.postMessage")).toHaveLength(1);
  });

  it("a Retry-After past the call's budget is a rate_limited tool error with Slack's delay, and nothing is posted", async () => {
    const project = await slackProject();
    slack.rateLimitNext("chat.postMessage", 45);
    const { result, posted } = await postInNewThread(project, "1700002500.000100", "too soon");
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("Try again in 45 seconds");
    expect(posted).toEqual([]);
    expect(slackCalls("chat.postMessage")).toHaveLength(1);
  });

  it("a failed file upload posts nothing, not even the text", async () => {
    const { p, auth, mention } = await slackProject();
    provider.script({ text: "ready" });
    const thread = "1700002600.000100";
    const agentId = await mention(thread);
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    provider.script({ text: "got it" });
    const sent = await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "media", media_type: "image/png", data: PNG.toString("base64"), filename: "chart.png" }], delivery_mode: "queued" }, auth);
    expect(sent.status, sent.text).toBe(201);
    const artifactId = sent.body.agent_input.content_blocks[0].artifact_id as string;
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2);
    slack.failNext("files.getUploadURLExternal", 500);
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "Here is the chart", artifact_ids: [artifactId] } }] }, { text: "failed" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "post it" }], delivery_mode: "queued" }, auth);
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 3));
    expect(result.outcome).toBe("failed");
    expect(slack.thread.posted.filter((m) => m.thread_ts === thread)).toEqual([]);
  });

  it("a cancel during a Retry-After wait ends the wait: nothing is sent after it", async () => {
    const { p, auth, mention } = await slackProject();
    slack.rateLimitNext("chat.postMessage", 3);
    provider.script({ toolCalls: [{ name: "int__eng__post_message", input: { text: "never" } }] }, { text: "canceled" });
    const agentId = await mention("1700002700.000100");
    await eventually(async () => slackCalls("chat.postMessage"), (calls) => calls.length === 1 && calls[0]!.status === 429, 60_000);
    const canceled = await server.api.post(`${p.base}/agents/${agentId}/cancel`, {}, auth);
    expect(canceled.status, canceled.text).toBe(200);
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => toolResults(e).length === 1));
    expect(result.outcome).toBe("canceled");
    // Past the Retry-After (and its margin), a wait that went on would have sent again by now.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(slackCalls("chat.postMessage")).toHaveLength(1);
    expect(slack.thread.posted.filter((m) => m.text === "never")).toEqual([]);
  });
});

describe("integrations: what agents post to Slack is what they mean to post", () => {
  const LOUD = "<!channel> <!here> <!everyone> <!subteam^S0TEAM01> <@U0PERSON1> see <https://evil.example/x|the docs> & <#C0OTHER01>";

  it("escapes mentions, user groups and labelled links by default, so Slack shows them as written", async () => {
    const project = await slackProject();
    const { result, posted } = await postInNewThread(project, "1700003000.000100", LOUD);
    expect(result.outcome).toBe("succeeded");
    expect(posted.map((m) => m.text)).toEqual([
      "&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt; &lt;!subteam^S0TEAM01&gt; &lt;@U0PERSON1&gt; see &lt;https://evil.example/x|the docs&gt; &amp; &lt;#C0OTHER01&gt;",
    ]);
  });

  it("lets mentions and links through when the integration's settings allow them, each on its own", async () => {
    const project = await slackProject();
    const launcher = (await server.api.get(project.path, project.auth)).body.settings.launcher;
    const put = (settings: object) => server.api.put(project.path, { settings: { launcher, ...settings } }, project.auth);
    expect((await put({ allow_mentions: true })).status).toBe(200);
    const mentions = await postInNewThread(project, "1700003100.000100", LOUD);
    expect(mentions.posted.map((m) => m.text)).toEqual(["<!channel> <!here> <!everyone> <!subteam^S0TEAM01> <@U0PERSON1> see &lt;https://evil.example/x|the docs&gt; &amp; <#C0OTHER01>"]);
    expect((await put({ allow_links: true })).status).toBe(200);
    const links = await postInNewThread(project, "1700003200.000100", LOUD);
    expect(links.posted.map((m) => m.text)).toEqual(["&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt; &lt;!subteam^S0TEAM01&gt; &lt;@U0PERSON1&gt; see <https://evil.example/x|the docs> &amp; &lt;#C0OTHER01&gt;"]);
  });

  it("takes allow_mentions and allow_links as booleans in the settings, and refuses anything else", async () => {
    const project = await slackProject();
    const accepted = await server.api.put(project.path, { settings: { allow_mentions: true, allow_links: false } }, project.auth);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.settings).toEqual({ allow_mentions: true, allow_links: false });
    const reply = await server.api.put(project.path, { settings: { allow_mentions: "yes", allow_links: 1 } }, project.auth);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    expect(reply.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(["/settings/allow_links", "/settings/allow_mentions"]);
  });
});
