import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { agentConfigs, integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { yamlConfig } from "../support/agents.js";
import { eventually } from "../support/agent-loop.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { collectPages } from "../support/paging.js";
import { eventCallback, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { createIntegrationKinds } from "../../src/modules/integrations/kinds/index.js";
import { SPEC_KINDS } from "../../src/modules/integrations/schemas.js";
import { createIntegration, integrationProject, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl });
afterAll(() => slack.close());

const CHANNEL = "C0DERIVE1";

/** A connected Slack integration `eng` whose launcher starts one profile, made from `tools` (YAML under tools:). */
async function launcherWith(tools: string) {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  // The integration comes first: a config naming its tools compiles only once it exists.
  const integration = await createIntegration(server.api, p, "eng");
  const path = `${p.integrations}/${integration.id}`;
  const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p, tools), source_format: "yaml" }, auth);
  expect([200, 201], config.text).toContain(config.status);
  const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "helper", config: config.body.id }, auth);
  expect(profile.status, profile.text).toBe(201);
  const settings = await server.api.put(path, { settings: { launcher: { profiles: [profile.body.id] } } }, auth);
  expect(settings.status, settings.text).toBe(200);
  const bot = slack.addBot();
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: await slackSecret(server.api, p, bot.token) }, auth);
  expect(setup.status, setup.text).toBe(200);
  const integrationId = decodeId("integration", integration.id)!;
  let receipts = 0;
  /** Mentions the bot in a new thread and answers the launched agents' current configs' tools. */
  const mentionAndRead = async (ts: string) => {
    const event = eventCallback(bot, { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> go`, ts, channel: CHANNEL });
    expect((await postSlackEvent(server.url, "signing-SENTINEL", event)).status).toBe(200);
    receipts += 1;
    await eventually(
      () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId)),
      (rows) => rows.length === receipts && rows.every((row) => row.state === "processed"),
      30_000,
    );
    const agents = (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
    return agents.map((agent) => agent.current_config_id as string);
  };
  return { p, integrationId, profileConfigId: config.body.id as string, mentionAndRead };
}

async function compiled(configId: string) {
  const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", configId)!));
  return row!.compiledDefinition;
}

async function toolsOf(configId: string) {
  return (await compiled(configId)).tools.map((tool) => [tool.name, tool.permission, tool.integration?.operation ?? null]);
}

async function handlersOf(configId: string) {
  return ((await compiled(configId)).interactionHandlers ?? []).map((handler) => [handler.integrationName, handler.args]);
}

describe("integrations: a launch derives a config with the integration's tools", () => {
  it("composes every kind the spec names, and runs the tools, interactions and schedules each kind implements", () => {
    const catalog = server.app.services.integrations.catalog;
    expect([...createIntegrationKinds(server.config).keys()]).toEqual([...SPEC_KINDS]);
    expect(SPEC_KINDS.map((kind) => [kind, catalog.runsTools(kind), catalog.postsInteractions(kind), catalog.runsSchedules(kind)])).toEqual([
      ["slack_thread", true, true, true],
      ["discord_thread", true, true, true],
      ["github_pr", true, false, false],
    ]);
  });

  it("adds the Slack tools, the Slack interaction handler and the tools that choose it to the profile's config, saved once and shared by every launch", async () => {
    const { profileConfigId, mentionAndRead } = await launcherWith("tools:\n  ask_question: {}\n");
    const [first] = await mentionAndRead("1700000900.000100");
    expect(first).not.toBe(profileConfigId);
    expect(await toolsOf(first!)).toEqual([
      ["ask_question", "always_allow", null],
      ["int__eng__post_message", "always_allow", "post_message"],
      ["int__eng__read", "always_allow", "read"],
      ["list_interaction_handlers", "always_allow", null],
      ["read_file", "always_allow", null],
      ["search_files", "always_allow", null],
      ["set_interaction_handler", "always_allow", null],
    ]);
    expect(await handlersOf(first!)).toEqual([["eng", {}]]);
    // The profile's config is untouched; a second launch derives the same config (content-addressed).
    expect((await toolsOf(profileConfigId)).map(([name]) => name)).toEqual(["ask_question", "read_file", "search_files"]);
    const both = await mentionAndRead("1700000900.000200");
    expect(both).toEqual([first, first]);
  });

  it("keeps the profile's own entries whole: a disabled one stays disabled, a chosen permission stays", async () => {
    const { mentionAndRead } = await launcherWith(
      "tools:\n  int__eng__read:\n    enabled: false\n  int__eng__post_message:\n    permission:\n      mode: always_ask\n  set_interaction_handler:\n    enabled: false\n",
    );
    const [configId] = await mentionAndRead("1700000901.000100");
    expect(await toolsOf(configId!)).toEqual([
      ["int__eng__post_message", "always_ask", "post_message"],
      ["list_interaction_handlers", "always_allow", null],
      ["read_file", "always_allow", null],
      ["search_files", "always_allow", null],
    ]);
    expect(await handlersOf(configId!)).toEqual([["eng", {}]]);
  });
});
