import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { integrationAssignments, integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { signDelivery, startFakeGithub } from "../support/fake-github.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { yamlConfig } from "../support/agents.js";
import { createProfile, integrationProject } from "./integrations-fixtures.js";

const github = await startFakeGithub();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_GITHUB_API_URL: github.apiUrl });
afterAll(() => github.close());

const EVENTS = "/api/integrations/github/events";
const REPOSITORY = { id: 123456, name: "web", full_name: "acme/web", owner: { login: "acme", id: 9 } };
const PULL = { number: 42, title: "Faster builds", body: "Caches the toolchain.", user: { login: "octocat", id: 583231, type: "User" } };
const HUMAN = { login: "octocat", id: 583231, type: "User" };

/** A connected github_pr integration with a launcher on `trigger`, one slot per key (each its own profile). */
async function launcher(trigger: "mention" | "pull_request_opened", scope?: { scope_kind: "repository"; scope_ref: string }, slotKeys = ["reviewer"]) {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const app = github.addApp();
  const installation = github.addInstallation(app);
  const created = await server.api.post(p.integrations, { name: "reviews", integration_kind: "github_pr" }, auth);
  const path = `${p.integrations}/${created.body.id}`;
  const secret = await server.api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    {
      owner: { kind: "project", project_id: p.projectId },
      name: `github ${Math.random()}`,
      material: { kind: "github_app_credentials", app_id: app.appId, private_key: app.privateKeyPem, webhook_secret: app.webhookSecret },
    },
    auth,
  );
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_account_ref: installation.id, credential_secret_id: secret.body.id }, auth);
  expect(setup.status, setup.text).toBe(200);
  const slots = [];
  for (const key of slotKeys) slots.push({ key, agent_profile_id: await createProfile(server.api, p, key) });
  const profileId = slots[0]!.agent_profile_id;
  const settings = { launcher: { trigger, scope_kind: "installation", scope_ref: installation.id, ...scope, slots } };
  const saved = await server.api.put(path, { settings }, auth);
  expect(saved.status, saved.text).toBe(200);
  const integrationId = decodeId("integration", created.body.id)!;
  const deliver = async (event: string, payload: object, delivery?: Parameters<typeof signDelivery>[4]) => {
    // The payload may name another sender (a bot's push).
    const body = JSON.stringify({ repository: REPOSITORY, installation: { id: Number(installation.id) }, sender: HUMAN, ...payload });
    const reply = await server.api.request("POST", EVENTS, { raw: body, headers: signDelivery(app, app.webhookSecret, event, body, delivery) });
    expect(reply.status, reply.text).toBe(204);
  };
  const settled = (count: number) =>
    eventually(
      () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId)),
      (rows) => rows.length === count && rows.every((row) => row.state === "processed"),
      30_000,
    );
  const agents = async () => (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
  const backlog = async (agentId: string) => ((await server.api.get(`${p.base}/agents/${agentId}/inputs/backlog`, auth)).body.data as any[]).map((input) => [input.delivery_mode, input.content_blocks[0].text]);
  return { p, auth, app, installation, path, profileId, slots, deliver, settled, agents, backlog, integrationId: created.body.id as string };
}

const HEAD = "0123456789abcdef0123456789abcdef01234567";
const NEW_HEAD = "89abcdef0123456789abcdef0123456789abcdef";
const BOT = { login: "renovate[bot]", id: 29139614, type: "Bot" };
/** GitHub's pull_request `synchronize`: commits pushed to the pull request's head, from `before` to `after`. */
const synchronize = (after: string, sender: object = HUMAN, number = PULL.number) => ({ action: "synchronize", number, before: HEAD, after, pull_request: { ...PULL, number, id: 5005 }, sender });

const issueComment = (id: number, body: string, user: object = HUMAN, action = "created") => ({
  action,
  issue: { number: PULL.number, title: PULL.title, pull_request: { url: "https://api.github.com/repos/acme/web/pulls/42" } },
  comment: { id, body, user },
});

describe("integrations: GitHub pull requests launch and steer agents", () => {
  it("launches the profile with the pull request assigned on a mention; later human comments steer it; bots, edits and issues do not", async () => {
    const { auth, app, path, profileId, deliver, settled, agents, backlog } = await launcher("mention");
    const mentionDelivery = "11111111-2222-3333-4444-555555555555";
    await deliver("issue_comment", issueComment(1001, `@${app.slug}[bot] please review the cache keys`), mentionDelivery);
    await settled(1);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(launched[0]).toMatchObject({ agent_profile_id: profileId, state: "active" });
    expect(await collectPages(server.api, `${path}/subscriptions`, auth)).toEqual([
      expect.objectContaining({ agent_id: launched[0].id, conversation: { repository_id: REPOSITORY.id, pull_request: PULL.number } }),
    ]);

    await deliver("issue_comment", issueComment(1002, "Also, the lockfile changed."));
    await deliver("pull_request_review_comment", { action: "created", pull_request: PULL, comment: { id: 2001, body: "Is this path right?", path: "build.ts", line: 3, user: HUMAN } });
    // The App's own comment, another comment edited, a comment on an issue, and a redelivered mention add nothing.
    await deliver("issue_comment", issueComment(1003, "Looking at it.", { login: `${app.slug}[bot]`, id: 77, type: "Bot" }));
    await deliver("issue_comment", issueComment(1002, "Also, the lockfile changed!", HUMAN, "edited"));
    await deliver("issue_comment", { action: "created", issue: { number: 43, title: "Bug" }, comment: { id: 1004, body: `@${app.slug}[bot] look`, user: HUMAN } });
    await deliver("issue_comment", issueComment(1001, `@${app.slug}[bot] please review the cache keys`), mentionDelivery);
    await settled(6);
    expect(await agents()).toHaveLength(1);
    expect(await backlog(launched[0].id)).toEqual([
      ["steering", "@octocat commented on pull request acme/web#42 (Faster builds):\n\nAlso, the lockfile changed."],
      ["steering", "@octocat commented on build.ts in pull request acme/web#42 (Faster builds):\n\nIs this path right?"],
      ["queued", `@octocat commented on pull request acme/web#42 (Faster builds):\n\n@${app.slug}[bot] please review the cache keys`],
    ]);
  });

  it("launches on a pull request opened when the launcher asks for it, once per pull request; a mention there steers", async () => {
    const { app, deliver, settled, agents, backlog } = await launcher("pull_request_opened");
    await deliver("pull_request", { action: "opened", number: PULL.number, pull_request: { ...PULL, id: 5005 } });
    // New commits neither launch again nor steer: they queue behind the opening input.
    await deliver("pull_request", synchronize(NEW_HEAD));
    await deliver("issue_comment", issueComment(1101, `@${app.slug}[bot] start over`));
    await settled(3);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(await backlog(launched[0].id)).toEqual([
      ["steering", `@octocat commented on pull request acme/web#42 (Faster builds):\n\n@${app.slug}[bot] start over`],
      ["queued", "@octocat opened pull request acme/web#42 (Faster builds):\n\nCaches the toolchain."],
      ["queued", `@octocat pushed commits to pull request acme/web#42 (Faster builds); its head is now ${NEW_HEAD}.`],
    ]);
  });

  it("forwards to an agent subscribed through the API: comments and reviews steer, new commits queue; bots, edits, approvals alone, closes and redeliveries add nothing", async () => {
    const { p, auth, path, integrationId, deliver, settled, backlog } = await launcher("mention");
    const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, auth);
    const agent = await server.api.post(`${p.base}/agents`, { config: config.body.id }, auth);
    expect(agent.status, agent.text).toBe(201);
    const agentId = agent.body.agent.id as string;
    const subscribed = await server.api.post(`${path}/subscriptions`, { agent_id: agentId, conversation: { repository_id: REPOSITORY.id, pull_request: PULL.number } }, auth);
    expect(subscribed.status, subscribed.text).toBe(201);
    expect(subscribed.body.integration_id).toBe(integrationId);

    await deliver("issue_comment", issueComment(1501, "Please also cover the cache miss."));
    await deliver("pull_request_review", { action: "submitted", pull_request: PULL, review: { id: 3001, body: "Looks close; see my notes.", state: "commented", user: HUMAN } });
    await deliver("pull_request", synchronize(NEW_HEAD));
    // Redelivered under a new delivery id, the same push adds nothing; nor do a bot's push, an approval
    // without a body, an edited review comment, a close, and commits on another pull request.
    await deliver("pull_request", synchronize(NEW_HEAD));
    await deliver("pull_request", synchronize("fedcba9876543210fedcba9876543210fedcba98", BOT));
    await deliver("pull_request_review", { action: "submitted", pull_request: PULL, review: { id: 3002, body: null, state: "approved", user: HUMAN } });
    await deliver("pull_request_review_comment", { action: "edited", pull_request: PULL, comment: { id: 2101, body: "Is this right?", path: "build.ts", user: HUMAN } });
    await deliver("pull_request", { action: "closed", number: PULL.number, pull_request: { ...PULL, id: 5005 } });
    await deliver("pull_request", synchronize(HEAD, HUMAN, 43));
    await settled(9);
    expect(await backlog(agentId)).toEqual([
      ["steering", "@octocat commented on pull request acme/web#42 (Faster builds):\n\nPlease also cover the cache miss."],
      ["steering", "@octocat reviewed pull request acme/web#42 (Faster builds):\n\nLooks close; see my notes."],
      ["queued", `@octocat pushed commits to pull request acme/web#42 (Faster builds); its head is now ${NEW_HEAD}.`],
    ]);
  });

  it("forwards to each API subscription only the events it selects; the pull request's opening reaches every subscriber", async () => {
    const { p, auth, path, deliver, settled, backlog } = await launcher("mention");
    const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, auth);
    const subscribe = async (name: string, events?: string[]) => {
      const agent = await server.api.post(`${p.base}/agents`, { config: config.body.id, name }, auth);
      const reply = await server.api.post(`${path}/subscriptions`, { agent_id: agent.body.agent.id, conversation: { repository_id: REPOSITORY.id, pull_request: PULL.number }, ...(events ? { events } : {}) }, auth);
      expect(reply.status, reply.text).toBe(201);
      return agent.body.agent.id as string;
    };
    const [commits, talk, all] = [await subscribe("commits", ["commit"]), await subscribe("talk", ["discussion_comment", "review_comment"]), await subscribe("all")];

    await deliver("pull_request", { action: "opened", number: PULL.number, pull_request: { ...PULL, id: 5005 } });
    await deliver("issue_comment", issueComment(1601, "Please also cover the cache miss."));
    await deliver("pull_request_review", { action: "submitted", pull_request: PULL, review: { id: 3101, body: "Looks close.", state: "commented", user: HUMAN } });
    await deliver("pull_request", synchronize(NEW_HEAD));
    await settled(4);
    const opened = ["queued", "@octocat opened pull request acme/web#42 (Faster builds):\n\nCaches the toolchain."];
    const comment = ["steering", "@octocat commented on pull request acme/web#42 (Faster builds):\n\nPlease also cover the cache miss."];
    const review = ["steering", "@octocat reviewed pull request acme/web#42 (Faster builds):\n\nLooks close."];
    const pushed = ["queued", `@octocat pushed commits to pull request acme/web#42 (Faster builds); its head is now ${NEW_HEAD}.`];
    expect(await backlog(commits)).toEqual([opened, pushed]);
    expect(await backlog(talk)).toEqual([comment, review, opened]);
    expect(await backlog(all)).toEqual([comment, review, opened, pushed]);
  });

  it("holds a pull request's new commits that come before its opening has launched, and delivers them once after the launch", async () => {
    const { deliver, settled, agents, backlog, integrationId } = await launcher("pull_request_opened");
    // Opened a moment ago, by GitHub's account: its opening may still be on its way, or launching elsewhere.
    const pull = { ...PULL, id: 5005, created_at: new Date().toISOString() };
    await deliver("pull_request", { ...synchronize(NEW_HEAD), pull_request: pull });
    const receipts = () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, decodeId("integration", integrationId)!));
    // Held: tried, found nobody to deliver to, kept pending without spending an attempt.
    const [held] = await eventually(receipts, (rows) => rows.length === 1 && rows[0]!.state === "pending" && rows[0]!.attempts === 0 && rows[0]!.retryAt !== null, 30_000);
    expect(held!.failure).toBeNull();
    expect(await agents()).toEqual([]);

    await deliver("pull_request", { action: "opened", number: PULL.number, pull_request: pull });
    await settled(2);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(await backlog(launched[0].id)).toEqual([
      ["queued", "@octocat opened pull request acme/web#42 (Faster builds):\n\nCaches the toolchain."],
      ["queued", `@octocat pushed commits to pull request acme/web#42 (Faster builds); its head is now ${NEW_HEAD}.`],
    ]);
  });

  it("does not hold events of a pull request opened long ago, nor those the launcher does not cover", async () => {
    const opened = await launcher("pull_request_opened");
    const old = { ...PULL, id: 5005, created_at: "2020-01-01T00:00:00Z" };
    await opened.deliver("pull_request", { ...synchronize(NEW_HEAD), pull_request: old });
    await opened.settled(1);
    const mention = await launcher("mention");
    await mention.deliver("pull_request", { ...synchronize(NEW_HEAD), pull_request: { ...old, created_at: new Date().toISOString() } });
    await mention.settled(1);
    expect([...(await opened.agents()), ...(await mention.agents())]).toEqual([]);
  });

  it("launches one agent per slot for a pull request, each with it assigned and subscribed; a redelivery and a later mention launch none", async () => {
    const { auth, app, path, slots, deliver, settled, agents, backlog } = await launcher("mention", undefined, ["reviewer", "security"]);
    const delivery = "21111111-2222-3333-4444-555555555555";
    await deliver("issue_comment", issueComment(1401, `@${app.slug}[bot] review this`), delivery);
    await settled(1);
    const launched = await agents();
    expect(launched.map((agent) => agent.agent_profile_id).sort()).toEqual(slots.map((slot) => slot.agent_profile_id).sort());
    const conversation = { repository_id: REPOSITORY.id, pull_request: PULL.number };
    const subscriptions = (await collectPages(server.api, `${path}/subscriptions`, auth)) as any[];
    expect(subscriptions.map((s) => [s.agent_id, s.conversation]).sort()).toEqual(launched.map((agent) => [agent.id, conversation]).sort());
    const assignments = await server.db.read.select().from(integrationAssignments).where(eq(integrationAssignments.integrationId, decodeId("integration", path.split("/").pop()!)!));
    expect(assignments.map((row) => row.conversation)).toEqual([conversation, conversation]);

    await deliver("issue_comment", issueComment(1401, `@${app.slug}[bot] review this`), delivery);
    await deliver("issue_comment", issueComment(1402, `@${app.slug}[bot] and again`));
    // The redelivery is stored once per X-GitHub-Delivery: two receipts.
    await settled(2);
    expect(await agents()).toHaveLength(2);
    // Each slot agent has the mention as its opening input, and the later mention as steering; the redelivery added nothing.
    for (const agent of launched) {
      expect(await backlog(agent.id)).toEqual([
        ["steering", `@octocat commented on pull request acme/web#42 (Faster builds):\n\n@${app.slug}[bot] and again`],
        ["queued", `@octocat commented on pull request acme/web#42 (Faster builds):\n\n@${app.slug}[bot] review this`],
      ]);
    }
  });

  it("launches nothing outside the launcher's repository, nor from a mention when the trigger is pull_request_opened", async () => {
    const scoped = await launcher("mention", { scope_kind: "repository", scope_ref: "999999" });
    await scoped.deliver("issue_comment", issueComment(1201, `@${scoped.app.slug}[bot] review`));
    await scoped.settled(1);
    const opened = await launcher("pull_request_opened");
    await opened.deliver("issue_comment", issueComment(1202, `@${opened.app.slug}[bot] review`));
    await opened.settled(1);
    expect([...(await scoped.agents()), ...(await opened.agents())]).toEqual([]);
  });

  it("refuses a forged delivery with 401: nothing is stored or launched", async () => {
    const { app, installation, agents } = await launcher("mention");
    const body = JSON.stringify({ ...issueComment(1301, `@${app.slug}[bot] review`), repository: REPOSITORY, installation: { id: Number(installation.id) }, sender: HUMAN });
    const forged = await server.api.request("POST", EVENTS, { raw: body, headers: signDelivery(app, "not-the-secret", "issue_comment", body) });
    expect(forged.status).toBe(401);
    const stored = await server.db.read.select().from(integrationEventReceipts);
    expect(stored.filter((row) => (row.payload as { comment?: { id?: number } }).comment?.id === 1301)).toEqual([]);
    expect(await agents()).toEqual([]);
  });
});
