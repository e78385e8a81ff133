import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, requestText, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import { sendForm, skillMd, skillZip, uploadSkill } from "../api/skills-fixtures.js";

/** Skills in agents: the config's `skills` section, the catalog in the instruction, and the `skill` tool. */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const skillsYaml = (...ids: string[]) => `skills:\n${ids.map((id) => `  - ${id}`).join("\n")}\n`;

describe("the skills section of a config", () => {
  it("attaches skills the project owns or was granted, and names the others with line and column", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const own = await uploadSkill(server.url, auth, project.orgId, { kind: "project", project_id: project.projectId }, skillZip("own"));
    const orgSkill = await uploadSkill(server.url, auth, project.orgId, { kind: "org" }, skillZip("org-wide"));
    const twin = await uploadSkill(server.url, auth, project.orgId, { kind: "user" }, skillZip("own"));
    await server.api.post(`/api/v1/orgs/${project.orgId}/skills/${twin.id}/grants`, { target_project_id: project.projectId }, auth);
    const unknown = encodeId("skill", newUuid());
    const refused = await server.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project, skillsYaml(own.id, orgSkill.id, unknown, own.id, twin.id, "nope")), source_format: "yaml" }, auth);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe("validation_failed");
    expect(refused.body.issues).toEqual([
      { path: "/skills/3", message: `${own.id} is listed twice`, line: 10, column: 5 },
      { path: "/skills/5", message: 'must be a skill id (skl_…); got "nope"', line: 12, column: 5 },
      { path: "/skills/1", message: `no skill ${orgSkill.id} is owned by or granted to this project`, line: 8, column: 5 },
      { path: "/skills/2", message: `no skill ${unknown} is owned by or granted to this project`, line: 9, column: 5 },
      { path: "/skills/4", message: 'another attached skill is also named "own"; the skill tool finds skills by name', line: 11, column: 5 },
    ]);
    await server.api.post(`/api/v1/orgs/${project.orgId}/skills/${orgSkill.id}/grants`, { target_project_id: project.projectId }, auth);
    expect((await server.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project, skillsYaml(own.id, orgSkill.id)), source_format: "yaml" }, auth)).status).toBe(201);
  });
});

describe("the skill tool", () => {
  it("shows the catalog, returns the pinned SKILL.md with the file list, and keeps the skill from deletion while the agent is active", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const md = skillMd("release-notes", "Use when writing release notes.", "Always start with the date.\n");
    const skill = await uploadSkill(server.url, auth, project.orgId, { kind: "project", project_id: project.projectId }, skillZip("release-notes", md));
    const configId = await createConfig(server.api, project, yamlConfig(project, skillsYaml(skill.id)));
    // A later revision does not change an agent whose config pinned the first.
    await sendForm(server.url, "POST", `/api/v1/orgs/${project.orgId}/skills/${skill.id}`, auth, { skill_md: { file: Buffer.from(skillMd("release-notes", "Newer.")) } });

    provider.script({ toolCalls: [{ name: "skill", input: { name: "release-notes" } }] }, { toolCalls: [{ name: "skill", input: { name: "missing" } }] }, { text: "Done." });
    const agentId = await launch(server.api, project, configId, "write the notes");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const results = list.filter((e) => e.event_kind === "tool_result");
    expect(results[0].outcome, JSON.stringify(results[0].content_blocks)).toBe("succeeded");
    const text = results[0].content_blocks[0].text as string;
    expect(text).toContain(md);
    expect(text).toContain("- templates/example.md (10 bytes)");
    expect(text).toContain("No machine is attached to this agent, so the skill's files were not installed anywhere");
    expect(text).not.toContain("Newer.");
    expect(results[1]).toMatchObject({ outcome: "failed", content_blocks: [{ type: "text", text: expect.stringContaining("Attached skills: release-notes") }] });
    const first = requestText(provider, 0);
    expect(first).toContain("release-notes: Use when writing release notes.");
    expect(first).toContain('"skill"');
    expect(requestText(provider, 1)).toContain("Always start with the date.");

    const path = `/api/v1/orgs/${project.orgId}/skills/${skill.id}`;
    const inUse = await server.api.delete(path, auth);
    expect(inUse.status).toBe(409);
    expect(inUse.body).toEqual({ error: expect.stringContaining("active agent"), code: "conflict" });
    expect((await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, auth)).status).toBe(200);
    expect((await server.api.delete(path, auth)).status).toBe(204);
  });

  it("saves a result over 50 KiB as an artifact and returns a preview", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const md = skillMd("big", "Use when big.", `${"A long instruction line.\n".repeat(3000)}`);
    const skill = await uploadSkill(server.url, auth, project.orgId, { kind: "org" }, skillZip("big", md));
    await server.api.post(`/api/v1/orgs/${project.orgId}/skills/${skill.id}/grants`, { target_project_id: project.projectId }, auth);
    provider.script({ toolCalls: [{ name: "skill", input: { name: "big" } }] }, { text: "Read it." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, skillsYaml(skill.id))), "go");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const result = list.find((e) => e.event_kind === "tool_result");
    expect(result.outcome).toBe("succeeded");
    const [marker, ref] = result.content_blocks;
    expect(marker).toMatchObject({ type: "structured_data", value: { content_type: "text/markdown", truncated: true, path: `/artifacts/${ref.artifact_id}` } });
    expect(marker.value.size_bytes).toBeGreaterThan(50 * 1024);
    expect(Buffer.byteLength(marker.value.preview)).toBeLessThanOrEqual(8 * 1024);
    expect(ref).toMatchObject({ type: "media_ref", artifact_id: expect.stringMatching(/^art_/) });
    const content = await fetch(`${server.url}${project.base}/agents/${agentId}/artifacts/${ref.artifact_id}/content`, { headers: { authorization: `Bearer ${project.token}` } });
    expect(content.status).toBe(200);
    expect(await content.text()).toContain(md);
  });
});
