import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { settingsForCreate } from "../../src/modules/models/providers-rules.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { useTestServer } from "../support/server.js";
import { createModel, createProvider, createSecret, ISO, MPC_ID, pageAll, startStaticProvider } from "./models-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

const base = (orgId: string) => `/api/v1/orgs/${orgId}/model-provider-configs`;

async function orgWithKey(value = "sk-test-key") {
  const owner = await server.api.userWithOrg();
  const secretId = await createSecret(server.api, owner, owner.org.id, { value });
  return { ...owner, auth: { token: owner.token }, secretId };
}

describe("creating provider configs", () => {
  it("creates a custom endpoint with the format's defaults and probes its model list with a bearer token", async () => {
    const { auth, org, secretId } = await orgWithKey("sk-bearer-secret");
    const reply = await createProvider(server.api, auth, org.id, {
      name: "Local chat",
      api_format: "openai-chat-completions",
      base_url: `${fake.baseUrl}//`,
      credential_secret_id: secretId,
    });
    expect(reply.body).toEqual({
      config: {
        id: expect.stringMatching(MPC_ID),
        org_id: org.id,
        management_kind: "tenant",
        name: "Local chat",
        api_format: "openai-chat-completions",
        api_variant: "default",
        base_url: fake.baseUrl,
        endpoint_path: "/chat/completions",
        request_timeout_ms: 600000,
        auth_kind: "bearer_token",
        auth_options: {},
        credential_secret_id: secretId,
        created_at: expect.stringMatching(ISO),
        updated_at: reply.body.config.created_at,
      },
      model_catalog: { status: "ok", models: [{ slug: "fake-model" }] },
    });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(fake.requests[0]!.headers["authorization"]).toBe("Bearer sk-bearer-secret");
    expect(fake.requests[0]!.headers["x-api-key"]).toBeUndefined();
    expect(reply.text).not.toContain("sk-bearer-secret");

    const read = await server.api.get(`${base(org.id)}/${reply.body.config.id}`, auth);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(reply.body.config);
  });

  it("defaults Anthropic Messages to the x-api-key header and sends anthropic-version on the probe", async () => {
    const { auth, org, secretId } = await orgWithKey("sk-ant-secret");
    const reply = await createProvider(server.api, auth, org.id, {
      name: "Claude",
      api_format: "anthropic-messages",
      base_url: fake.baseUrl,
      request_timeout_ms: 30000,
      credential_secret_id: secretId,
    });
    expect(reply.body.config).toMatchObject({
      api_format: "anthropic-messages",
      api_variant: "default",
      endpoint_path: "/messages",
      request_timeout_ms: 30000,
      auth_kind: "api_key_header",
      auth_options: { header_name: "x-api-key" },
    });
    expect(reply.body.model_catalog).toEqual({ status: "ok", models: [{ slug: "fake-model", display_name: "Fake model" }] });
    const seen = fake.requests[0]!;
    expect(seen.path).toBe("/v1/models");
    expect(seen.headers["x-api-key"]).toBe("sk-ant-secret");
    expect(seen.headers["authorization"]).toBeUndefined();
    expect(seen.headers["anthropic-version"]).toBe("2023-06-01");
  });

  it("puts the key in a custom header with api_key_header", async () => {
    const { auth, org, secretId } = await orgWithKey("custom-secret");
    const reply = await createProvider(server.api, auth, org.id, {
      name: "Gateway",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      endpoint_path: "/v2/responses",
      auth_kind: "api_key_header",
      auth_options: { header_name: "X-Gateway-Key" },
      credential_secret_id: secretId,
    });
    expect(reply.body.config).toMatchObject({ endpoint_path: "/v2/responses", auth_kind: "api_key_header", auth_options: { header_name: "X-Gateway-Key" } });
    expect(fake.requests[0]!.headers["x-gateway-key"]).toBe("custom-secret");
    expect(fake.requests[0]!.headers["authorization"]).toBeUndefined();
  });

  it("fills format, variant and auth from each preset", async () => {
    const { auth, org, secretId } = await orgWithKey("preset-secret");
    const expected = {
      openai: { api_format: "openai-responses", api_variant: "default", endpoint_path: "/responses", auth_kind: "bearer_token", auth_options: {} },
      openrouter: { api_format: "openai-chat-completions", api_variant: "openrouter", endpoint_path: "/chat/completions", auth_kind: "bearer_token", auth_options: {} },
      anthropic: { api_format: "anthropic-messages", api_variant: "default", endpoint_path: "/messages", auth_kind: "api_key_header", auth_options: { header_name: "x-api-key" } },
    } as const;
    for (const [preset, shape] of Object.entries(expected)) {
      // base_url points at the fake so no test ever calls the real provider.
      const reply = await createProvider(server.api, auth, org.id, { name: preset, preset, base_url: fake.baseUrl, credential_secret_id: secretId });
      expect(reply.body.config).toMatchObject({ ...shape, base_url: fake.baseUrl, request_timeout_ms: 600000 });
      expect(reply.body.model_catalog.status).toBe("ok");
    }
    const [openai, openrouter, anthropic] = fake.requests;
    expect(openai!.headers["authorization"]).toBe("Bearer preset-secret");
    expect(openrouter!.headers["authorization"]).toBe("Bearer preset-secret");
    expect(anthropic!.headers["x-api-key"]).toBe("preset-secret");
  });

  it("uses each preset's public base URL when none is given", () => {
    const preset = (name: "openai" | "openrouter" | "anthropic") => settingsForCreate({ name: "p", preset: name, credential_secret_id: "" });
    expect(preset("openai").baseUrl).toBe("https://api.openai.com/v1");
    expect(preset("openrouter").baseUrl).toBe("https://openrouter.ai/api/v1");
    expect(preset("anthropic").baseUrl).toBe("https://api.anthropic.com/v1");
  });

  it("rejects requests that do not describe a usable endpoint", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const create = (body: Record<string, unknown>) =>
      server.api.post(base(org.id), { name: "bad", credential_secret_id: secretId, ...body }, auth);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "/api_format"],
      [{ api_format: "openai-responses" }, "/base_url"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, endpoint_path: "responses" }, "/endpoint_path"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, endpoint_path: "/responses?x=1" }, "/endpoint_path"],
      [{ api_format: "openai-responses", base_url: "ftp://example.com/v1" }, "/base_url"],
      [{ api_format: "openai-responses", base_url: "not a url" }, "/base_url"],
      [{ api_format: "openai-responses", base_url: "https://user:pw@example.com/v1" }, "/base_url"],
      [{ api_format: "openai-responses", base_url: "https://example.com/v1?key=1" }, "/base_url"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, bogus: true }, "/bogus"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, api_variant: "openrouter" }, "/api_variant"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, api_variant: "bedrock" }, "/api_variant"],
      [{ preset: "openai", api_format: "anthropic-messages" }, "/api_format"],
      [{ preset: "anthropic", api_variant: "openrouter" }, "/api_variant"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, auth_kind: "api_key_header" }, "/auth_options/header_name"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, auth_options: { header_name: "x-key" } }, "/auth_options/header_name"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, auth_kind: "api_key_header", auth_options: { header_name: "Authorization" } }, "/auth_options/header_name"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, auth_kind: "api_key_header", auth_options: { header_name: "bad header" } }, "/auth_options/header_name"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, request_timeout_ms: 0 }, "/request_timeout_ms"],
      [{ api_format: "openai-responses", base_url: fake.baseUrl, name: " padded" }, "/name"],
    ];
    for (const [body, path] of cases) {
      const reply = await create(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path), JSON.stringify(body)).toContain(path);
    }
    const both = await create({});
    expect(both.body.issues.map((i: { path: string }) => i.path)).toEqual(["/api_format", "/base_url"]);
    expect(fake.requests).toHaveLength(0);
    expect((await server.api.get(base(org.id), auth)).body.data).toEqual([]);
  });

  it("keeps names unique in the organization", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const body = { name: "Primary", api_format: "openai-responses", base_url: fake.baseUrl, credential_secret_id: secretId };
    await createProvider(server.api, auth, org.id, body);
    const again = await server.api.post(base(org.id), body, auth);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");
    const other = await orgWithKey();
    await createProvider(server.api, other.auth, other.org.id, { ...body, credential_secret_id: other.secretId });
  });
});

describe("the credential secret", () => {
  it("must be an org-owned generic secret of the same organization", async () => {
    const { auth, org, project, secretId } = await orgWithKey();
    const body = (credential: string) => ({ name: "p", api_format: "openai-responses", base_url: fake.baseUrl, credential_secret_id: credential });
    const projectSecret = await createSecret(server.api, auth, org.id, { owner: { kind: "project", project_id: project.id } });
    const userSecret = await createSecret(server.api, auth, org.id, { owner: { kind: "user" } });
    const awsSecret = await createSecret(server.api, auth, org.id, {
      material: { kind: "aws_credentials", access_key_id: "AKIA", secret_access_key: "s" },
    });
    for (const credential of [projectSecret, userSecret, awsSecret]) {
      const reply = await server.api.post(base(org.id), body(credential), auth);
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.any(String) }]);
    }
    const other = await orgWithKey();
    const foreign = await server.api.post(base(org.id), body(other.secretId), auth);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    const missing = await server.api.post(base(org.id), body(`sec_${"a".repeat(26)}`), auth);
    expect(missing.status).toBe(404);
    const malformed = await server.api.post(base(org.id), body("sec_nope"), auth);
    expect(malformed.status).toBe(400);

    const ok = await createProvider(server.api, auth, org.id, body(secretId));
    const swap = await server.api.put(`${base(org.id)}/${ok.body.config.id}`, { credential_secret_id: projectSecret }, auth);
    expect(swap.status).toBe(400);
    const swapForeign = await server.api.put(`${base(org.id)}/${ok.body.config.id}`, { credential_secret_id: other.secretId }, auth);
    expect(swapForeign.status).toBe(404);
  });

  it("cannot be deleted while a provider config uses it", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const created = await createProvider(server.api, auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    });
    const refused = await server.api.delete(`/api/v1/orgs/${org.id}/secrets/${secretId}`, auth);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    expect((await server.api.get(`/api/v1/orgs/${org.id}/secrets/${secretId}`, auth)).status).toBe(200);

    expect((await server.api.delete(`${base(org.id)}/${created.body.config.id}`, auth)).status).toBe(204);
    expect((await server.api.delete(`/api/v1/orgs/${org.id}/secrets/${secretId}`, auth)).status).toBe(204);
  });

  it("is read at call time: a new secret version is used by the next catalog call", async () => {
    const { auth, org, secretId } = await orgWithKey("first-value");
    const created = await createProvider(server.api, auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    });
    const version = await server.api.post(`/api/v1/orgs/${org.id}/secrets/${secretId}/versions`, { material: { kind: "generic", value: "second-value" } }, auth);
    expect(version.status).toBe(200);
    const catalog = await server.api.get(`${base(org.id)}/${created.body.config.id}/model-catalog`, auth);
    expect(catalog.body.status).toBe("ok");
    expect(fake.requests.map((r) => r.headers["authorization"])).toEqual(["Bearer first-value", "Bearer second-value"]);
  });
});

describe("updating and deleting provider configs", () => {
  it("changes where and how svc calls, never the format, and resets auth options when the auth kind changes", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const created = (await createProvider(server.api, auth, org.id, {
      name: "Switchable",
      api_format: "openai-chat-completions",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    })).body.config;
    const path = `${base(org.id)}/${created.id}`;
    const newSecret = await createSecret(server.api, auth, org.id, { value: "rotated" });

    const updated = await server.api.put(
      path,
      {
        base_url: "https://llm.example.com/api/",
        endpoint_path: "/v1/chat",
        request_timeout_ms: 1234,
        auth_kind: "api_key_header",
        auth_options: { header_name: "api-key" },
        credential_secret_id: newSecret,
      },
      auth,
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created,
      base_url: "https://llm.example.com/api",
      endpoint_path: "/v1/chat",
      request_timeout_ms: 1234,
      auth_kind: "api_key_header",
      auth_options: { header_name: "api-key" },
      credential_secret_id: newSecret,
      updated_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

    const back = await server.api.put(path, { auth_kind: "bearer_token" }, auth);
    expect(back.body).toMatchObject({ auth_kind: "bearer_token", auth_options: {} });
    const noHeader = await server.api.put(path, { auth_kind: "api_key_header" }, auth);
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.issues[0].path).toBe("/auth_options/header_name");

    const unchanged = await server.api.put(path, {}, auth);
    expect(unchanged.body).toEqual(back.body);

    for (const body of [{ name: "renamed" }, { api_format: "anthropic-messages" }, { api_variant: "openrouter" }, { endpoint_path: "x" }, { base_url: "gopher://x" }]) {
      const reply = await server.api.put(path, body, auth);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
    expect((await server.api.get(path, auth)).body).toEqual(back.body);
    expect((await server.api.put(`${base(org.id)}/mpc_${"a".repeat(26)}`, {}, auth)).status).toBe(404);
  });

  it("refuses to delete a config that still has configured models", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const config = (await createProvider(server.api, auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    })).body.config;
    const model = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "fake-model", context_window_tokens: 100000 });
    const refused = await server.api.delete(`${base(org.id)}/${config.id}`, auth);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    expect((await server.api.delete(`${base(org.id)}/${config.id}/models/${model.id}`, auth)).status).toBe(204);
    expect((await server.api.delete(`${base(org.id)}/${config.id}`, auth)).status).toBe(204);
    expect((await server.api.get(`${base(org.id)}/${config.id}`, auth)).status).toBe(404);
    expect((await server.api.delete(`${base(org.id)}/${config.id}`, auth)).status).toBe(404);
  });

  it("goes away with its organization, models and grants included", async () => {
    const { auth, org, project, secretId } = await orgWithKey();
    const config = (await createProvider(server.api, auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    })).body.config;
    const model = await createModel(server.api, auth, org.id, config.id, { name: "m", provider_model_slug: "fake-model", context_window_tokens: 100000 });
    const grant = await server.api.post(`/api/v1/orgs/${org.id}/projects/${project.id}/model-grants`, { configured_model_id: model.id }, auth);
    expect(grant.status).toBe(201);
    const deleted = await server.api.delete(`/api/v1/orgs/${org.id}`, auth);
    expect(deleted.status).toBe(204);
    expect((await server.api.get(`${base(org.id)}/${config.id}`, auth)).status).toBe(404);
  });
});

describe("listing provider configs", () => {
  it("filters by name, sorts, and pages through every config once", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const names = ["alpha", "Beta", "gamma", "alphabet", "delta"];
    const ids: string[] = [];
    for (const name of names) {
      const reply = await createProvider(server.api, auth, org.id, { name, api_format: "openai-responses", base_url: fake.baseUrl, credential_secret_id: secretId });
      ids.push(reply.body.config.id);
    }
    const all = await pageAll(server.api, auth, `${base(org.id)}?limit=2`);
    expect(all.map((c) => c.id)).toEqual([...ids].reverse());

    const byName = await pageAll(server.api, auth, `${base(org.id)}?limit=2&sort=name`);
    expect(byName.map((c) => c.name)).toEqual(["Beta", "alpha", "alphabet", "delta", "gamma"]);
    const byNameDesc = await pageAll(server.api, auth, `${base(org.id)}?limit=3&sort=-name`);
    expect(byNameDesc.map((c) => c.name)).toEqual(["gamma", "delta", "alphabet", "alpha", "Beta"]);
    const oldest = await pageAll(server.api, auth, `${base(org.id)}?limit=4&sort=created_at`);
    expect(oldest.map((c) => c.id)).toEqual(ids);

    // Touch one config: it moves to the front of -updated_at.
    await server.api.put(`${base(org.id)}/${ids[0]}`, { request_timeout_ms: 5 }, auth);
    const recent = await pageAll(server.api, auth, `${base(org.id)}?limit=2&sort=-updated_at`);
    expect(recent[0].id).toBe(ids[0]);
    expect(new Set(recent.map((c) => c.id)).size).toBe(5);

    const glob = await server.api.get(`${base(org.id)}?name=ALPHA*`, auth);
    expect(glob.body.data.map((c: { name: string }) => c.name).sort()).toEqual(["alpha", "alphabet"]);
    const one = await server.api.get(`${base(org.id)}?name=?eta`, auth);
    expect(one.body.data.map((c: { name: string }) => c.name)).toEqual(["Beta"]);

    expect((await server.api.get(`${base(org.id)}?sort=bogus`, auth)).status).toBe(400);
    expect((await server.api.get(`${base(org.id)}?limit=0`, auth)).status).toBe(400);
    expect((await server.api.get(`${base(org.id)}?cursor=garbage`, auth)).status).toBe(400);
    expect((await server.api.get(`${base(org.id)}?unknown=1`, auth)).status).toBe(400);
  });
});

describe("access to provider configs", () => {
  it("lets org members read and only owners and admins write; outsiders see nothing", async () => {
    const owner = await orgWithKey();
    const { org } = owner;
    const config = (await createProvider(server.api, owner.auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: owner.secretId,
    })).body.config;
    const path = `${base(org.id)}/${config.id}`;
    const body = { name: "q", api_format: "openai-responses", base_url: fake.baseUrl, credential_secret_id: owner.secretId };

    const member = await server.api.orgMember({ token: owner.token }, org.id, "member");
    const memberAuth = { token: member.token };
    expect((await server.api.get(base(org.id), memberAuth)).body.data).toHaveLength(1);
    expect((await server.api.get(path, memberAuth)).status).toBe(200);
    expect((await server.api.get(`${path}/model-catalog`, memberAuth)).body.status).toBe("ok");
    expect((await server.api.post(base(org.id), body, memberAuth)).status).toBe(403);
    expect((await server.api.put(path, { request_timeout_ms: 1 }, memberAuth)).status).toBe(403);
    expect((await server.api.delete(path, memberAuth)).status).toBe(403);

    const admin = await server.api.orgMember({ token: owner.token }, org.id, "admin");
    expect((await server.api.put(path, { request_timeout_ms: 2 }, { token: admin.token })).status).toBe(200);

    const memberKey = await server.api.orgKey(owner.session, org.id, "member");
    expect((await server.api.get(path, { token: memberKey.token })).status).toBe(200);
    expect((await server.api.post(base(org.id), body, { token: memberKey.token })).status).toBe(403);
    const adminKey = await server.api.orgKey(owner.session, org.id, "admin");
    expect((await server.api.post(base(org.id), body, { token: adminKey.token })).status).toBe(201);

    const outsider = await server.api.userWithOrg();
    const outsiderAuth = { token: outsider.token };
    for (const reply of [
      await server.api.get(base(org.id), outsiderAuth),
      await server.api.get(path, outsiderAuth),
      await server.api.get(`${path}/model-catalog`, outsiderAuth),
      await server.api.post(base(org.id), { ...body, name: "r" }, outsiderAuth),
      await server.api.put(path, {}, outsiderAuth),
      await server.api.delete(path, outsiderAuth),
    ]) {
      expect(reply.status).toBe(404);
    }
    // Another org's config id under one's own org is simply not there.
    expect((await server.api.get(`${base(outsider.org.id)}/${config.id}`, outsiderAuth)).status).toBe(404);
    expect((await server.api.get(base(org.id))).status).toBe(401);
  });
});

describe("the model catalog", () => {
  it("lists the provider's models with the stored credential", async () => {
    const { auth, org, secretId } = await orgWithKey("catalog-key");
    const config = (await createProvider(server.api, auth, org.id, {
      name: "p",
      api_format: "openai-responses",
      base_url: fake.baseUrl,
      credential_secret_id: secretId,
    })).body.config;
    fake.reset();
    const reply = await server.api.get(`${base(org.id)}/${config.id}/model-catalog`, auth);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "ok", models: [{ slug: "fake-model" }] });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers["authorization"]).toBe("Bearer catalog-key");
    expect((await server.api.get(`${base(org.id)}/mpc_${"a".repeat(26)}/model-catalog`, auth)).status).toBe(404);
  });

  it("reports a provider that rejects the key as failed, with the provider's message and without the key", async () => {
    const { auth, org, secretId } = await orgWithKey("sk-rejected-key");
    const provider = await startStaticProvider(401, { error: { message: "Incorrect API key provided: sk-rejected-key", type: "invalid_request_error" } });
    try {
      const reply = await createProvider(server.api, auth, org.id, {
        name: "p",
        api_format: "openai-responses",
        base_url: provider.baseUrl,
        credential_secret_id: secretId,
      });
      expect(reply.body.config.name).toBe("p");
      expect(reply.body.model_catalog).toEqual({ status: "failed", error: "the models endpoint answered 401: Incorrect API key provided: ***" });
      expect(provider.seen[0]!["authorization"]).toBe("Bearer sk-rejected-key");
      const again = await server.api.get(`${base(org.id)}/${reply.body.config.id}/model-catalog`, auth);
      expect(again.status).toBe(200);
      expect(again.body.status).toBe("failed");
    } finally {
      await provider.close();
    }
  });

  it("reports unreadable answers and unreachable providers as failed", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const notAList = await startStaticProvider(200, { object: "list" });
    const garbage = await startStaticProvider(200, "<html>hello</html>");
    try {
      for (const provider of [notAList, garbage]) {
        const reply = await createProvider(server.api, auth, org.id, {
          name: `p-${provider.baseUrl}`,
          api_format: "openai-responses",
          base_url: provider.baseUrl,
          credential_secret_id: secretId,
        });
        expect(reply.body.model_catalog).toEqual({ status: "failed", error: "the models endpoint answered with something other than a model list" });
      }
    } finally {
      await notAList.close();
      await garbage.close();
    }
    const closed = await startStaticProvider(200, {});
    await closed.close();
    const reply = await createProvider(server.api, auth, org.id, {
      name: "gone",
      api_format: "openai-responses",
      base_url: closed.baseUrl,
      credential_secret_id: secretId,
    });
    expect(reply.body.model_catalog).toEqual({ status: "failed", error: "the models endpoint could not be reached (ECONNREFUSED)" });
  });

  it("filters non-chat models and orders the rest newest first with their advertised limits", async () => {
    const { auth, org, secretId } = await orgWithKey();
    const provider = await startStaticProvider(200, {
      data: [
        { id: "old-chat", created: 100 },
        { id: "text-embedding-3-large", created: 900 },
        { id: "new-chat", created: 500, context_length: 200000, max_completion_tokens: 32000, name: "New chat" },
        { id: "router/image-only", architecture: { output_modalities: ["image"] }, supported_parameters: ["tools"] },
        { id: "router/no-tools", architecture: { output_modalities: ["text"] }, supported_parameters: ["temperature"] },
        { id: "router/agent", created: 300, architecture: { output_modalities: ["text"] }, supported_parameters: ["tools"], top_provider: { context_length: 1000, max_completion_tokens: 5000 } },
        { id: "new-chat", created: 50 },
        { name: "no id" },
      ],
    });
    try {
      const reply = await createProvider(server.api, auth, org.id, {
        name: "p",
        api_format: "openai-chat-completions",
        base_url: provider.baseUrl,
        credential_secret_id: secretId,
      });
      expect(reply.body.model_catalog).toEqual({
        status: "ok",
        models: [
          { slug: "new-chat", display_name: "New chat", context_window_tokens: 200000, max_output_tokens: 32000 },
          { slug: "router/agent", context_window_tokens: 1000 },
          { slug: "old-chat" },
        ],
      });
    } finally {
      await provider.close();
    }
  });
});
