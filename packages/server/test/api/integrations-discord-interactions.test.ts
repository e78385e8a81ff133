import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentInputs } from "../../src/db/schema/index.js";
import type { GatewayManager } from "../../src/modules/integrations/kinds/discord/gateway-manager.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, untilEvents } from "../support/agent-loop.js";
import { GUILD_ID, startFakeDiscord, type DiscordPosted } from "../support/fake-discord.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { clickButton, connectDiscord, gatewayOpen, mentionBot, startGateways } from "./integrations-discord-fixtures.js";

/*
 * Questions and approvals in the Discord thread (reference docs: integrations/discord, "Questions,
 * approvals and profile menus"): an interaction the agent opens is posted to its thread with buttons by
 * the receipts processor as soon as it is routed (no maintenance runs here), and a click signed with the
 * application's key answers it on the interactions endpoint.
 */

const discord = await startFakeDiscord();
const server = useTestServer(
  { SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_DISCORD_API_URL: discord.apiUrl },
  { worker: true },
);
const provider = useFakeProvider();
let gateways: GatewayManager | undefined;
beforeAll(() => void (gateways = startGateways(server, discord)));
afterAll(async () => {
  await gateways?.stop();
  await discord.close();
});

const askFirst = "  ask_question:\n    permission:\n      mode: always_ask\n";
const SETTLED = { type: 4, data: { content: "This was already answered or withdrawn; the first answer stands.", flags: 64 } };
const buttonsOf = (message: DiscordPosted): any[] => (message.body["components"] as any[]).flatMap((row) => row.components);

describe("integrations: questions and approvals in the Discord thread", () => {
  it("posts an approval and then a question in the agent's thread with buttons; the first clicks answer them, later, misplaced and forged clicks change nothing", async () => {
    const p = await agentProject(server.api, provider.baseUrl);
    const auth = { token: p.token };
    const config = await createConfig(server.api, p, yamlConfig(p, `tools:\n${askFirst}`));
    const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "asker", config }, auth);
    expect(profile.status, profile.text).toBe(201);
    const { bot } = await connectDiscord(server, discord, p, "chat", [profile.body.id]);
    await gatewayOpen(discord, bot);
    discord.reset();

    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "blue" }, { label: "green" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "green it is" });
    const threadId = mentionBot(discord, bot, "pick a colour");
    const [agent] = await eventually(() => collectPages(server.api, `${p.base}/agents`, auth), (rows) => rows.length === 1, 30_000);
    const interactions = `${p.base}/agents/${agent.id}/interactions`;
    const listed = async () => (await server.api.get(interactions, auth)).body.data as any[];

    const [approvalMessage] = await eventually(async () => discord.posted, (posted) => posted.length === 1, 30_000);
    const [approval] = await listed();
    expect(approval).toMatchObject({ state: "open", interaction_kind: "permission" });
    expect(approvalMessage!.channelId).toBe(threadId);
    expect(approvalMessage!.body["content"]).toContain("Allow ask_question to run with this input?");
    expect(approvalMessage!.body["allowed_mentions"]).toEqual({ parse: [] });
    const allowDeny = buttonsOf(approvalMessage!);
    const approvalUuid = decodeId("interaction", approval.id);
    expect(allowDeny).toEqual([
      { type: 2, custom_id: `svc_answer:${approvalUuid}:0`, label: "Allow", style: 3 },
      { type: 2, custom_id: `svc_answer:${approvalUuid}:1`, label: "Deny", style: 4 },
    ]);
    const click = (message: DiscordPosted, button: any, userId: string, channelId = threadId) =>
      clickButton(server, bot, { channelId, messageId: message.id, customId: button.custom_id, userId });

    // Signed by another application's key: refused before anything is read.
    const forged = await clickButton(server, bot, { channelId: threadId, messageId: approvalMessage!.id, customId: allowDeny[0].custom_id, userId: "823456789012345678" }, discord.addBot());
    expect(forged.status).toBe(401);
    // Signed, but from a channel this integration did not assign the agent: no effect.
    const elsewhere = await click(approvalMessage!, allowDeny[0], "823456789012345678", "133456789012345678");
    expect(elsewhere.body).toEqual({ type: 4, data: { content: "This action is no longer available.", flags: 64 } });
    expect((await listed())[0].state).toBe("open");

    const allowed = await click(approvalMessage!, allowDeny[0], "823456789012345678");
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body).toEqual({ type: 7, data: { content: expect.stringMatching(/Allow ask_question[\s\S]*\nAnswered by <@823456789012345678>: Allow$/), components: [] } });

    // The approved call opens the question, posted with one button per option.
    const posted = await eventually(async () => discord.posted, (all) => all.length === 2, 30_000);
    const questionMessage = posted[1]!;
    expect(questionMessage.channelId).toBe(threadId);
    expect(questionMessage.body["content"]).toContain("Which colour?");
    const options = buttonsOf(questionMessage);
    expect(options.map((button) => [button.label, button.style])).toEqual([
      ["blue", 2],
      ["green", 2],
      ["Other", 2],
    ]);
    const answered = await click(questionMessage, options[1], "923456789012345678");
    expect(answered.body).toMatchObject({ type: 7, data: { content: expect.stringContaining("Answered by <@923456789012345678>: green"), components: [] } });

    // The agent continues with the answer.
    const list = await untilEvents(server.api, p, agent.id, (e) => finalOutputs(e).length === 1);
    expect(list.find((e) => e.event_kind === "tool_result")).toMatchObject({
      outcome: "succeeded",
      content_blocks: [{ type: "structured_data", value: { answers: [{ question: "Which colour?", selected: ["green"] }] } }],
    });

    // A second click on the settled approval is told so; the first answer stands.
    const late = await click(approvalMessage!, allowDeny[1], "723456789012345678");
    expect(late.body).toEqual(SETTLED);
    const settled = await listed();
    const byId = new Map(settled.map((row) => [row.id, row]));
    expect(byId.get(approval.id)).toMatchObject({ state: "resolved", resolution: { answers: [{ option_indices: [0] }] } });

    // Each answer is attributed to its clicker's integration actor: the guild and the Discord user.
    const actors = (await server.api.get(`${p.base}/actors?provider=integration`, auth)).body.data as any[];
    for (const [row, user] of [
      [byId.get(approval.id), "823456789012345678"],
      [settled.find((row) => row.interaction_kind === "question"), "923456789012345678"],
    ]) {
      const [input] = await server.db.read.select().from(agentInputs).where(eq(agentInputs.id, decodeId("agentInput", row.resolved_by_input_id)!));
      expect(input).toMatchObject({ inputKind: "interaction_response" });
      const actor = actors.find((candidate) => decodeId("actor", candidate.id) === input!.actorId);
      expect(actor).toMatchObject({ provider_tenant_id: GUILD_ID, provider_user_id: user });
    }
    expect(discord.posted).toHaveLength(2);
  });
});
