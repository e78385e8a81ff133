import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * Answers the database cannot store as they came (issue 9, F2): U+0000 and unpaired UTF-16 surrogates
 * in a model's text or tool-call arguments used to fail the record, leaving the agent silent until its
 * lease ran out, then failing again. A record that fails for another reason is an error on the timeline
 * at once. The lease here is the default 90 s, far longer than these tests wait.
 */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const lookup = `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_allow\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

describe("answers with characters the database cannot hold", () => {
  it("stores U+0000 and unpaired surrogates as U+FFFD, shows it in the event, and the agent goes on", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "nul\u0000 high\ud800 low\udc00 pair\ud83d\ude00 end" }, { text: "still here" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "one");
    await untilEvents(server.api, project, agentId, (list) => finalOutputs(list).length === 1);
    await send(server.api, project, agentId, "two");
    const list = await untilEvents(server.api, project, agentId, (events) => finalOutputs(events).length === 2);
    const [first, second] = finalOutputs(list);
    expect(first.content_blocks).toEqual([{ type: "text", text: "nul\uFFFD high\uFFFD low\uFFFD pair\ud83d\ude00 end" }]);
    expect(second.content_blocks[0].text).toBe("still here");
  });

  it("stores tool-call arguments with U+0000 and an unpaired surrogate, replaced", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "a\u0000b\udfffc" } }] });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, lookup)), "look it up");
    const list = await untilEvents(server.api, project, agentId, (events) => events.some((e) => e.event_kind === "model_output"));
    const output = list.find((e) => e.event_kind === "model_output");
    expect(output.stop_reason).toBe("tool_use");
    expect(output.content_blocks[0]).toMatchObject({ type: "tool_call", name: "lookup", input: { q: "a\uFFFDb\uFFFDc" } });
  });

  it("turns an answer the database refuses for another reason into an error on the timeline at once", async () => {
    // A trigger of this test's own makes the database refuse one particular answer, as a constraint
    // svc did not foresee would.
    await server.db.read.execute(sql`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.stop_reason <> 'error' AND NEW.content_blocks::text LIKE '%poison%' THEN RAISE EXCEPTION 'poison refused'; END IF; RETURN NEW; END $$`);
    await server.db.read.execute(sql`CREATE TRIGGER refuse_poison BEFORE INSERT ON model_outputs FOR EACH ROW EXECUTE FUNCTION refuse_poison()`);
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "poison" }, { text: "after" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "say it");
    const list = await untilEvents(server.api, project, agentId, (events) => finalOutputs(events).length === 1);
    const error = finalOutputs(list)[0];
    expect(error.stop_reason).toBe("error");
    expect(error.content_blocks[0].text).toContain("svc could not store the model's answer");
    await send(server.api, project, agentId, "and now");
    const after = await untilEvents(server.api, project, agentId, (events) => finalOutputs(events).length === 2);
    expect(finalOutputs(after)[1].content_blocks[0].text).toBe("after");
  });
});
