import { afterAll, describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, requestText, untilEvents } from "../support/agent-loop.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { eventCallback, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl }, { worker: true });
const provider = useFakeProvider();
afterAll(() => slack.close());

const THREAD = { channel_id: "C0STEER01", thread_ts: "1700000700.000100" };
const askFirst = `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_ask\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

describe("integrations: a Slack reply steers a running agent", () => {
  it("cancels the agent's open interaction with the reply's steering input, and the model reads the reply", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const auth = { token: p.token };
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "one" } }] }, { text: "moved on" });
    const agentId = await launch(server.api, p, await createConfig(server.api, p, yamlConfig(p, askFirst)), "go");
    const interactions = `${p.base}/agents/${agentId}/interactions`;
    const open = (await eventually(() => server.api.get(interactions, auth), (reply) => reply.body.data?.length === 1)).body.data[0];
    expect(open.state).toBe("open");

    const created = await server.api.post(`${p.base}/integrations`, { name: "eng", integration_kind: "slack_thread", settings: {} }, auth);
    const path = `${p.base}/integrations/${created.body.id}`;
    const bot = slack.addBot();
    const secretId = await slackSecret(server.api, p, bot.token);
    expect((await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth)).status).toBe(200);
    expect((await server.api.post(`${path}/subscriptions`, { agent_id: agentId, conversation: THREAD }, auth)).status).toBe(201);

    const reply = { type: "message", user: "U0STEER01", text: "never mind, skip the lookup", ts: "1700000700.000200", thread_ts: THREAD.thread_ts, channel: THREAD.channel_id };
    expect((await postSlackEvent(server.url, "signing-SENTINEL", eventCallback(bot, reply))).status).toBe(200);

    const list = await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    expect(list.find((e) => e.event_kind === "tool_result")).toMatchObject({ outcome: "canceled" });
    const settled = (await server.api.get(interactions, auth)).body.data[0];
    expect(settled).toMatchObject({ id: open.id, state: "canceled", resolved_by_input_id: expect.any(String) });
    const steering = list.find((e) => e.event_kind === "agent_input" && e.agent_input_id === settled.resolved_by_input_id);
    expect(steering).toMatchObject({ input_kind: "content", content_blocks: [{ type: "text", text: "never mind, skip the lookup" }] });
    expect(requestText(provider, 1)).toContain("never mind, skip the lookup");
  });
});
