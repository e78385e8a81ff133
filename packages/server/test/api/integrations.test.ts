import { describe, expect, it } from "vitest";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, createProfile, expectClosedIntegration, integrationProject, ISO, ITG_ID } from "./integrations-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });

describe("integrations: the resource", () => {
  it("creates a disconnected slack_thread integration that carries its catalog and only the spec's members", async () => {
    const p = await integrationProject(server.api);
    const created = await createIntegration(server.api, p, "engineering");
    expect(created).toEqual({
      id: expect.stringMatching(ITG_ID),
      project_id: p.projectId,
      name: "engineering",
      integration_kind: "slack_thread",
      state: "disconnected",
      setup_revision: 1,
      settings: {},
      provider_agent_display_name: "",
      provider_config: {},
      capabilities: expect.objectContaining({ tools: expect.objectContaining({ read: expect.any(Object), post_message: expect.any(Object) }) }),
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expectClosedIntegration(created);
    const read = await server.api.get(`${p.integrations}/${created.id}`, { token: p.token });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual(created);
  });

  it("publishes the catalog at integration-definitions, for every kind svc implements", async () => {
    const p = await integrationProject(server.api);
    const reply = await server.api.get(`${p.base}/integration-definitions`, { token: p.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.data.map((d: { integration_kind: string }) => d.integration_kind)).toEqual(["slack_thread", "discord_thread", "github_pr"]);
    const { capabilities } = reply.body.data[0];
    expect(Object.keys(capabilities).sort()).toEqual(["interaction_handler", "schedule", "settings", "subscription", "tools"]);
    expect(capabilities.tools.read.input_schema.properties).toEqual({ cursor: expect.any(Object), limit: expect.any(Object) });
    expect(capabilities.tools.post_message.input_schema.properties.artifact_ids.maxItems).toBe(20);
    expect(capabilities.subscription.conversation_schema.required).toEqual(["channel_id", "thread_ts"]);
    expect(capabilities.settings.input_schema.properties.launcher.required).toEqual(["profiles"]);
    const made = await createIntegration(server.api, p, "eng");
    expect(made.capabilities).toEqual(capabilities);
  });

  it("refuses bad names, kinds svc does not implement, unknown fields and a taken name", async () => {
    const p = await integrationProject(server.api);
    const auth = { token: p.token };
    for (const name of ["", "1abc", "has space", "under_score", "a".repeat(33)]) {
      const reply = await server.api.post(p.integrations, { name, integration_kind: "slack_thread" }, auth);
      expect(reply.status, name).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues[0].path).toBe("/name");
    }
    const unknown = await server.api.post(p.integrations, { name: "d", integration_kind: "teams_thread" }, auth);
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toBe("/integration_kind");
    const extra = await server.api.post(p.integrations, { name: "x", integration_kind: "slack_thread", state: "active" }, auth);
    expect(extra.status).toBe(400);
    expect(extra.body.issues).toEqual([{ path: "/state", message: "unknown field" }]);
    await createIntegration(server.api, p, "A-1");
    const twice = await server.api.post(p.integrations, { name: "A-1", integration_kind: "slack_thread" }, auth);
    expect(twice.status, twice.text).toBe(409);
    expect(twice.body.code).toBe("conflict");
    // Another project may use the name.
    const other = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Other" }, auth);
    const elsewhere = await server.api.post(`/api/v1/orgs/${p.orgId}/projects/${other.body.id}/integrations`, { name: "A-1", integration_kind: "slack_thread" }, auth);
    expect(elsewhere.status, elsewhere.text).toBe(201);
  });

  it("validates settings against the catalog's schema, and the launcher's profiles against the project", async () => {
    const p = await integrationProject(server.api);
    const profile = await createProfile(server.api, p);
    const auth = { token: p.token };
    const bad = async (settings: unknown, path: string) => {
      const reply = await server.api.post(p.integrations, { name: "s", integration_kind: "slack_thread", settings }, auth);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path)).toContain(path);
    };
    await bad({ colour: "blue" }, "/settings/colour");
    await bad({ launcher: {} }, "/settings/launcher/profiles");
    await bad({ launcher: { profiles: ["not-a-profile"] } }, "/settings/launcher/profiles/0");
    await bad({ launcher: { profiles: [profile, profile] } }, "/settings/launcher/profiles");
    await bad({ launcher: { profiles: [profile], channel_id: "general" } }, "/settings/launcher/channel_id");
    const missing = profile.replace(/.$/, profile.endsWith("a") ? "b" : "a");
    await bad({ launcher: { profiles: [profile, missing] } }, "/settings/launcher/profiles/1");
    const made = await createIntegration(server.api, p, "s", { launcher: { channel_id: "C0123ABC", profiles: [profile] } });
    expect(made.settings).toEqual({ launcher: { channel_id: "C0123ABC", profiles: [profile] } });
  });

  it("PUT replaces only the settings: setup_revision, name and kind stay", async () => {
    const p = await integrationProject(server.api);
    const [first, second] = [await createProfile(server.api, p, "one"), await createProfile(server.api, p, "two")];
    const made = await createIntegration(server.api, p, "eng", { launcher: { profiles: [first] } });
    const path = `${p.integrations}/${made.id}`;
    const put = await server.api.put(path, { settings: { launcher: { profiles: [second, first] } } }, { token: p.token });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ ...made, settings: { launcher: { profiles: [second, first] } }, updated_at: expect.stringMatching(ISO) });
    expect(put.body.setup_revision).toBe(1);
    const cleared = await server.api.put(path, { settings: {} }, { token: p.token });
    expect(cleared.body.settings).toEqual({});
    expect((await server.api.get(path, { token: p.token })).body.settings).toEqual({});
  });

  it("PUT answers its errors: unknown fields, immutable members, bad settings, a missing integration, no permission", async () => {
    const p = await integrationProject(server.api);
    const made = await createIntegration(server.api, p, "eng");
    const path = `${p.integrations}/${made.id}`;
    const auth = { token: p.token };
    const renamed = await server.api.put(path, { settings: {}, name: "other" }, auth);
    expect(renamed.status).toBe(400);
    expect(renamed.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: [{ path: "/name", message: "unknown field" }] });
    const rekinded = await server.api.put(path, { settings: {}, integration_kind: "github_pr" }, auth);
    expect(rekinded.body.issues).toEqual([{ path: "/integration_kind", message: "unknown field" }]);
    const none = await server.api.put(path, {}, auth);
    expect(none.status).toBe(400);
    expect(none.body.issues).toEqual([{ path: "/settings", message: "is required" }]);
    const invalid = await server.api.put(path, { settings: { launcher: { profiles: "all" } } }, auth);
    expect(invalid.status).toBe(400);
    expect(invalid.body.issues[0].path).toBe("/settings/launcher/profiles");
    const missing = await server.api.put(`${p.integrations}/itg_${"a".repeat(26)}`, { settings: {} }, auth);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    const unauthenticated = await server.api.put(path, { settings: {} });
    expect(unauthenticated.status).toBe(401);
    // A viewer reads but does not change.
    const viewer = await server.api.orgMember({ token: p.token }, p.orgId);
    const role = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${viewer.userId}/projects/${p.projectId}`, { role: "viewer" }, auth);
    expect(role.status, role.text).toBe(200);
    expect((await server.api.get(path, { token: viewer.token })).status).toBe(200);
    const forbidden = await server.api.put(path, { settings: {} }, { token: viewer.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe("forbidden");
    expect((await server.api.delete(path, { token: viewer.token })).status).toBe(403);
    // Nothing changed on any of them.
    expect((await server.api.get(path, auth)).body).toEqual(made);
  });

  it("lists per project and org-wide, newest first, with the name glob, paged, only in projects the caller can read", async () => {
    const p = await integrationProject(server.api);
    const auth = { token: p.token };
    const other = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Other" }, auth);
    const hidden = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Hidden" }, auth);
    const inOther = (name: string) => createIntegration(server.api, { integrations: `/api/v1/orgs/${p.orgId}/projects/${other.body.id}/integrations`, token: p.token }, name);
    const made = [
      await createIntegration(server.api, p, "alpha"),
      await inOther("beta"),
      await createIntegration(server.api, p, "alpine"),
      await createIntegration(server.api, { integrations: `/api/v1/orgs/${p.orgId}/projects/${hidden.body.id}/integrations`, token: p.token }, "gamma"),
    ];
    const newestFirst = [...made].reverse();
    const all = await collectPages(server.api, `/api/v1/orgs/${p.orgId}/integrations?limit=1`, auth, (reply) => expect(reply.body.data.length).toBeLessThanOrEqual(1));
    expect(all).toEqual(newestFirst);
    expect(all.map((item) => item.project_id)).toEqual([hidden.body.id, p.projectId, other.body.id, p.projectId]);
    const alp = await server.api.get(`/api/v1/orgs/${p.orgId}/integrations?name=ALP*`, auth);
    expect(alp.body.data.map((i: { name: string }) => i.name)).toEqual(["alpine", "alpha"]);
    const project = await collectPages(server.api, `${p.integrations}?limit=1`, auth);
    expect(project.map((i) => i.name)).toEqual(["alpine", "alpha"]);

    // A member who can read two of the three projects sees their integrations only.
    const member = await server.api.orgMember({ token: p.token }, p.orgId);
    for (const projectId of [p.projectId, other.body.id]) {
      const role = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${projectId}`, { role: "viewer" }, auth);
      expect(role.status, role.text).toBe(200);
    }
    const seen = await collectPages(server.api, `/api/v1/orgs/${p.orgId}/integrations`, { token: member.token });
    expect(seen.map((i) => i.name)).toEqual(["alpine", "beta", "alpha"]);
    const hiddenList = await server.api.get(`/api/v1/orgs/${p.orgId}/projects/${hidden.body.id}/integrations`, { token: member.token });
    expect(hiddenList.status).toBe(404);
    const hiddenOne = await server.api.get(`/api/v1/orgs/${p.orgId}/projects/${hidden.body.id}/integrations/${made[3].id}`, { token: member.token });
    expect(hiddenOne.status).toBe(404);
    // A stranger to the org sees nothing, not even that it exists.
    const stranger = await server.api.userWithOrg();
    expect((await server.api.get(`/api/v1/orgs/${p.orgId}/integrations`, { token: stranger.token })).status).toBe(404);
    const badLimit = await server.api.get(`/api/v1/orgs/${p.orgId}/integrations?limit=101`, auth);
    expect(badLimit.status).toBe(400);
  });

  it("DELETE removes the integration and frees its name; agents' profiles stay", async () => {
    const p = await integrationProject(server.api);
    const profile = await createProfile(server.api, p);
    const made = await createIntegration(server.api, p, "eng", { launcher: { profiles: [profile] } });
    const path = `${p.integrations}/${made.id}`;
    const removed = await server.api.delete(path, { token: p.token });
    expect(removed.status, removed.text).toBe(204);
    expect((await server.api.get(path, { token: p.token })).status).toBe(404);
    expect((await server.api.delete(path, { token: p.token })).status).toBe(404);
    expect((await server.api.get(`${p.base}/agent-profiles/${profile}`, { token: p.token })).status).toBe(200);
    const again = await createIntegration(server.api, p, "eng");
    expect(again.id).not.toBe(made.id);
  });
});
