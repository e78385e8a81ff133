import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { agentInputs, integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, send, untilEvents } from "../support/agent-loop.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { collectPages } from "../support/paging.js";
import { eventCallback, postSlackAction, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
// No maintenance runs here: a routed interaction is posted as soon as its receipt is stored (announced on commit).
const server = useTestServer(
  { SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl },
  { worker: true },
);
const provider = useFakeProvider();
afterAll(() => slack.close());

const SIGNING_SECRET = "signing-SENTINEL";
const CHANNEL = "C0ASKING1";
const askFirst = "  ask_question:\n    permission:\n      mode: always_ask\n";

/** A connected Slack integration `eng` whose launcher offers one profile routing its interactions to `eng`, with these `tools`. */
async function askingLauncher(p: AgentProject, tools = askFirst) {
  const auth = { token: p.token };
  const created = await server.api.post(`${p.base}/integrations`, { name: "eng", integration_kind: "slack_thread", settings: {} }, auth);
  expect(created.status, created.text).toBe(201);
  const path = `${p.base}/integrations/${created.body.id}`;
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  expect((await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth)).status).toBe(200);
  const config = await createConfig(server.api, p, yamlConfig(p, `interaction_handlers:\n  eng: {}\ntools:\n${tools}`));
  const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "asker", config }, auth);
  expect(profile.status, profile.text).toBe(201);
  const put = await server.api.put(path, { settings: { launcher: { profiles: [profile.body.id] } } }, auth);
  expect(put.status, put.text).toBe(200);
  const integrationId = decodeId("integration", created.body.id)!;
  const receipts = () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId));
  const settled = (count: number) =>
    eventually(
      receipts,
      (rows) => rows.length === count && rows.every((row) => row.state === "processed"),
      60_000,
    );
  return { auth, bot, settled, receipts };
}

describe("integrations: questions and approvals in the Slack thread", () => {
  it("refuses interaction_handlers naming no integration of the project, a kind without a handler, or arguments the handler does not take", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const auth = { token: p.token };
    expect((await server.api.post(`${p.base}/integrations`, { name: "eng", integration_kind: "slack_thread", settings: {} }, auth)).status).toBe(201);
    expect((await server.api.post(`${p.base}/integrations`, { name: "reviews", integration_kind: "github_pr" }, auth)).status).toBe(201);
    const source = yamlConfig(p, "interaction_handlers:\n  nowhere: {}\n  reviews: {}\n  eng: {channel: C1}\n");
    const reply = await server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, auth);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    const issues = reply.body.issues as Array<{ path: string; message: string; line?: number }>;
    expect(issues.map((issue) => [issue.path, issue.message])).toEqual([
      ["/interaction_handlers/nowhere", 'no integration named "nowhere" in this project'],
      ["/interaction_handlers/reviews", 'integration "reviews" (github_pr) has no interaction handler'],
      ["/interaction_handlers/eng", "handler arguments do not match the slack_thread interaction handler: /channel: unknown field"],
    ]);
    expect(issues.every((issue) => typeof issue.line === "number")).toBe(true);
    const notObject = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p, "interaction_handlers:\n  eng: 3\n"), source_format: "yaml" }, auth);
    expect(notObject.body.issues).toEqual([expect.objectContaining({ path: "/interaction_handlers/eng", message: "must be an object of handler arguments ({} for the shipped handlers); got 3" })]);
  });

  it("posts an approval and then a question in the thread of an agent launched from a mention; the first clicks answer them, later and forged clicks change nothing", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const { auth, bot, settled } = await askingLauncher(p);
    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "blue" }, { label: "green" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "green it is" });
    const mention = { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> pick a colour`, ts: "1700000900.000100", channel: CHANNEL };
    expect((await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention))).status).toBe(200);
    const [agent] = await eventually(() => collectPages(server.api, `${p.base}/agents`, auth), (rows) => rows.length === 1);
    const interactions = `${p.base}/agents/${agent.id}/interactions`;
    const listed = async () => (await server.api.get(interactions, auth)).body.data as any[];

    // The mention's receipt, then the approval's.
    await settled(2);
    const [approval] = await listed();
    expect(approval).toMatchObject({ state: "open", interaction_kind: "permission" });
    expect(slack.thread.posted).toHaveLength(1);
    const first = slack.thread.posted[0]!;
    expect(first).toMatchObject({ channel: CHANNEL, thread_ts: "1700000900.000100", user: bot.botUserId });
    expect(first.text).toContain("Allow ask_question to run with this input?");
    const allowDeny = buttonsOf(first);
    expect(allowDeny.map((button) => [button.text.text, button.style])).toEqual([
      ["Allow", "primary"],
      ["Deny", "danger"],
    ]);
    const click = (message: { ts: string; thread_ts?: string }, button: any, user: string, actionTs: string, signature?: string) =>
      postSlackAction(
        server.url,
        SIGNING_SECRET,
        {
          type: "block_actions",
          team: { id: bot.teamId },
          api_app_id: bot.appId,
          user: { id: user },
          container: { type: "message", channel_id: CHANNEL, message_ts: message.ts, thread_ts: message.thread_ts },
          channel: { id: CHANNEL },
          actions: [{ type: "button", action_id: button.action_id, value: button.value, action_ts: actionTs }],
        },
        signature ? { signature } : {},
      );

    // A forged click is refused before anything is stored.
    expect((await click(first, allowDeny[0], "U0FORGER1", "1700000901.000001", "v0=" + "0".repeat(64))).status).toBe(401);
    expect((await listed())[0].state).toBe("open");

    expect((await click(first, allowDeny[0], "U0APPROVER", "1700000902.000001")).status).toBe(200);
    // The click, then the question the approved call opened.
    await settled(4);
    expect(slack.thread.posted).toHaveLength(2);
    const second = slack.thread.posted[1]!;
    expect(second.text).toContain("Which colour?");
    const options = buttonsOf(second);
    expect(options.map((button) => button.text.text)).toEqual(["blue", "green", "Other"]);
    expect((await click(second, options[1], "U0ANSWERER", "1700000903.000001")).status).toBe(200);
    await settled(5);

    const list = await untilEvents(server.api, p, agent.id, (e) => finalOutputs(e).length === 1);
    expect(list.find((e) => e.event_kind === "tool_result")).toMatchObject({
      outcome: "succeeded",
      content_blocks: [{ type: "structured_data", value: { answers: [{ question: "Which colour?", selected: ["green"] }] } }],
    });
    const settledOnes = await listed();
    const byId = new Map(settledOnes.map((row) => [row.id, row]));
    expect(byId.get(approval.id)).toMatchObject({ state: "resolved", resolution: { answers: [{ option_indices: [0] }] } });
    // Each answer is attributed to its clicker's integration actor.
    const actors = (await server.api.get(`${p.base}/actors?provider=integration`, auth)).body.data as any[];
    for (const [row, user] of [
      [byId.get(approval.id), "U0APPROVER"],
      [settledOnes.find((row) => row.interaction_kind === "question"), "U0ANSWERER"],
    ]) {
      const [input] = await server.db.read.select().from(agentInputs).where(eq(agentInputs.id, decodeId("agentInput", row.resolved_by_input_id)!));
      expect(input).toMatchObject({ inputKind: "interaction_response" });
      const actor = actors.find((candidate) => decodeId("actor", candidate.id) === input!.actorId);
      expect(actor).toMatchObject({ provider_tenant_id: bot.teamId, provider_user_id: user });
    }

    // Someone else's later Deny is too late: the answer stands, and the message says it is settled.
    expect((await click(first, allowDeny[1], "U0LATECOMER", "1700000904.000001")).status).toBe(200);
    await settled(6);
    expect(byId.get(approval.id)).toMatchObject((await listed()).find((row) => row.id === approval.id));
    expect(slack.thread.updated).toEqual([{ channel: CHANNEL, ts: first.ts }]);
    expect(slack.thread.posted).toHaveLength(2);
  });
});

describe("integrations: what agents ask in Slack is what they mean to ask", () => {
  it("escapes the agent's words in a prompt, so a question cannot notify the channel or hide a link", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const { bot, settled } = await askingLauncher(p, "  ask_question: {}\n");
    const prompt = "<!here> pick <https://evil.example|a colour> & go";
    provider.script({ toolCalls: [{ name: "ask_question", input: { questions: [{ prompt, options: [{ label: "blue" }] }] } }] }, { text: "ok" });
    const thread = "1700000980.000100";
    const mention = { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> ask me`, ts: thread, channel: CHANNEL };
    expect((await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention))).status).toBe(200);
    await settled(2);
    const posted = slack.thread.posted.filter((message) => message.thread_ts === thread);
    expect(posted).toHaveLength(1);
    const escaped = "&lt;!here&gt; pick &lt;https://evil.example|a colour&gt; &amp; go";
    expect(posted[0]!.text).toContain(escaped);
    expect(posted[0]!.text).not.toContain("<!here>");
    expect((posted[0]!.blocks as any[])[0].text.text).toContain(escaped);
  });
});

describe("integrations: automatic handler selection", () => {
  it("keeps an interaction off Slack once a console or API message was the last admitted input", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const { auth, bot, settled, receipts } = await askingLauncher(p);
    provider.script({ text: "hello" }, { toolCalls: [{ name: "ask_question", input: { questions: [{ prompt: "Sure?", options: [{ label: "yes" }] }] } }] });
    const mention = { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> hi`, ts: "1700000950.000100", channel: CHANNEL };
    expect((await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention))).status).toBe(200);
    const [agent] = await eventually(() => collectPages(server.api, `${p.base}/agents`, auth), (rows) => rows.length === 1);
    await untilEvents(server.api, p, agent.id, (e) => finalOutputs(e).length === 1);
    await send(server.api, p, agent.id, "ask me something");
    const interactions = `${p.base}/agents/${agent.id}/interactions`;
    await eventually(() => server.api.get(interactions, auth), (reply) => reply.body.data?.length === 1);
    // Routing happens in the interaction's own transaction: no receipt beside the mention's means no post.
    await settled(1);
    expect((await receipts()).map((row) => row.eventKind)).toEqual(["app_mention"]);
    expect(slack.thread.posted.filter((message) => message.thread_ts === "1700000950.000100")).toEqual([]);
  });
});

describe("integrations: the interaction handler tools", () => {
  it("lists the configured handlers with the selection, and sets and pins it; an unknown handler fails the call", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const created = await server.api.post(`${p.base}/integrations`, { name: "eng", integration_kind: "slack_thread", settings: {} }, { token: p.token });
    expect(created.status, created.text).toBe(201);
    const tools = "tools:\n  list_interaction_handlers: {}\n  set_interaction_handler: {}\n";
    const config = await createConfig(server.api, p, yamlConfig(p, `interaction_handlers:\n  eng: {}\n${tools}`));
    provider.script(
      { toolCalls: [{ name: "list_interaction_handlers", input: {} }] },
      { toolCalls: [{ name: "set_interaction_handler", input: { handler: "eng", args: {}, auto_select: false } }] },
      { toolCalls: [{ name: "list_interaction_handlers", input: { limit: 1 } }] },
      { toolCalls: [{ name: "set_interaction_handler", input: { handler: "nope", args: {} } }] },
      { text: "done" },
    );
    const agentId = await launch(server.api, p, config, "route your questions");
    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    const results = list.filter((e) => e.event_kind === "tool_result");
    const handler = { name: "eng", integration_id: created.body.id, integration_kind: "slack_thread", args_schema: { type: "object", properties: {}, additionalProperties: false }, destination: null };
    // An API message was the last input admitted: automatic selection chose the dashboard.
    expect(results.map((result) => [result.outcome, result.content_blocks[0].value ?? result.content_blocks[0].text])).toEqual([
      ["succeeded", { data: [handler], next_cursor: null, selected: null, auto_select: true }],
      ["succeeded", { selected: "eng", auto_select: false }],
      ["succeeded", { data: [handler], next_cursor: null, selected: "eng", auto_select: false }],
      ["failed", 'No interaction handler named "nope"; list_interaction_handlers names them.'],
    ]);
  });
});

function buttonsOf(message: { blocks: unknown }): any[] {
  return (message.blocks as any[]).find((block) => block.type === "actions").elements as any[];
}
