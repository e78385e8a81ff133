import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, launch } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited } from "../support/process.js";
import { startSplitDeployment } from "../support/split-deployment.js";

/*
 * A worker killed (SIGKILL) after it claimed a due cron firing and while its firing transaction is open:
 * the test holds the target agent's row lock, so the firing waits inside its transaction, between the
 * claim and the commit. Nothing of the firing may survive the kill, and once the claim's lease expires,
 * exactly one of two successor workers fires it, once. PostgreSQL only: the workers are separate
 * processes, and the embedded database belongs to one.
 */

const adminUrl = process.env["DATABASE_URL"];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(!adminUrl)("a worker killed between a cron firing's claim and its commit", () => {
  it("leaves no input, and two successor workers fire the slot exactly once", { timeout: 180_000 }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const deployment = await startSplitDeployment(adminUrl!, { SVC_SCHEDULER_INTERVAL_MS: "200", SVC_SCHEDULER_LEASE_SECONDS: "3" });
    cleanups.push(() => deployment.close());
    await deployment.start("api");

    const client = new ApiClient(deployment.url, deployment.url);
    const project = await agentProject(client, provider.baseUrl);
    const agentId = await launch(client, project, await createConfig(client, project, yamlConfig(project)));
    const created = await client.post(
      `${project.base}/cron-triggers`,
      { name: "Nightly", target: { type: "agent", agent_id: agentId }, cron: "0 3 * * *", message_template: "nightly run" },
      { token: project.token },
    );
    expect(created.status, created.text).toBe(201);
    const triggerId = decodeId("cronTrigger", created.body.id)!;
    const agentUuid = decodeId("agent", agentId)!;
    const contentInputs = async () =>
      Number((await deployment.query<{ n: string }>("SELECT count(*) AS n FROM agent_inputs WHERE agent_id = $1 AND input_kind = 'content'", [agentUuid]))[0]!.n);

    // The test holds the agent's row lock: a firing for it waits inside its transaction.
    const holder = new pg.Client({ connectionString: deployment.databaseUrl });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM agents WHERE id = $1 FOR UPDATE", [agentUuid]);
    // Due now (the API has no way to move a schedule into the past).
    await deployment.query("UPDATE cron_triggers SET next_fire_at = now() - interval '1 second' WHERE id = $1", [triggerId]);
    const slot = (await deployment.query<{ slot: Date }>("SELECT next_fire_at AS slot FROM cron_triggers WHERE id = $1", [triggerId]))[0]!.slot;

    const victim = await deployment.start("worker");
    // The firing transaction holds the trigger row (FOR UPDATE) and waits for the agent: claimed, not committed.
    await eventually(
      () =>
        deployment.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE c.relname = 'cron_triggers' AND l.mode = 'RowShareLock' AND a.wait_event_type = 'Lock' AND a.pid <> $1`,
          [(holder as unknown as { processID: number }).processID],
        ),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    const [claimed] = await deployment.query<{ claim_token: string | null; lease_left: boolean }>(
      "SELECT claim_token, claimed_until > now() AS lease_left FROM cron_triggers WHERE id = $1",
      [triggerId],
    );
    expect(claimed).toEqual({ claim_token: expect.any(String), lease_left: true });
    victim.kill("SIGKILL");
    await exited(victim);
    await holder.query("ROLLBACK");

    // Nothing of the killed firing committed: no input, no advance.
    expect(await contentInputs()).toBe(0);
    const [after] = await deployment.query<{ last_fired_at: Date | null; next_fire_at: Date }>(
      "SELECT last_fired_at, next_fire_at FROM cron_triggers WHERE id = $1",
      [triggerId],
    );
    expect(after).toEqual({ last_fired_at: null, next_fire_at: slot });

    // Two workers race for the slot once the dead claim's lease expires.
    const successors = await Promise.all([deployment.start("worker"), deployment.start("worker")]);
    const fired = await eventually(
      async () => (await client.get(`${project.base}/cron-triggers/${created.body.id}`, { token: project.token })).body,
      (trigger) => trigger.last_fired_at !== null,
    );
    expect(fired.last_fired_at).toBe(slot.toISOString());
    expect(new Date(fired.next_fire_at).getUTCHours()).toBe(3);
    expect(fired.failure_report).toBeNull();
    expect(await contentInputs()).toBe(1);
    // Later scheduler runs of both workers find nothing due: still one.
    await eventually(
      () => deployment.query<{ n: string }>("SELECT count(*) AS n FROM agent_inputs WHERE agent_id = $1 AND state <> 'received'", [agentUuid]),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(await contentInputs()).toBe(1);

    for (const child of successors) child.kill("SIGTERM");
    expect(await Promise.all(successors.map(exited))).toEqual([0, 0]);
  });
});
