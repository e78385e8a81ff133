import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject } from "../support/agents.js";
import { eventually, events, finalOutputs } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { startFakeDiscord, type FakeDiscord, type FakeDiscordBot } from "../support/fake-discord.js";
import { collectPages } from "../support/paging.js";
import { exited } from "../support/process.js";
import { startSplitDeployment, type SplitDeployment } from "../support/split-deployment.js";
import { connectDiscord, gatewayOpen, mentionBot } from "../api/integrations-discord-fixtures.js";
import { createProfile } from "../api/integrations-fixtures.js";

/*
 * A discord_thread integration's one Gateway connection across svc processes (reference docs:
 * integrations/discord; spec: provider_config, "One gateway connection is managed per Discord
 * integration"): `svc api`, two `svc worker` processes (each offers to hold it) and `svc maintenance` on
 * one PostgreSQL database, the fake Discord in this process. Only PostgreSQL can be shared between processes.
 */

const adminUrl = process.env["DATABASE_URL"];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A short lease (renewed every second) so a takeover comes within seconds, not the default 30. */
const LEASE_SECONDS = 3;
const ASKER = "423456789012345678";

describe.skipIf(!adminUrl)("the Discord Gateway across svc processes on PostgreSQL", () => {
  it("two workers hold one connection; a mention launches one agent; when the holder is killed the other resumes and nothing is lost or doubled", { timeout: 240_000 }, async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const deployment = await startSplitDeployment(adminUrl!, { SVC_DISCORD_API_URL: discord.apiUrl, SVC_DISCORD_GATEWAY_LEASE_SECONDS: String(LEASE_SECONDS) });
    cleanups.push(() => deployment.close());
    const [api, maintenance, ...workers] = await Promise.all([deployment.start("api"), deployment.start("maintenance"), deployment.start("worker"), deployment.start("worker")]);

    const client = new ApiClient(deployment.url, deployment.url);
    const project = await agentProject(client, provider.baseUrl);
    const auth = { token: project.token };
    const profileId = await createProfile(client, project, "helper");
    const { bot, path, integrationId } = await connectDiscord({ api: client }, discord, project, "chat", [profileId]);
    await gatewayOpen(discord, bot);

    // For several lease renewals: one identified connection, always held by the same worker.
    const first = await watchLease(deployment, discord, bot, 3);
    expect(first).toMatchObject({ maxOpen: 1, renewals: 3 });
    expect(first.holders.size).toBe(1);
    expect(discord.gateway.identifies.filter((i) => i.token === bot.token)).toHaveLength(1);
    expect(discord.gateway.resumes).toEqual([]);
    const holder = workerHolding([...first.holders][0]!, workers);
    const survivor = workers.find((worker) => worker !== holder)!;

    // A mention over that connection launches exactly one agent, which answers it. (Replies enough for
    // each input its own call; the two later replies may share one.)
    provider.script({ text: "on it" }, { text: "noted" }, { text: "noted again" }, { text: "checking" });
    const threadId = mentionBot(discord, bot, "summarize yesterday's incidents", ASKER);
    const agents = await eventually(async () => (await collectPages(client, `${project.base}/agents`, auth)) as any[], (list) => list.length === 1, 60_000);
    const agentId = agents[0].id as string;
    await eventually(() => events(client, project, agentId), (list) => finalOutputs(list).length === 1, 60_000);
    expect(await collectPages(client, `${path}/subscriptions`, auth)).toEqual([expect.objectContaining({ agent_id: agentId, conversation: { thread_id: threadId } })]);

    // The holder dies without closing anything; one message comes while nobody is connected, one after.
    holder.kill("SIGKILL");
    await exited(holder);
    const whileDown = discord.gateway.dispatchMessage(bot, "while the connection was down", false, { channel_id: threadId, author: { id: ASKER, username: "asker" } });
    await eventually(async () => discord.gateway.resumes.filter((r) => r.token === bot.token).length, (count) => count === 1, 60_000);
    await gatewayOpen(discord, bot);
    // The survivor resumed the stored session: no second IDENTIFY, and it holds the lease now.
    expect(discord.gateway.identifies.filter((i) => i.token === bot.token)).toHaveLength(1);
    const second = await watchLease(deployment, discord, bot, 2);
    expect(second).toMatchObject({ maxOpen: 1, renewals: 2 });
    expect([...second.holders].map((h) => workerHolding(h, workers))).toEqual([survivor]);
    const afterwards = discord.gateway.dispatchMessage(bot, "after the takeover", false, { channel_id: threadId, author: { id: ASKER, username: "asker" } });

    // Each reply reached the agent once, as steering; no second agent.
    const steered = (list: any[]) => list.filter((e) => e.event_kind === "agent_input" && e.input_kind === "content").map((e) => e.content_blocks[0]?.text as string);
    const timeline = await eventually(
      () => events(client, project, agentId),
      (list) => steered(list).includes("while the connection was down") && steered(list).includes("after the takeover") && finalOutputs(list).length >= 2,
      60_000,
    );
    expect(steered(timeline)[0]).toBe("summarize yesterday's incidents");
    expect(steered(timeline).sort()).toEqual(["after the takeover", "summarize yesterday's incidents", "while the connection was down"]);
    expect(await collectPages(client, `${project.base}/agents`, auth)).toHaveLength(1);
    // A new mention over the taken-over connection launches exactly one more agent.
    const secondThread = mentionBot(discord, bot, "and check the backups", ASKER);
    const both = await eventually(async () => (await collectPages(client, `${project.base}/agents`, auth)) as any[], (list) => list.length === 2, 60_000);
    const newAgent = both.find((agent) => agent.id !== agentId).id as string;
    await eventually(() => events(client, project, newAgent), (list) => finalOutputs(list).length === 1, 60_000);
    // Four receipts, each handled once: the two mentions and the two replies.
    const receipts = await eventually(
      () => deployment.query<{ provider_event_id: string; state: string }>("SELECT provider_event_id, state FROM integration_event_receipts WHERE integration_id = $1", [decodeId("integration", integrationId)]),
      (rows) => rows.length === 4 && rows.every((row) => row.state === "processed"),
      60_000,
    );
    expect(receipts.map((r) => r.provider_event_id).sort()).toEqual([threadId, whileDown, afterwards, secondThread].sort());
    expect(await collectPages(client, `${project.base}/agents`, auth)).toHaveLength(2);

    for (const child of [api, survivor, maintenance]) child.kill("SIGTERM");
    expect(await Promise.all([api, survivor, maintenance].map(exited))).toEqual([0, 0, 0]);
    // The survivor released the lease on its way out, keeping the session for the next holder.
    expect(await deployment.query("SELECT holder FROM discord_gateway_sessions WHERE session_id IS NOT NULL")).toEqual([{ holder: null }]);
  });
});

interface LeaseWatch {
  /** The most of the bot's sessions the fake saw open at once. */
  maxOpen: number;
  /** The lease's holders seen. */
  holders: Set<string>;
  /** How many times the lease's expiry moved on: each a renewal. */
  renewals: number;
}

/**
 * Samples the fake's open sessions and the lease row every 100 ms until the lease was renewed `renewals`
 * times (at most a minute): it watches for what must not happen meanwhile (a second connection, another holder).
 */
async function watchLease(deployment: SplitDeployment, discord: FakeDiscord, bot: FakeDiscordBot, renewals: number): Promise<LeaseWatch> {
  const watch: LeaseWatch = { maxOpen: 0, holders: new Set(), renewals: 0 };
  const deadline = Date.now() + 60_000;
  let lastExpiry: string | undefined;
  while (watch.renewals < renewals && Date.now() < deadline) {
    watch.maxOpen = Math.max(watch.maxOpen, discord.gateway.open(bot));
    const [row] = await deployment.query<{ holder: string | null; expiry: string | null }>("SELECT holder, lease_expires_at::text AS expiry FROM discord_gateway_sessions");
    if (row?.holder) watch.holders.add(row.holder);
    if (row?.expiry && lastExpiry !== undefined && row.expiry !== lastExpiry) watch.renewals += 1;
    lastExpiry = row?.expiry ?? lastExpiry;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return watch;
}

/** The worker process a lease holder (`host:pid:suffix`, as the Gateway manager names itself) is. */
function workerHolding(holder: string, workers: ChildProcess[]): ChildProcess {
  const pid = Number(holder.split(":")[1]);
  const worker = workers.find((w) => w.pid === pid);
  expect(worker, `no worker has pid ${pid}`).toBeDefined();
  return worker!;
}
