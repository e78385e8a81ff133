import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { useTestServer } from "../support/server.js";
import { createModel, createProvider, createSecret, ISO, MDL_ID, MREV_ID, pageAll } from "./models-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

/** A user with an org and one provider config of `format`; `models` is the config's models path. */
async function setup(format = "openai-responses") {
  const owner = await server.api.userWithOrg();
  const auth = { token: owner.token };
  const secretId = await createSecret(server.api, auth, owner.org.id);
  const config = (await createProvider(server.api, auth, owner.org.id, {
    name: "provider",
    api_format: format,
    base_url: fake.baseUrl,
    credential_secret_id: secretId,
  })).body.config;
  const models = `/api/v1/orgs/${owner.org.id}/model-provider-configs/${config.id}/models`;
  return { ...owner, auth, secretId, config, models };
}

describe("creating configured models", () => {
  it("stores the model with its first revision and the documented defaults", async () => {
    const { auth, org, config, models } = await setup();
    const reply = await server.api.post(models, { name: "GPT fake", provider_model_slug: "fake-model", context_window_tokens: 400000 }, auth);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(MDL_ID),
      org_id: org.id,
      model_provider_config_id: config.id,
      management_kind: "tenant",
      name: "GPT fake",
      current_revision_id: expect.stringMatching(MREV_ID),
      provider_model_slug: "fake-model",
      context_window_tokens: 400000,
      max_output_tokens: 8192,
      default_max_output_tokens: 4096,
      default_cache_retention: "short",
      supports_tools: true,
      supports_reasoning: false,
      default_reasoning_effort: "",
      supported_reasoning_efforts: [],
      input_modalities: [],
      output_modalities: [],
      api_variant_options: {},
      pricing: null,
      created_at: expect.stringMatching(ISO),
      updated_at: reply.body.created_at,
      revision_created_at: reply.body.created_at,
    });
    const listed = await server.api.get(models, auth);
    expect(listed.body).toEqual({ data: [reply.body], next_cursor: null });
  });

  it("scales the default limits to small windows and keeps every field given", async () => {
    const { auth, org, config } = await setup();
    const small = await createModel(server.api, auth, org.id, config.id, { name: "small", provider_model_slug: "s", context_window_tokens: 1000 });
    expect(small).toMatchObject({ max_output_tokens: 500, default_max_output_tokens: 500 });
    const tiny = await createModel(server.api, auth, org.id, config.id, { name: "tiny", provider_model_slug: "t", context_window_tokens: 2 });
    expect(tiny).toMatchObject({ max_output_tokens: 1, default_max_output_tokens: 1 });
    const raised = await createModel(server.api, auth, org.id, config.id, {
      name: "raised",
      provider_model_slug: "r",
      context_window_tokens: 200000,
      default_max_output_tokens: 20000,
    });
    expect(raised).toMatchObject({ max_output_tokens: 20000, default_max_output_tokens: 20000 });

    const full = await createModel(server.api, auth, org.id, config.id, {
      name: "full",
      provider_model_slug: "vendor/full-1",
      context_window_tokens: 1050000,
      max_output_tokens: 128000,
      default_max_output_tokens: 32000,
      default_cache_retention: "long",
      supports_tools: false,
      supports_reasoning: true,
      default_reasoning_effort: "medium",
      supported_reasoning_efforts: ["low", "medium", "high"],
      input_modalities: ["text", "image", "file"],
      output_modalities: ["text"],
      api_variant_options: { provider: { order: ["a", "b"] }, temperature: 0.2 },
    });
    expect(full).toMatchObject({
      provider_model_slug: "vendor/full-1",
      context_window_tokens: 1050000,
      max_output_tokens: 128000,
      default_max_output_tokens: 32000,
      default_cache_retention: "long",
      supports_tools: false,
      supports_reasoning: true,
      default_reasoning_effort: "medium",
      supported_reasoning_efforts: ["low", "medium", "high"],
      input_modalities: ["text", "image", "file"],
      output_modalities: ["text"],
      api_variant_options: { provider: { order: ["a", "b"] }, temperature: 0.2 },
    });
  });

  it("rejects inconsistent capabilities", async () => {
    const { auth, models } = await setup();
    const body = { name: "m", provider_model_slug: "fake-model", context_window_tokens: 1000 };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ max_output_tokens: 1000 }, "/max_output_tokens"],
      [{ max_output_tokens: 5000 }, "/max_output_tokens"],
      [{ default_max_output_tokens: 1000 }, "/context_window_tokens"],
      [{ max_output_tokens: 100, default_max_output_tokens: 200 }, "/default_max_output_tokens"],
      [{ context_window_tokens: 1 }, "/context_window_tokens"],
      [{ max_output_tokens: 0 }, "/max_output_tokens"],
      [{ default_reasoning_effort: "high" }, "/default_reasoning_effort"],
      [{ supported_reasoning_efforts: ["low"] }, "/supported_reasoning_efforts"],
      [{ supports_reasoning: true, default_reasoning_effort: "max", supported_reasoning_efforts: ["low"] }, "/default_reasoning_effort"],
      [{ default_cache_retention: "forever" }, "/default_cache_retention"],
      [{ provider_model_slug: "" }, "/provider_model_slug"],
      [{ api_variant_options: [] }, "/api_variant_options"],
      [{ supports_tools: "yes" }, "/supports_tools"],
      [{ unknown_field: 1 }, "/unknown_field"],
    ];
    for (const [patch, path] of cases) {
      const reply = await server.api.post(models, { ...body, ...patch }, auth);
      expect(reply.status, JSON.stringify(patch)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path), JSON.stringify(patch)).toContain(path);
    }
    const missing = await server.api.post(models, { name: "m" }, auth);
    expect(missing.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(["/context_window_tokens", "/provider_model_slug"]);
    expect((await server.api.get(models, auth)).body.data).toEqual([]);
  });

  it("keeps names unique per provider config", async () => {
    const { auth, org, secretId, models } = await setup();
    const body = { name: "shared", provider_model_slug: "fake-model", context_window_tokens: 100000 };
    expect((await server.api.post(models, body, auth)).status).toBe(201);
    const twin = await server.api.post(models, body, auth);
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe("conflict");
    const other = (await createProvider(server.api, auth, org.id, {
      name: "other",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    })).body.config;
    await createModel(server.api, auth, org.id, other.id, body);
  });

  it("needs an existing provider config of the caller's org", async () => {
    const { auth, org } = await setup();
    const body = { name: "m", provider_model_slug: "fake-model", context_window_tokens: 100000 };
    const missing = await server.api.post(`/api/v1/orgs/${org.id}/model-provider-configs/mpc_${"a".repeat(26)}/models`, body, auth);
    expect(missing.status).toBe(404);
    const foreign = await setup();
    const cross = await server.api.post(`/api/v1/orgs/${org.id}/model-provider-configs/${foreign.config.id}/models`, body, auth);
    expect(cross.status).toBe(404);
    expect((await server.api.get(`/api/v1/orgs/${org.id}/model-provider-configs/${foreign.config.id}/models`, auth)).status).toBe(404);
  });
});

describe("updating configured models", () => {
  it("adds a revision for runtime changes, renames without one, and writes nothing for no change", async () => {
    const { auth, org, config, models } = await setup();
    const created = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v1", context_window_tokens: 100000 });
    const path = `${models}/${created.id}`;

    const revised = await server.api.put(path, { provider_model_slug: "v2", context_window_tokens: 200000, supports_reasoning: true }, auth);
    expect(revised.status).toBe(200);
    expect(revised.body).toEqual({
      ...created,
      provider_model_slug: "v2",
      context_window_tokens: 200000,
      supports_reasoning: true,
      current_revision_id: expect.stringMatching(MREV_ID),
      updated_at: expect.stringMatching(ISO),
      revision_created_at: expect.stringMatching(ISO),
    });
    expect(revised.body.current_revision_id).not.toBe(created.current_revision_id);
    expect(Date.parse(revised.body.revision_created_at)).toBeGreaterThanOrEqual(Date.parse(created.revision_created_at));
    expect(revised.body.revision_created_at).not.toBe(created.revision_created_at);

    const renamed = await server.api.put(path, { name: "m renamed" }, auth);
    expect(renamed.body).toEqual({ ...revised.body, name: "m renamed", updated_at: expect.stringMatching(ISO) });
    expect(renamed.body.current_revision_id).toBe(revised.body.current_revision_id);

    const same = await server.api.put(path, { name: "m renamed", provider_model_slug: "v2", context_window_tokens: 200000 }, auth);
    expect(same.body).toEqual(renamed.body);
    expect((await server.api.put(path, {}, auth)).body).toEqual(renamed.body);

    const options = await server.api.put(path, { api_variant_options: { seed: 7 }, input_modalities: ["text"] }, auth);
    expect(options.body.current_revision_id).not.toBe(renamed.body.current_revision_id);
    expect(options.body).toMatchObject({ api_variant_options: { seed: 7 }, input_modalities: ["text"], provider_model_slug: "v2" });

    const listed = await server.api.get(models, auth);
    expect(listed.body.data).toEqual([options.body]);
  });

  it("checks the model as a whole after the update", async () => {
    const { auth, org, config, models } = await setup();
    const created = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v1", context_window_tokens: 100000 });
    const path = `${models}/${created.id}`;
    const shrink = await server.api.put(path, { context_window_tokens: 8192 }, auth);
    expect(shrink.status).toBe(400);
    expect(shrink.body.issues[0].path).toBe("/context_window_tokens");
    const cleared = await server.api.put(path, { default_max_output_tokens: null }, auth);
    expect(cleared.status).toBe(200);
    expect(cleared.body.default_max_output_tokens).toBeNull();
    const effort = await server.api.put(path, { default_reasoning_effort: "low" }, auth);
    expect(effort.status).toBe(400);
    for (const body of [{ max_output_tokens: null }, { model_provider_config_id: config.id }, { name: "" }]) {
      expect((await server.api.put(path, body, auth)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await server.api.get(models, auth)).body.data[0]).toEqual(cleared.body);
  });

  it("requires an output cap for Anthropic Messages", async () => {
    const { auth, org, config, models } = await setup("anthropic-messages");
    const created = await createModel(server.api, auth, org.id, config.id, { name: "claude", provider_model_slug: "c", context_window_tokens: 200000 });
    const reply = await server.api.put(`${models}/${created.id}`, { default_max_output_tokens: null }, auth);
    expect(reply.status).toBe(400);
    expect(reply.body.issues).toEqual([{ path: "/default_max_output_tokens", message: expect.stringContaining("anthropic-messages") }]);
  });

  it("refuses a rename onto a taken name and answers 404 for unknown models", async () => {
    const { auth, org, config, models } = await setup();
    await createModel(server.api, auth, org.id, config.id, { name: "a", provider_model_slug: "a", context_window_tokens: 1000 });
    const b = await createModel(server.api, auth, org.id, config.id, { name: "b", provider_model_slug: "b", context_window_tokens: 1000 });
    const clash = await server.api.put(`${models}/${b.id}`, { name: "a" }, auth);
    expect(clash.status).toBe(409);
    expect((await server.api.put(`${models}/mdl_${"a".repeat(26)}`, { name: "c" }, auth)).status).toBe(404);
    expect((await server.api.put(`${models}/not-an-id`, { name: "c" }, auth)).status).toBe(404);
  });
});

describe("deleting configured models", () => {
  it("refuses while a project holds a grant, then deletes", async () => {
    const { auth, org, project, config, models } = await setup();
    const model = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v1", context_window_tokens: 1000 });
    const grant = await server.api.post(`/api/v1/orgs/${org.id}/projects/${project.id}/model-grants`, { configured_model_id: model.id }, auth);
    expect(grant.status).toBe(201);
    const refused = await server.api.delete(`${models}/${model.id}`, auth);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    expect((await server.api.delete(`/api/v1/orgs/${org.id}/projects/${project.id}/model-grants/${grant.body.grant.id}`, auth)).status).toBe(204);
    expect((await server.api.delete(`${models}/${model.id}`, auth)).status).toBe(204);
    expect((await server.api.get(models, auth)).body.data).toEqual([]);
    expect((await server.api.delete(`${models}/${model.id}`, auth)).status).toBe(404);
  });

  it("frees the name and lets the provider config go", async () => {
    const { auth, org, config, models } = await setup();
    const model = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v1", context_window_tokens: 1000 });
    await server.api.put(`${models}/${model.id}`, { provider_model_slug: "v2" }, auth);
    expect((await server.api.delete(`${models}/${model.id}`, auth)).status).toBe(204);
    await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v3", context_window_tokens: 1000 });
    const again = await server.api.get(models, auth);
    expect(again.body.data.map((m: { provider_model_slug: string }) => m.provider_model_slug)).toEqual(["v3"]);
  });
});

describe("listing configured models", () => {
  it("orders newest first and pages through every model once", async () => {
    const { auth, org, config, models } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await createModel(server.api, auth, org.id, config.id, { name: `m${i}`, provider_model_slug: `s${i}`, context_window_tokens: 1000 })).id);
    }
    const all = await pageAll(server.api, auth, `${models}?limit=3`);
    expect(all.map((m) => m.id)).toEqual([...ids].reverse());
    const first = await server.api.get(`${models}?limit=3`, auth);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect((await server.api.get(`${models}?sort=name`, auth)).status).toBe(400);
    expect((await server.api.get(`${models}?limit=101`, auth)).status).toBe(400);
  });
});

describe("access to configured models", () => {
  it("lets members read and only managers write; outsiders get 404", async () => {
    const { auth, token, org, config, models } = await setup();
    const model = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "v1", context_window_tokens: 1000 });
    const member = await server.api.orgMember({ token }, org.id, "member");
    const memberAuth = { token: member.token };
    expect((await server.api.get(models, memberAuth)).body.data).toHaveLength(1);
    expect((await server.api.post(models, { name: "n", provider_model_slug: "n", context_window_tokens: 1000 }, memberAuth)).status).toBe(403);
    expect((await server.api.put(`${models}/${model.id}`, { name: "n" }, memberAuth)).status).toBe(403);
    expect((await server.api.delete(`${models}/${model.id}`, memberAuth)).status).toBe(403);

    const outsider = await server.api.userWithOrg();
    const outsiderAuth = { token: outsider.token };
    expect((await server.api.get(models, outsiderAuth)).status).toBe(404);
    expect((await server.api.post(models, { name: "n", provider_model_slug: "n", context_window_tokens: 1000 }, outsiderAuth)).status).toBe(404);
    expect((await server.api.put(`${models}/${model.id}`, { name: "n" }, outsiderAuth)).status).toBe(404);
    expect((await server.api.delete(`${models}/${model.id}`, outsiderAuth)).status).toBe(404);
  });
});
