import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { useTestServer } from "../support/server.js";
import { createModel, createProvider, createSecret, ISO, PMOG_ID, pageAll } from "./models-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

const REASONING_MODEL = {
  name: "thinker",
  provider_model_slug: "fake-model",
  context_window_tokens: 200000,
  max_output_tokens: 64000,
  default_max_output_tokens: 16000,
  default_cache_retention: "short",
  supports_tools: true,
  supports_reasoning: true,
  default_reasoning_effort: "medium",
  supported_reasoning_efforts: ["low", "medium", "high"],
  input_modalities: ["text", "image"],
  output_modalities: ["text"],
};

/** An org with a provider config and one reasoning model; `grants` is the default project's grants path. */
async function setup() {
  const owner = await server.api.userWithOrg();
  const auth = { token: owner.token };
  const secretId = await createSecret(server.api, auth, owner.org.id);
  const config = (await createProvider(server.api, auth, owner.org.id, {
    name: "Fake provider",
    api_format: "openai-responses",
    base_url: fake.baseUrl,
    credential_secret_id: secretId,
  })).body.config;
  const model = await createModel(server.api, auth, owner.org.id, config.id, REASONING_MODEL);
  const grants = `/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}/model-grants`;
  return { ...owner, auth, config, model, grants };
}

describe("granting a model to a project", () => {
  it("creates a grant that inherits everything, and lists it with a summary of the model", async () => {
    const { auth, org, project, config, model, grants } = await setup();
    const reply = await server.api.post(grants, { configured_model_id: model.id }, auth);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      grant: {
        id: expect.stringMatching(PMOG_ID),
        org_id: org.id,
        project_id: project.id,
        configured_model_id: model.id,
        context_window_tokens: null,
        max_output_tokens: null,
        default_max_output_tokens: null,
        supports_tools: null,
        supports_reasoning: null,
        supported_reasoning_efforts: [],
        input_modalities: [],
        output_modalities: [],
        created_at: expect.stringMatching(ISO),
        updated_at: reply.body.grant.created_at,
      },
    });
    const listed = await server.api.get(grants, auth);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      data: [
        {
          grant: reply.body.grant,
          model: {
            id: model.id,
            org_id: org.id,
            model_provider_config_id: config.id,
            name: "thinker",
            provider_config: "Fake provider",
            created_at: model.created_at,
            updated_at: model.updated_at,
          },
        },
      ],
      next_cursor: null,
    });
  });

  it("stores narrowing overrides", async () => {
    const { auth, model, grants } = await setup();
    const overrides = {
      context_window_tokens: 100000,
      max_output_tokens: 32000,
      default_max_output_tokens: 8000,
      default_cache_retention: "none",
      supports_tools: false,
      supports_reasoning: true,
      default_reasoning_effort: "low",
      supported_reasoning_efforts: ["low", "medium"],
      input_modalities: ["text"],
      output_modalities: ["text"],
    };
    const reply = await server.api.post(grants, { configured_model_id: model.id, ...overrides }, auth);
    expect(reply.status).toBe(201);
    expect(reply.body.grant).toMatchObject(overrides);
  });

  it("refuses overrides that widen the model or do not hold together", async () => {
    const { auth, model, grants } = await setup();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ context_window_tokens: 300000 }, "/context_window_tokens"],
      [{ max_output_tokens: 70000 }, "/max_output_tokens"],
      [{ context_window_tokens: 10000, max_output_tokens: 10000 }, "/max_output_tokens"],
      [{ context_window_tokens: 10000 }, "/default_max_output_tokens"],
      [{ max_output_tokens: 1000 }, "/default_max_output_tokens"],
      [{ default_max_output_tokens: 65000 }, "/default_max_output_tokens"],
      [{ supported_reasoning_efforts: ["max"] }, "/supported_reasoning_efforts"],
      [{ supported_reasoning_efforts: ["low"] }, "/default_reasoning_effort"],
      [{ supports_reasoning: false, default_reasoning_effort: "low" }, "/default_reasoning_effort"],
      [{ input_modalities: ["audio"] }, "/input_modalities"],
      [{ output_modalities: ["image"] }, "/output_modalities"],
      [{ default_cache_retention: "forever" }, "/default_cache_retention"],
      [{ context_window_tokens: null }, "/context_window_tokens"],
      [{ extra: 1 }, "/extra"],
    ];
    for (const [overrides, path] of cases) {
      const reply = await server.api.post(grants, { configured_model_id: model.id, ...overrides }, auth);
      expect(reply.status, JSON.stringify(overrides)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path), JSON.stringify(overrides)).toContain(path);
    }
    expect((await server.api.get(grants, auth)).body.data).toEqual([]);
  });

  it("cannot turn on what the model lacks", async () => {
    const { auth, org, config, grants } = await setup();
    const plain = await createModel(server.api, auth, org.id, config.id, {
      name: "plain",
      provider_model_slug: "p",
      context_window_tokens: 1000,
      supports_tools: false,
    });
    const reply = await server.api.post(grants, { configured_model_id: plain.id, supports_tools: true, supports_reasoning: true }, auth);
    expect(reply.status).toBe(400);
    expect(reply.body.issues.map((i: { path: string }) => i.path)).toEqual(["/supports_tools", "/supports_reasoning"]);
    const off = await server.api.post(grants, { configured_model_id: plain.id, supports_tools: false, supports_reasoning: false }, auth);
    expect(off.status).toBe(201);
  });

  it("allows one grant per project and model, of a model of the same org", async () => {
    const { auth, org, model, grants } = await setup();
    expect((await server.api.post(grants, { configured_model_id: model.id }, auth)).status).toBe(201);
    const twin = await server.api.post(grants, { configured_model_id: model.id }, auth);
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe("conflict");

    const project = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Second" }, auth);
    const second = `/api/v1/orgs/${org.id}/projects/${project.body.id}/model-grants`;
    expect((await server.api.post(second, { configured_model_id: model.id }, auth)).status).toBe(201);

    const other = await setup();
    const foreign = await server.api.post(grants, { configured_model_id: other.model.id }, auth);
    expect(foreign.status).toBe(404);
    expect((await server.api.post(grants, { configured_model_id: `mdl_${"a".repeat(26)}` }, auth)).status).toBe(404);
    expect((await server.api.post(grants, { configured_model_id: "mdl_bad" }, auth)).status).toBe(400);
    expect((await server.api.post(`/api/v1/orgs/${org.id}/projects/proj_${"a".repeat(26)}/model-grants`, { configured_model_id: model.id }, auth)).status).toBe(404);
  });
});

describe("updating a grant", () => {
  it("sets overrides, keeps omitted ones, and clears them with null or an empty list", async () => {
    const { auth, model, grants } = await setup();
    const created = (await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant;
    const path = `${grants}/${created.id}`;

    const set = await server.api.patch(
      path,
      {
        context_window_tokens: 50000,
        max_output_tokens: 20000,
        default_cache_retention: "long",
        supports_tools: false,
        default_reasoning_effort: "high",
        supported_reasoning_efforts: ["medium", "high"],
        input_modalities: ["text"],
      },
      auth,
    );
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      grant: {
        ...created,
        context_window_tokens: 50000,
        max_output_tokens: 20000,
        default_cache_retention: "long",
        supports_tools: false,
        default_reasoning_effort: "high",
        supported_reasoning_efforts: ["medium", "high"],
        input_modalities: ["text"],
        updated_at: expect.stringMatching(ISO),
      },
    });

    const partial = await server.api.patch(path, { default_max_output_tokens: 4000 }, auth);
    expect(partial.body.grant).toEqual({ ...set.body.grant, default_max_output_tokens: 4000, updated_at: expect.stringMatching(ISO) });

    const cleared = await server.api.patch(
      path,
      {
        context_window_tokens: null,
        max_output_tokens: null,
        default_max_output_tokens: null,
        default_cache_retention: null,
        supports_tools: null,
        default_reasoning_effort: null,
        supported_reasoning_efforts: [],
        input_modalities: [],
      },
      auth,
    );
    expect(cleared.status).toBe(200);
    expect(cleared.body.grant).toEqual({ ...created, updated_at: expect.stringMatching(ISO) });
    expect(cleared.body.grant).not.toHaveProperty("default_cache_retention");
    expect(cleared.body.grant).not.toHaveProperty("default_reasoning_effort");

    const listed = await server.api.get(grants, auth);
    expect(listed.body.data[0].grant).toEqual(cleared.body.grant);
  });

  it("checks the result against the model's current revision", async () => {
    const { auth, org, config, model, grants } = await setup();
    const grant = (await server.api.post(grants, { configured_model_id: model.id, context_window_tokens: 150000 }, auth)).body.grant;
    const path = `${grants}/${grant.id}`;
    expect((await server.api.patch(path, { max_output_tokens: 70000 }, auth)).status).toBe(400);
    // The model shrinks; an update is checked against the new revision, whose window the old override exceeds.
    await server.api.put(`/api/v1/orgs/${org.id}/model-provider-configs/${config.id}/models/${model.id}`, { context_window_tokens: 100000 }, auth);
    const stale = await server.api.patch(path, { supports_tools: false }, auth);
    expect(stale.status).toBe(400);
    expect(stale.body.issues.map((i: { path: string }) => i.path)).toEqual(["/context_window_tokens"]);
    expect((await server.api.patch(path, { context_window_tokens: 90000 }, auth)).status).toBe(200);
  });

  it("rejects empty, unknown and malformed updates, and unknown grants", async () => {
    const { auth, model, grants } = await setup();
    const grant = (await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant;
    for (const body of [{}, { configured_model_id: model.id }, { supports_tools: "no" }, { context_window_tokens: 0 }]) {
      const reply = await server.api.patch(`${grants}/${grant.id}`, body, auth);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
    expect((await server.api.patch(`${grants}/pmog_${"a".repeat(26)}`, { supports_tools: false }, auth)).status).toBe(404);
    expect((await server.api.patch(`${grants}/sgr_${"a".repeat(26)}`, { supports_tools: false }, auth)).status).toBe(404);
  });
});

describe("deleting a grant", () => {
  it("removes the project's access and keeps the model", async () => {
    const { auth, org, config, model, grants } = await setup();
    const grant = (await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant;
    expect((await server.api.delete(`${grants}/${grant.id}`, auth)).status).toBe(204);
    expect((await server.api.get(grants, auth)).body.data).toEqual([]);
    expect((await server.api.delete(`${grants}/${grant.id}`, auth)).status).toBe(404);
    expect((await server.api.patch(`${grants}/${grant.id}`, { supports_tools: false }, auth)).status).toBe(404);
    const models = await server.api.get(`/api/v1/orgs/${org.id}/model-provider-configs/${config.id}/models`, auth);
    expect(models.body.data.map((m: { id: string }) => m.id)).toEqual([model.id]);
  });

  it("only finds grants of the project in the path", async () => {
    const { auth, org, model, grants } = await setup();
    const grant = (await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant;
    const project = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Elsewhere" }, auth);
    const elsewhere = `/api/v1/orgs/${org.id}/projects/${project.body.id}/model-grants/${grant.id}`;
    expect((await server.api.delete(elsewhere, auth)).status).toBe(404);
    expect((await server.api.patch(elsewhere, { supports_tools: false }, auth)).status).toBe(404);
    expect((await server.api.get(grants, auth)).body.data).toHaveLength(1);
  });
});

describe("listing grants", () => {
  it("filters and sorts by the model's name and pages through every grant once", async () => {
    const { auth, org, config, grants } = await setup();
    const names = ["zeta", "Alpha", "beta-1", "beta-2", "gamma"];
    const grantIds: string[] = [];
    for (const name of names) {
      const model = await createModel(server.api, auth, org.id, config.id, { name, provider_model_slug: name, context_window_tokens: 1000 });
      grantIds.push((await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant.id);
    }
    const newest = await pageAll(server.api, auth, `${grants}?limit=2`);
    expect(newest.map((i) => i.grant.id)).toEqual([...grantIds].reverse());
    const byName = await pageAll(server.api, auth, `${grants}?limit=2&sort=name`);
    expect(byName.map((i) => i.model.name)).toEqual(["Alpha", "beta-1", "beta-2", "gamma", "zeta"]);
    const byNameDesc = await pageAll(server.api, auth, `${grants}?limit=4&sort=-name`);
    expect(byNameDesc.map((i) => i.model.name)).toEqual(["zeta", "gamma", "beta-2", "beta-1", "Alpha"]);
    const oldest = await pageAll(server.api, auth, `${grants}?limit=3&sort=created_at`);
    expect(oldest.map((i) => i.grant.id)).toEqual(grantIds);

    await server.api.patch(`${grants}/${grantIds[0]}`, { supports_tools: false }, auth);
    const recent = await pageAll(server.api, auth, `${grants}?limit=2&sort=-updated_at`);
    expect(recent[0].grant.id).toBe(grantIds[0]);
    expect(new Set(recent.map((i) => i.grant.id)).size).toBe(5);

    const beta = await server.api.get(`${grants}?name=BETA-*`, auth);
    expect(beta.body.data.map((i: { model: { name: string } }) => i.model.name).sort()).toEqual(["beta-1", "beta-2"]);
    expect((await server.api.get(`${grants}?sort=up`, auth)).status).toBe(400);
    expect((await server.api.get(`${grants}?cursor=%%%`, auth)).status).toBe(400);
  });
});

describe("access to grants", () => {
  it("lets project admins manage grants, viewers list them, and nobody else see them", async () => {
    const { auth, token, org, project, model, grants } = await setup();
    const granted = (await server.api.post(grants, { configured_model_id: model.id }, auth)).body.grant;
    const path = `${grants}/${granted.id}`;
    const roleOn = async (role: string) => {
      const member = await server.api.orgMember({ token }, org.id, "member");
      if (role !== "none") {
        const set = await server.api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/${project.id}`, { role }, auth);
        expect(set.status, set.text).toBe(200);
      }
      return { token: member.token };
    };

    const admin = await roleOn("admin");
    expect((await server.api.patch(path, { supports_tools: false }, admin)).status).toBe(200);
    expect((await server.api.delete(path, admin)).status).toBe(204);
    const again = await server.api.post(grants, { configured_model_id: model.id }, admin);
    expect(again.status).toBe(201);
    const againPath = `${grants}/${again.body.grant.id}`;

    for (const role of ["viewer", "operator", "developer"]) {
      const caller = await roleOn(role);
      expect((await server.api.get(grants, caller)).body.data, role).toHaveLength(1);
      expect((await server.api.post(grants, { configured_model_id: model.id }, caller)).status, role).toBe(403);
      expect((await server.api.patch(againPath, { supports_tools: false }, caller)).status, role).toBe(403);
      expect((await server.api.delete(againPath, caller)).status, role).toBe(403);
    }

    const noRole = await roleOn("none");
    const outsider = await server.api.userWithOrg();
    for (const caller of [noRole, { token: outsider.token }]) {
      expect((await server.api.get(grants, caller)).status).toBe(404);
      expect((await server.api.post(grants, { configured_model_id: model.id }, caller)).status).toBe(404);
      expect((await server.api.patch(againPath, { supports_tools: false }, caller)).status).toBe(404);
      expect((await server.api.delete(againPath, caller)).status).toBe(404);
    }
  });
});
