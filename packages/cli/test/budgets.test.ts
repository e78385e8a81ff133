import { describe, expect, it } from "vitest";
import { useTestServer } from "../../server/test/support/server.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { agentProject, yamlConfig } from "../../server/test/support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch } from "../../server/test/support/agent-loop.js";
import { json, useCli } from "./support.js";

/* `svc usage` and `svc budgets` (docs/cli.md, docs/usage-and-budgets.md) as people run them. */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();
const { svc, configDir } = useCli(server);

const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

describe("svc budgets and svc usage", () => {
  it("create, list, get, update and delete budgets, and show usage as a table", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const env = { SVC_TOKEN: project.token, SVC_ORG: project.orgId, SVC_PROJECT: project.projectId, SVC_CONFIG_DIR: configDir() };

    const created = json(await svc(["budgets", "create", "team cap", "--scope", "project", "--period", "month", "--action", "pause", "--limit-usd", "1.5", "--notify-at", "80,50", "--json"], { env }));
    expect(created).toMatchObject({ name: "team cap", scope: { kind: "project", id: project.projectId }, limit_micro_usd: 1_500_000, limit_tokens: null, notify_at_percent: [50, 80], state: "ok" });
    const id = created.id as string;

    const list = await svc(["budgets", "list"], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+SCOPE\s+PERIOD\s+SPENT\s+LIMIT\s+STATE$/);
    expect(list.stdout).toContain(`${id}  team cap  project ${project.projectId}  month   $0.000000  $1.500000  ok`);

    const updated = json(await svc(["budgets", "update", id, "--limit-usd", "none", "--limit-tokens", "1000", "--json"], { env }));
    expect(updated).toMatchObject({ limit_micro_usd: null, limit_tokens: 1000 });
    const got = await svc(["budgets", "get", id], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain(`team cap (${id}): pause at 1000 tokens per month, scope project ${project.projectId}`);

    const noLimit = await svc(["budgets", "create", "x", "--scope", "org", "--period", "day", "--action", "pause"], { env });
    expect(noLimit.code).toBe(1);
    expect(noLimit.stderr).toContain("/limit_micro_usd: set limit_micro_usd, limit_tokens or both");
    const badAmount = await svc(["budgets", "create", "x", "--scope", "org", "--period", "day", "--action", "pause", "--limit-usd", "1.2345678"], { env });
    expect(badAmount.code).toBe(2);

    provider.script({ text: "hi", usage: USAGE });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length === 1);
    const usage = await svc(["usage", "--group-by", "agent"], { env });
    expect(usage.code, usage.stderr).toBe(0);
    const lines = usage.stdout.trim().split("\n");
    expect(lines[1]).toMatch(/^AGENT_ID\s+CALLS\s+INPUT\s+OUTPUT\s+COST$/);
    expect(lines[2]).toMatch(new RegExp(`^${agentId}\\s+1\\s+1000\\s+200\\s+\\$0\\.000000$`));
    expect(lines[3]).toMatch(/^TOTAL\s+1\s+1000\s+200\s+\$0\.000000$/);
    expect(json(await svc(["usage", "--json"], { env })).totals).toMatchObject({ model_calls: 1, input_tokens: 1000 });
    expect((await svc(["usage", "--group-by", "weekday"], { env })).code).toBe(2);

    const deleted = await svc(["budgets", "delete", id], { env });
    expect([deleted.code, deleted.stdout]).toEqual([0, `Deleted budget ${id}.\n`]);
  });
});
