import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { integrationAssignments, integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { signDelivery, startFakeGithub } from "../support/fake-github.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
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
    const body = JSON.stringify({ ...payload, repository: REPOSITORY, installation: { id: Number(installation.id) }, sender: HUMAN });
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
  return { p, auth, app, installation, path, profileId, slots, deliver, settled, agents, backlog };
}

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
    await deliver("pull_request", { action: "synchronize", number: PULL.number, pull_request: { ...PULL, id: 5005 } });
    await deliver("issue_comment", issueComment(1101, `@${app.slug}[bot] start over`));
    await settled(3);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(await backlog(launched[0].id)).toEqual([
      ["steering", `@octocat commented on pull request acme/web#42 (Faster builds):\n\n@${app.slug}[bot] start over`],
      ["queued", "@octocat opened pull request acme/web#42 (Faster builds):\n\nCaches the toolchain."],
    ]);
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
