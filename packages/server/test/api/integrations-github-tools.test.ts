import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { signDelivery, startFakeGithub } from "../support/fake-github.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";

const github = await startFakeGithub();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_GITHUB_API_URL: github.apiUrl }, { worker: true });
const provider = useFakeProvider();
afterAll(() => github.close());
beforeEach(() => github.reset());

const HEAD = "a1".repeat(20);
const REPOSITORY = { id: 123456, name: "web", full_name: "acme/web", owner: { login: "acme", id: 9 } };
const HUMAN = { login: "octocat", id: 583231, type: "User" };
/** Lines 10-13 on the RIGHT (10 and 13 context, 11 and 12 added); 10-12 on the LEFT. */
const PATCH = "@@ -10,3 +10,4 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n+const c = 4;\n const d = 5;";

/** A connected github_pr integration `reviews` whose mention launcher starts a profile on the fake provider's model, and PR #42 in the fake. */
async function reviewsProject() {
  const p = await agentProject(server.api, provider.baseUrl);
  const auth = { token: p.token };
  const app = github.addApp();
  const installation = github.addInstallation(app);
  const pull = github.addPullRequest(installation, { repositoryId: REPOSITORY.id, fullName: REPOSITORY.full_name, number: 42, title: "Faster builds", body: "Caches the toolchain.", headSha: HEAD, baseSha: "b2".repeat(20), files: [{ filename: "src/cache.ts", patch: PATCH }] });
  const created = await server.api.post(`${p.base}/integrations`, { name: "reviews", integration_kind: "github_pr" }, auth);
  const path = `${p.base}/integrations/${created.body.id}`;
  const material = { kind: "github_app_credentials", app_id: app.appId, private_key: app.privateKeyPem, webhook_secret: app.webhookSecret };
  const secret = await server.api.post(`/api/v1/orgs/${p.orgId}/secrets`, { owner: { kind: "project", project_id: p.projectId }, name: `github ${Math.random()}`, material }, auth);
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_account_ref: installation.id, credential_secret_id: secret.body.id }, auth);
  expect(setup.status, setup.text).toBe(200);
  const config = await createConfig(server.api, p, yamlConfig(p));
  const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "reviewer", config }, auth);
  const settings = { launcher: { trigger: "mention", scope_kind: "installation", scope_ref: installation.id, slots: [{ key: "reviewer", agent_profile_id: profile.body.id }] } };
  expect((await server.api.put(path, { settings }, auth)).status).toBe(200);
  const integrationId = decodeId("integration", created.body.id)!;
  github.reset();
  /** A human comment mentioning the App on PR #42; answers the agent it launched. */
  const mention = async (commentId = 1001) => {
    const payload = { action: "created", issue: { number: 42, title: "Faster builds", pull_request: {} }, comment: { id: commentId, body: `@${app.slug}[bot] please review`, user: HUMAN } };
    const body = JSON.stringify({ ...payload, repository: REPOSITORY, installation: { id: Number(installation.id) }, sender: HUMAN });
    const reply = await server.api.request("POST", "/api/integrations/github/events", { raw: body, headers: signDelivery(app, app.webhookSecret, "issue_comment", body) });
    expect(reply.status, reply.text).toBe(204);
    await eventually(
      () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId)),
      (rows) => rows.length > 0 && rows.every((row) => row.state === "processed"),
      30_000,
    );
    const agents = (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
    return agents[0].id as string;
  };
  return { p, auth, path, pull, mention };
}

/** The tool results in the order the model asked for the calls: a refused input is answered at once, before calls that reach GitHub. */
function toolResults(list: any[]): any[] {
  const calls = list.filter((e) => e.event_kind === "model_output").flatMap((e) => e.content_blocks.filter((b: any) => b.type === "tool_call").map((b: any) => b.tool_call_id));
  return list.filter((e) => e.event_kind === "tool_result").sort((a, b) => calls.indexOf(a.tool_call_id) - calls.indexOf(b.tool_call_id));
}
const pullCalls = () => github.calls.filter((call) => call.path.startsWith("/repositories/"));

describe("integrations: GitHub pull request tools", () => {
  it("a mention-launched reviewer reads the diff and posts an inline comment on it, with one installation token for both calls", async () => {
    const { p, mention } = await reviewsProject();
    const inline = { body: "b is 3 now; is that intended?", commit_id: HEAD, path: "src/cache.ts", line: 11, side: "RIGHT" };
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: { section: "diff" } }] }, { toolCalls: [{ name: "int__reviews__inline_comment", input: inline }] }, { text: "reviewed" });
    const agentId = await mention();
    const [read, posted] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(read.outcome, JSON.stringify(read)).toBe("succeeded");
    expect(read.content_blocks[0].value).toEqual({ diff: `diff --git a/src/cache.ts b/src/cache.ts\n--- a/src/cache.ts\n+++ b/src/cache.ts\n${PATCH}\n`, truncated: false });
    expect(posted.outcome, JSON.stringify(posted)).toBe("succeeded");
    expect(posted.content_blocks[0].value).toEqual({ id: expect.any(Number), html_url: expect.stringContaining("https://github.com/acme/web/pull/42#discussion_r") });
    expect(github.minted).toHaveLength(1);
    const token = github.minted[0]!.token;
    expect(pullCalls().map((call) => [call.method, call.path, call.token, call.accept])).toEqual([
      ["GET", "/repositories/123456/pulls/42", token, "application/vnd.github.diff"],
      ["POST", "/repositories/123456/pulls/42/comments", token, "application/vnd.github+json"],
    ]);
    expect(pullCalls()[1]!.body).toEqual(inline);
  });

  it("reads the details and review comments, posts a discussion comment and a reply; a line outside the diff and an unknown comment are tool errors", async () => {
    const { p, auth, pull, mention } = await reviewsProject();
    pull.reviewComments.push({ id: 555, body: "Why a cache here?", user: HUMAN, path: "src/cache.ts", line: 12, side: "RIGHT", start_line: null, start_side: null, commit_id: HEAD });
    provider.script(
      { toolCalls: [{ name: "int__reviews__read", input: {} }, { name: "int__reviews__read", input: { section: "review_comments", limit: 1 } }] },
      { toolCalls: [{ name: "int__reviews__discussion_comment", input: { body: "Looks good overall." } }, { name: "int__reviews__reply", input: { comment_id: 555, body: "It saves a minute per build." } }] },
      { text: "done" },
    );
    const agentId = await mention();
    const results = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(results.map((r) => r.outcome)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    const [details, reviews] = results.map((r) => r.content_blocks[0].value);
    expect(details).toMatchObject({ number: 42, title: "Faster builds", body: "Caches the toolchain.", state: "open", author: "octocat", head: { ref: "feature", sha: HEAD }, changed_files: 1 });
    expect(reviews).toEqual({ review_comments: [expect.objectContaining({ id: 555, path: "src/cache.ts", line: 12, side: "RIGHT", body: "Why a cache here?", author: "octocat" })], page: 1, next_page: 2 });
    expect(pull.issueComments.map((c) => c.body)).toEqual(["Looks good overall."]);
    expect(pull.reviewComments.map((c) => [c.body, c.in_reply_to_id])).toEqual([["Why a cache here?", undefined], ["It saves a minute per build.", 555]]);

    provider.script(
      {
        toolCalls: [
          { name: "int__reviews__inline_comment", input: { body: "x", commit_id: HEAD, path: "src/cache.ts", line: 40, side: "RIGHT" } },
          { name: "int__reviews__reply", input: { comment_id: 999, body: "y" } },
          { name: "int__reviews__inline_comment", input: { body: "z", commit_id: HEAD, path: "src/cache.ts", line: 12, side: "RIGHT", start_line: 11 } },
          { name: "int__reviews__inline_comment", input: { body: "both lines", commit_id: HEAD, path: "src/cache.ts", line: 12, side: "RIGHT", start_line: 11, start_side: "RIGHT" } },
        ],
      },
      { text: "could not" },
    );
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "comment more" }], delivery_mode: "queued" }, auth);
    const [, , , , outside, unknown, halfRange, range] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2));
    expect(outside.outcome).toBe("failed");
    expect(outside.content_blocks[0].text).toContain("pull_request_review_thread.line could not be resolved");
    expect(outside.content_blocks[0].text).toContain("line 40 (RIGHT) of src/cache.ts");
    expect(unknown.outcome).toBe("failed");
    expect(unknown.content_blocks[0].text).toContain("review comment 999 is not a review comment of pull request #42");
    expect(halfRange.outcome).toBe("failed");
    expect(halfRange.content_blocks[0].text).toContain("must have property start_side when property start_line is present");
    expect(range.outcome, JSON.stringify(range)).toBe("succeeded");
    expect(pull.reviewComments.map((c) => [c.body, c.start_line, c.start_side, c.line, c.side])).toEqual([
      ["Why a cache here?", null, null, 12, "RIGHT"],
      ["It saves a minute per build.", null, null, 12, "RIGHT"],
      ["both lines", 11, "RIGHT", 12, "RIGHT"],
    ]);
    expect(github.minted).toHaveLength(1);
  });

  it("no tool can name another pull request, and an agent with no assigned pull request gets a tool error before GitHub is called", async () => {
    const { p, mention } = await reviewsProject();
    provider.script({ toolCalls: [{ name: "int__reviews__discussion_comment", input: { body: "hi", pull_request: 43 } }] }, { text: "refused" });
    const agentId = await mention();
    const [elsewhere] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(elsewhere.outcome).toBe("failed");
    expect(elsewhere.content_blocks[0].text).toContain("must NOT have additional properties");

    const config = await createConfig(server.api, p, yamlConfig(p, "tools:\n  int__reviews__read: {}\n"));
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: {} }] }, { text: "gave up" });
    const direct = await launch(server.api, p, config, "read the PR");
    const [unassigned] = toolResults(await untilEvents(server.api, p, direct, (e) => finalOutputs(e).length === 1));
    expect(unassigned.outcome).toBe("failed");
    expect(unassigned.content_blocks[0].text).toContain("this agent has no assigned conversation for reviews");
    expect(github.calls).toEqual([]);
  });

  it("a revoked installation token is replaced once, and the call goes through", async () => {
    const { p, auth, mention } = await reviewsProject();
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: {} }] }, { text: "read" });
    const agentId = await mention();
    await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1);
    github.revokeTokens();
    provider.script({ toolCalls: [{ name: "int__reviews__discussion_comment", input: { body: "Still here." } }] }, { text: "posted" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "comment" }], delivery_mode: "queued" }, auth);
    const [, posted] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2));
    expect(posted.outcome, JSON.stringify(posted)).toBe("succeeded");
    const [first, second] = github.minted.map((m) => m.token);
    expect(github.minted).toHaveLength(2);
    expect(pullCalls().map((call) => [call.method, call.token ?? "refused"])).toEqual([
      ["GET", first],
      ["POST", "refused"],
      ["POST", second],
    ]);
  });

  it("a diff longer than the limit is cut, with a note that points to the files section", async () => {
    const { p, pull, mention } = await reviewsProject();
    const added = Array.from({ length: 2000 }, (_, i) => `+const line${i} = "${"x".repeat(20)}";`);
    pull.files.push({ filename: "src/big.ts", patch: `@@ -0,0 +1,2000 @@\n${added.join("\n")}` });
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: { section: "diff" } }] }, { text: "long" });
    const agentId = await mention();
    const [result] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    const value = result.content_blocks[0].value;
    expect(value.truncated).toBe(true);
    expect(value.diff.length).toBe(40_000);
    expect(value.diff.startsWith("diff --git a/src/cache.ts")).toBe(true);
    expect(value.note).toMatch(/^The diff has \d+ characters; only the first 40000 are here\. Read section files/);
  });

  it("GitHub's rate limits are tool errors that pass on the delay and set the integration's runtime_failure", async () => {
    const { p, auth, path, mention } = await reviewsProject();
    github.rateLimitNext({ kind: "secondary", retryAfterSeconds: 90 });
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: {} }] }, { text: "later" });
    const agentId = await mention();
    const [secondary] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 1));
    expect(secondary.outcome).toBe("failed");
    expect(secondary.content_blocks[0].text).toContain("Try again in 90 seconds");
    expect((await server.api.get(path, auth)).body.runtime_failure).toEqual({ message: expect.stringContaining("GitHub is rate limiting"), retry_at: expect.any(String) });

    github.rateLimitNext({ kind: "primary", resetInSeconds: 600 });
    provider.script({ toolCalls: [{ name: "int__reviews__read", input: { section: "files" } }] }, { text: "later again" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "again" }], delivery_mode: "queued" }, auth);
    const [, primary] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 2));
    expect(primary.outcome).toBe("failed");
    expect(primary.content_blocks[0].text).toMatch(/GitHub is rate limiting \/repositories\/123456\/pulls\/42\/files.*Try again in \d+ seconds/);
    expect((await server.api.get(path, auth)).body.runtime_failure).toEqual({ message: expect.stringContaining("/files"), retry_at: expect.any(String) });

    provider.script({ toolCalls: [{ name: "int__reviews__read", input: { section: "files" } }] }, { text: "read" });
    await server.api.post(`${p.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "once more" }], delivery_mode: "queued" }, auth);
    const [, , files] = toolResults(await untilEvents(server.api, p, agentId, (e) => finalOutputs(e).length === 3));
    expect(files.content_blocks[0].value).toEqual({ files: [expect.objectContaining({ filename: "src/cache.ts", patch: PATCH })], page: 1 });
    expect((await server.api.get(path, auth)).body.runtime_failure).toBeUndefined();
    expect(github.minted).toHaveLength(1);
  });
});
