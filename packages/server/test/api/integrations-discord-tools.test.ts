import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { GatewayManager } from "../../src/modules/integrations/kinds/discord/gateway-manager.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, send, untilEvents } from "../support/agent-loop.js";
import { startFakeDiscord } from "../support/fake-discord.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { connectDiscord, gatewayOpen, mentionBot, startGateways } from "./integrations-discord-fixtures.js";

/*
 * The discord_thread tools (reference docs: integrations/discord, "Thread tools and subscriptions"): an
 * agent a mention launched reads and posts in its thread through the fake Discord's REST API. The Gateway
 * manager kicks the receipt processor itself: no test drives it.
 */

const discord = await startFakeDiscord();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_DISCORD_API_URL: discord.apiUrl }, { worker: true });
const provider = useFakeProvider();
let gateways: GatewayManager | undefined;
beforeAll(() => void (gateways = startGateways(server, discord)));
afterAll(async () => {
  await gateways?.stop();
  await discord.close();
});
beforeEach(() => discord.reset());

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");

/**
 * A project whose Discord integration `chat` launches a profile on the fake provider's model; `configRest`,
 * given the project, prepares what the profile's config needs and answers the config's extra sections.
 */
async function discordProject(configRest: (p: AgentProject) => Promise<string> = async () => "") {
  const p = await agentProject(server.api, provider.baseUrl);
  const auth = { token: p.token };
  const config = await createConfig(server.api, p, yamlConfig(p, await configRest(p)));
  const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "helper", config }, auth);
  expect(profile.status, profile.text).toBe(201);
  const { bot, path } = await connectDiscord(server, discord, p, "chat", [profile.body.id]);
  await gatewayOpen(discord, bot);
  /** Mentions the bot (the thread is the mention's id) and answers the agent it launched; `before` runs as soon as the thread is known. */
  const mention = async (text: string, before: (threadId: string) => void = () => undefined) => {
    const threadId = mentionBot(discord, bot, text);
    before(threadId);
    const [agent] = await eventually(() => collectPages(server.api, `${p.base}/agents`, auth), (rows) => rows.length === 1, 30_000);
    return { agentId: agent.id as string, threadId };
  };
  return { p, auth, path, bot, mention };
}

/** A memory store `name` of the project holding `files` (path to content). */
async function memoryStore(project: AgentProject, name: string, files: Record<string, string>): Promise<void> {
  const auth = { token: project.token };
  const store = await server.api.post(`${project.base}/memory-stores`, { name }, auth);
  expect(store.status, store.text).toBe(201);
  for (const [path, content] of Object.entries(files)) {
    const put = await server.api.put(`${project.base}/memory-stores/${store.body.id}/memories`, { path, content }, auth);
    expect(put.status, put.text).toBe(201);
  }
}

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");

describe("integrations: Discord thread tools", () => {
  it("a mention-launched agent posts in its thread with int__chat__post_message, with an artifact uploaded as an attachment", async () => {
    const { p, auth, mention } = await discordProject();
    provider.script({ text: "reading" });
    const { agentId, threadId } = await mention("draw the chart");
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    provider.script({ text: "got the chart" });
    const sent = await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "media", media_type: "image/png", data: PNG.toString("base64"), filename: "chart.png" }], delivery_mode: "queued" }, auth);
    expect(sent.status, sent.text).toBe(201);
    const artifactId = sent.body.agent_input.content_blocks[0].artifact_id as string;
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2);
    provider.script({ toolCalls: [{ name: "int__chat__post_message", input: { content: "Here is the chart @everyone", artifact_ids: [artifactId] } }] }, { text: "posted" });
    await send(server.api, p, agentId, "post it");
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 3));
    expect(result.outcome, JSON.stringify(result)).toBe("succeeded");

    // One multipart upload: payload_json names the file part it carries, and nobody is pinged.
    expect(discord.posted).toHaveLength(1);
    const [posted] = discord.posted;
    expect(posted).toMatchObject({
      channelId: threadId,
      body: { content: "Here is the chart @everyone", allowed_mentions: { parse: [] }, attachments: [{ id: 0, filename: "chart.png" }] },
    });
    expect(posted!.files).toEqual([{ field: "files[0]", filename: "chart.png", contentType: "image/png", bytes: PNG }]);
    expect(result.content_blocks[0].value).toEqual({ message_id: posted!.id, channel_id: threadId, thread_id: threadId });
  });

  it("post_message attaches a memory file by its path as a text attachment; a glob or a store not attached posts nothing", async () => {
    const { p, mention } = await discordProject(async (project) => {
      await memoryStore(project, "team", { "docs/runbook.md": "Restart the worker.\n" });
      await memoryStore(project, "private", { "keys.md": "none" });
      return "memory:\n  - store: team\n    access: read_only\n";
    });
    const post = (paths: string[]) => ({ toolCalls: [{ name: "int__chat__post_message", input: { content: "the runbook", paths } }] });
    provider.script(post(["/memory/team/docs/*"]), post(["/memory/private/keys.md"]), post(["/memory/team/docs/runbook.md"]), { text: "posted" });
    const { agentId, threadId } = await mention("share the runbook");
    const results = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(results.map((r) => r.outcome)).toEqual(["failed", "failed", "succeeded"]);
    expect(results[0].content_blocks[0].text).toContain("expands no globs");
    expect(results[1].content_blocks[0].text).toContain('No memory store "private" is attached to this agent');
    // Only the third call posted: one multipart upload carrying the memory file's UTF-8 bytes.
    expect(discord.posted).toHaveLength(1);
    const [posted] = discord.posted;
    expect(posted).toMatchObject({ channelId: threadId, body: { content: "the runbook", attachments: [{ id: 0, filename: "runbook.md" }] } });
    expect(posted!.files).toEqual([{ field: "files[0]", filename: "runbook.md", contentType: "text/plain; charset=utf-8", bytes: Buffer.from("Restart the worker.\n", "utf8") }]);
  });

  it("int__chat__read pages back through the assigned thread, newest first, with only the members an agent reads", async () => {
    const { p, mention } = await discordProject();
    const author = (id: string, username: string, bot = false) => ({ id, username, bot, avatar: "abc", discriminator: "0" });
    provider.script({ toolCalls: [{ name: "int__chat__read", input: { limit: 2 } }] }, { text: "more" });
    const { agentId, threadId } = await mention("what happened?", (thread) =>
      discord.history.set(thread, [
        { id: "900000000000000003", content: "second reply", author: author("523456789012345678", "other"), timestamp: "2026-01-01T10:03:00.000000+00:00", attachments: [{ id: "1", filename: "log.txt", url: "https://cdn.example/log.txt" }], tts: false },
        { id: "900000000000000002", content: "first reply", author: author("623456789012345678", "svc-bot", true), timestamp: "2026-01-01T10:02:00.000000+00:00", attachments: [] },
        { id: "900000000000000001", content: "the question", author: author("423456789012345678", "asker"), timestamp: "2026-01-01T10:01:00.000000+00:00", attachments: [] },
      ]),
    );
    const first = toolResults(await untilEvents(server.api, p, agentId, (e) => toolResults(e).length === 1))[0];
    expect(first.outcome, JSON.stringify(first)).toBe("succeeded");
    expect(first.content_blocks[0].value).toEqual({
      messages: [
        { id: "900000000000000003", content: "second reply", author: { id: "523456789012345678", username: "other", bot: false }, timestamp: "2026-01-01T10:03:00.000000+00:00", attachments: [{ filename: "log.txt" }] },
        { id: "900000000000000002", content: "first reply", author: { id: "623456789012345678", username: "svc-bot", bot: true }, timestamp: "2026-01-01T10:02:00.000000+00:00", attachments: [] },
      ],
      next_before: "900000000000000002",
    });
    provider.script({ toolCalls: [{ name: "int__chat__read", input: { limit: 2, before: "900000000000000002" } }] }, { text: "done" });
    await send(server.api, p, agentId, "read on");
    const second = toolResults(await untilEvents(server.api, p, agentId, (e) => toolResults(e).length === 2))[1];
    expect(second.content_blocks[0].value.messages.map((m: any) => m.content)).toEqual(["the question"]);
    expect(second.content_blocks[0].value).not.toHaveProperty("next_before");
    const reads = discord.calls.filter((call) => call.method === "GET" && call.path === `/channels/${threadId}/messages`);
    expect(reads.map((call) => call.query)).toEqual(["limit=2", "limit=2&before=900000000000000002"]);
  });

  it("a Discord 429 is a tool error naming Discord's retry delay, also as the integration's runtime_failure", async () => {
    const { p, auth, path, mention } = await discordProject();
    provider.script({ text: "hello" });
    const { agentId } = await mention("hi");
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    discord.rateLimit(1, 42, "POST");
    provider.script({ toolCalls: [{ name: "int__chat__post_message", input: { content: "hello" } }] }, { text: "later" });
    await send(server.api, p, agentId, "say hello");
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2));
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toMatch(/retry after 42 seconds.*Try again in 42 seconds/);
    expect(discord.posted).toEqual([]);
    const failure = (await server.api.get(path, auth)).body.runtime_failure;
    expect(failure).toEqual({ message: expect.stringContaining("rate limiting"), retry_at: expect.any(String) });
  });

  it("a bucket Discord says is spent is not called again until its reset: the tool error names the delay", async () => {
    const { p, mention } = await discordProject();
    provider.script({ text: "hello" });
    const { agentId, threadId } = await mention("hi");
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    discord.spendBucket("POST", /\/messages$/, 299.2);
    const post = (content: string) => ({ toolCalls: [{ name: "int__chat__post_message", input: { content } }] });
    provider.script(post("first"), post("second"), { text: "later" });
    await send(server.api, p, agentId, "say it twice");
    const results = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2));
    expect(results.map((result) => result.outcome)).toEqual(["succeeded", "failed"]);
    const seconds = Number(/retry after (\d+) seconds/.exec(results[1].content_blocks[0].text)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(300);
    expect(discord.posted.map((message) => message.body["content"])).toEqual(["first"]);
    expect(discord.calls.filter((call) => call.method === "POST" && call.path === `/channels/${threadId}/messages`)).toHaveLength(1);
  });

  it("an agent with no assigned conversation gets a tool error, and Discord is not called", async () => {
    const { p } = await discordProject();
    discord.reset();
    const config = await createConfig(server.api, p, yamlConfig(p, "tools:\n  int__chat__post_message: {}\n"));
    provider.script({ toolCalls: [{ name: "int__chat__post_message", input: { content: "hello" } }] }, { text: "gave up" });
    const agentId = await launch(server.api, p, config, "post hello");
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain("this agent has no assigned conversation for chat");
    expect(discord.calls).toEqual([]);
  });
});
