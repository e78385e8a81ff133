import { afterAll, describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject } from "../support/agents.js";
import { eventually } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { signDelivery, startFakeGithub } from "../support/fake-github.js";
import { collectPages } from "../support/paging.js";
import { startSplitDeployment } from "../support/split-deployment.js";
import { createProfile } from "../api/integrations-fixtures.js";

/*
 * GitHub deliveries handled by several svc processes at once (reference docs: integrations/github,
 * "Configure incoming PR work"): `svc api`, two `svc worker` processes and `svc maintenance` each handle
 * receipts as they are stored, on one PostgreSQL database. A pull request's new commits may be handled
 * before, or while, another process launches the agent its opening starts: they are held, not dropped.
 * Only PostgreSQL can be shared between processes.
 */

const adminUrl = process.env["DATABASE_URL"];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const PULLS = 6;
const REPOSITORY = { id: 123456, name: "web", full_name: "acme/web", owner: { login: "acme", id: 9 } };
const HUMAN = { login: "octocat", id: 583231, type: "User" };
const BEFORE = "0123456789abcdef0123456789abcdef01234567";
const headOf = (n: number) => n.toString(16).padStart(40, "a");

describe.skipIf(!adminUrl)("GitHub deliveries across svc processes on PostgreSQL", () => {
  it("a pull request's new commits that race its opening reach the launched agent exactly once", { timeout: 240_000 }, async () => {
    const github = await startFakeGithub();
    cleanups.push(() => github.close());
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const deployment = await startSplitDeployment(adminUrl!, { SVC_GITHUB_API_URL: github.apiUrl });
    cleanups.push(() => deployment.close());
    await Promise.all([deployment.start("api"), deployment.start("maintenance"), deployment.start("worker"), deployment.start("worker")]);

    const client = new ApiClient(deployment.url, deployment.url);
    const project = await agentProject(client, provider.baseUrl);
    const auth = { token: project.token };
    const app = github.addApp();
    const installation = github.addInstallation(app);
    const secret = await client.post(
      `/api/v1/orgs/${project.orgId}/secrets`,
      {
        owner: { kind: "project", project_id: project.projectId },
        name: "github",
        material: { kind: "github_app_credentials", app_id: app.appId, private_key: app.privateKeyPem, webhook_secret: app.webhookSecret },
      },
      auth,
    );
    const slots = [{ key: "reviewer", agent_profile_id: await createProfile(client, project, "reviewer") }];
    const settings = { launcher: { trigger: "pull_request_opened", scope_kind: "installation", scope_ref: installation.id, slots } };
    const created = await client.post(`${project.base}/integrations`, { name: "reviews", integration_kind: "github_pr", settings }, auth);
    expect(created.status, created.text).toBe(201);
    const setup = await client.post(`${project.base}/integrations/${created.body.id}/setup`, { expected_setup_revision: 1, provider_account_ref: installation.id, credential_secret_id: secret.body.id }, auth);
    expect(setup.status, setup.text).toBe(200);

    const deliver = async (event: string, payload: object) => {
      const body = JSON.stringify({ repository: REPOSITORY, installation: { id: Number(installation.id) }, sender: HUMAN, ...payload });
      const reply = await client.request("POST", "/api/integrations/github/events", { raw: body, headers: signDelivery(app, app.webhookSecret, event, body) });
      expect(reply.status, reply.text).toBe(204);
    };
    // Each pull request's push and opening arrive together, the push first; the processes race for them.
    const openedAt = new Date().toISOString();
    await Promise.all(
      Array.from({ length: PULLS }, async (_, n) => {
        const pull = { number: n + 1, id: 5000 + n, title: `Change ${n + 1}`, body: "", user: HUMAN, created_at: openedAt };
        await Promise.all([
          deliver("pull_request", { action: "synchronize", number: pull.number, before: BEFORE, after: headOf(n + 1), pull_request: pull }),
          deliver("pull_request", { action: "opened", number: pull.number, pull_request: pull }),
        ]);
      }),
    );

    const integrationId = decodeId("integration", created.body.id);
    const receipts = await eventually(
      () => deployment.query<{ state: string }>("SELECT state FROM integration_event_receipts WHERE integration_id = $1", [integrationId]),
      (rows) => rows.length === PULLS * 2 && rows.every((row) => row.state !== "pending"),
      120_000,
    );
    expect(receipts.every((row) => row.state === "processed")).toBe(true);
    const agents = (await collectPages(client, `${project.base}/agents`, auth)) as any[];
    expect(agents).toHaveLength(PULLS);
    const subscriptions = (await collectPages(client, `${project.base}/integrations/${created.body.id}/subscriptions`, auth)) as any[];
    for (const n of Array.from({ length: PULLS }, (_, i) => i + 1)) {
      const agentId = subscriptions.find((s) => s.conversation.pull_request === n).agent_id as string;
      const pushes = await deployment.query<{ key: string }>(
        "SELECT input_idempotency_key AS key FROM agent_inputs WHERE agent_id = $1 AND input_idempotency_key LIKE '%:synchronize:%'",
        [decodeId("agent", agentId)],
      );
      expect(pushes.map((row) => row.key.split(":").pop())).toEqual([headOf(n)]);
    }
  });
});
