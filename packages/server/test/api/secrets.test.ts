import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { secrets, secretVersions } from "../../src/db/schema/index.js";
import { AppError } from "../../src/platform/errors.js";
import { decodeId } from "../../src/platform/ids.js";
import { useTestServer } from "../support/server.js";
import { createSecret, generic, ISO, MATERIALS, SECRET_ID, VALUE_MARKER } from "./secrets-fixtures.js";

const server = useTestServer();

const uuid = (kind: "org" | "project" | "secret", id: string) => decodeId(kind, id)!;

describe("creating and reading secrets", () => {
  it("creates an org secret and shows it, but never its value", async () => {
    const { token, org } = await server.api.userWithOrg();
    const reply = await server.api.post(
      `/api/v1/orgs/${org.id}/secrets`,
      { owner: { kind: "org" }, name: "Database password", metadata: { env: "prod", team: "core" }, material: generic() },
      { token },
    );
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(SECRET_ID),
      org_id: org.id,
      management_kind: "tenant",
      owner: { kind: "org" },
      name: "Database password",
      kind: "generic",
      metadata: { env: "prod", team: "core" },
      current_version_number: 1,
      payload_keys: ["value"],
      created_at: expect.stringMatching(ISO),
      updated_at: reply.body.created_at,
    });
    expect(reply.text).not.toContain(VALUE_MARKER);

    const read = await server.api.get(`/api/v1/orgs/${org.id}/secrets/${reply.body.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(reply.body);
  });

  it("creates project and user secrets with their owners", async () => {
    const { token, org, project, userId } = await server.api.userWithOrg();
    const forProject = await createSecret(server.api, token, org.id, { owner: { kind: "project", project_id: project.id }, name: "p" });
    expect(forProject).toEqual({
      id: expect.stringMatching(SECRET_ID),
      org_id: org.id,
      management_kind: "tenant",
      owner: { kind: "project", project_id: project.id },
      name: "p",
      kind: "generic",
      metadata: {},
      current_version_number: 1,
      payload_keys: ["value"],
      created_at: expect.stringMatching(ISO),
      updated_at: forProject.created_at,
    });
    const forUser = await createSecret(server.api, token, org.id, { owner: { kind: "user" }, name: "u" });
    expect(forUser).toEqual({ ...forProject, id: forUser.id, owner: { kind: "user", user_id: userId }, name: "u", created_at: forUser.created_at, updated_at: forUser.created_at });
  });

  it("accepts every kind of material and reports only the names of its fields", async () => {
    const { token, org } = await server.api.userWithOrg();
    for (const [kind, sample] of Object.entries(MATERIALS)) {
      const secret = await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: `all-${kind}`, material: sample.material });
      expect(secret.kind).toBe(kind);
      expect(secret.payload_keys).toEqual(sample.payloadKeys);
    }
    const minimal = {
      oauth_token_set: [{ kind: "oauth_token_set", access_token: "a" }, ["access_token"]],
      aws_credentials: [{ kind: "aws_credentials", access_key_id: "a", secret_access_key: "b" }, ["access_key_id", "secret_access_key"]],
      github_app_credentials: [
        { kind: "github_app_credentials", app_id: "1", private_key: "-----BEGIN PRIVATE KEY-----\nx" },
        ["app_id", "private_key"],
      ],
      loopback_refresh: [
        {
          kind: "oauth_token_set",
          access_token: "a",
          refresh: { refresh_token: "r", token_endpoint: "http://127.0.0.1:8080/token", client_id: "c", resource: "x" },
        },
        ["access_token", "refresh"],
      ],
    } as const;
    for (const [name, [material, keys]] of Object.entries(minimal)) {
      const secret = await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: `min-${name}`, material });
      expect(secret.payload_keys).toEqual(keys);
    }
    const list = await server.api.get(`/api/v1/orgs/${org.id}/secrets?limit=100`, { token });
    expect(list.body.data).toHaveLength(9);
    expect(list.text).not.toContain(VALUE_MARKER);
  });

  it("keeps names unique per owner, not across owners", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const other = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Other" }, { token });
    const owners = [{ kind: "org" }, { kind: "project", project_id: project.id }, { kind: "project", project_id: other.body.id }, { kind: "user" }] as const;
    for (const owner of owners) await createSecret(server.api, token, org.id, { owner, name: "shared-name" });
    for (const owner of owners) {
      const twice = await server.api.post(`/api/v1/orgs/${org.id}/secrets`, { owner, name: "shared-name", material: generic() }, { token });
      expect(twice.status, JSON.stringify(owner)).toBe(409);
      expect(twice.body).toEqual({ error: expect.any(String), code: "conflict" });
    }
    const differentCase = await server.api.post(`/api/v1/orgs/${org.id}/secrets`, { owner: { kind: "org" }, name: "Shared-Name", material: generic() }, { token });
    expect(differentCase.status).toBe(201);
  });

  it("answers 404 for unknown, malformed and other organizations' secrets", async () => {
    const a = await server.api.userWithOrg();
    const b = await server.api.userWithOrg();
    const secret = await createSecret(server.api, a.token, a.org.id, { owner: { kind: "org" }, name: "mine" });
    const other = await createSecret(server.api, b.token, b.org.id, { owner: { kind: "org" }, name: "theirs" });
    const paths = [
      `/api/v1/orgs/${a.org.id}/secrets/${other.id}`,
      `/api/v1/orgs/${a.org.id}/secrets/sec_short`,
      `/api/v1/orgs/${a.org.id}/secrets/${secret.id.replace("sec_", "proj_")}`,
      `/api/v1/orgs/${a.org.id}/secrets/${secret.id.toUpperCase()}`,
      `/api/v1/orgs/${b.org.id}/secrets/${secret.id}`,
      `/api/v1/orgs/${b.org.id}/secrets`,
    ];
    for (const path of paths) {
      const reply = await server.api.get(path, { token: a.token });
      expect(reply.status, path).toBe(404);
      expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
    }
    for (const [method, body] of [["PATCH", { name: "x" }], ["DELETE", undefined]] as const) {
      const reply = await server.api.request(method, `/api/v1/orgs/${a.org.id}/secrets/${other.id}`, { token: a.token, body });
      expect(reply.status).toBe(404);
    }
    const version = await server.api.post(`/api/v1/orgs/${a.org.id}/secrets/${other.id}/versions`, { material: generic() }, { token: a.token });
    expect(version.status).toBe(404);
    const unauthenticated = await server.api.get(`/api/v1/orgs/${a.org.id}/secrets`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe("validation", () => {
  let token: string;
  let orgId: string;
  let projectId: string;
  beforeAll(async () => {
    const owner = await server.api.userWithOrg();
    [token, orgId, projectId] = [owner.token, owner.org.id, owner.project.id];
  });

  const post = (body: unknown) => server.api.post(`/api/v1/orgs/${orgId}/secrets`, body, { token });
  const expectIssues = async (body: unknown, issues: Array<{ path: string; message: string | unknown }>) => {
    const reply = await post(body);
    expect(reply.status, JSON.stringify(body)).toBe(400);
    expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues });
  };
  const valid = { owner: { kind: "org" }, name: "valid", material: generic() };

  it("rejects unknown fields at every level", async () => {
    await expectIssues({ ...valid, color: "red" }, [{ path: "/color", message: "unknown field" }]);
    await expectIssues({ ...valid, material: { ...generic(), extra: 1 } }, [{ path: "/material/extra", message: "unknown field" }]);
    await expectIssues({ ...valid, owner: { kind: "org", project_id: projectId } }, [{ path: "/owner/project_id", message: "unknown field" }]);
    await expectIssues({ ...valid, owner: { kind: "user", user_id: "usr_x" } }, [{ path: "/owner/user_id", message: "unknown field" }]);
    await expectIssues({ ...valid, payload: "x" }, [{ path: "/payload", message: "unknown field" }]);
    await expectIssues(
      { ...valid, material: { ...MATERIALS.oauth_token_set.material, refresh: { ...MATERIALS.oauth_token_set.material.refresh, scope: "x" } } },
      [{ path: "/material/refresh/scope", message: "unknown field" }],
    );
  });

  it("rejects unknown kinds and missing material fields, naming the field", async () => {
    const kinds = "generic, oauth_token_set, slack_app_credentials, aws_credentials, github_app_credentials";
    await expectIssues({ ...valid, material: { kind: "ssh_key", value: "x" } }, [{ path: "/material/kind", message: `must be one of: ${kinds}` }]);
    await expectIssues({ ...valid, material: { value: "x" } }, [{ path: "/material/kind", message: "is required" }]);
    await expectIssues({ ...valid, material: { kind: "generic" } }, [{ path: "/material/value", message: "is required" }]);
    await expectIssues({ ...valid, material: { kind: "generic", value: "" } }, [{ path: "/material/value", message: expect.any(String) }]);
    await expectIssues({ ...valid, material: { kind: "aws_credentials", access_key_id: "a" } }, [
      { path: "/material/secret_access_key", message: "is required" },
    ]);
    await expectIssues({ ...valid, material: { kind: "slack_app_credentials", access_token: "a", client_id: "b", client_secret: "c" } }, [
      { path: "/material/signing_secret", message: "is required" },
    ]);
    await expectIssues({ ...valid, material: { kind: "oauth_token_set", access_token: "a", refresh: { refresh_token: "r" } } }, [
      { path: "/material/refresh/token_endpoint", message: "is required" },
      { path: "/material/refresh/client_id", message: "is required" },
      { path: "/material/refresh/resource", message: "is required" },
    ]);
    await expectIssues({ ...valid, material: "secret" }, [{ path: "/material", message: "must be object" }]);
    await expectIssues({ owner: { kind: "org" }, name: "x" }, [{ path: "/material", message: "is required" }]);
    await expectIssues({ ...valid, material: { kind: "oauth_token_set", access_token: "a", access_token_expires_in_seconds: "60" } }, [
      { path: "/material/access_token_expires_in_seconds", message: expect.stringContaining("integer") },
    ]);
  });

  it("checks what the schema cannot: token endpoints, AWS external ids, GitHub App ids and keys", async () => {
    const refresh = { refresh_token: "r", client_id: "c", resource: "x" };
    for (const endpoint of ["http://auth.example.com/token", "ftp://auth.example.com/token", "http://10.0.0.1/token"]) {
      await expectIssues({ ...valid, material: { kind: "oauth_token_set", access_token: "a", refresh: { ...refresh, token_endpoint: endpoint } } }, [
        { path: "/material/refresh/token_endpoint", message: "must use https (http only on a loopback host)" },
      ]);
    }
    await expectIssues({ ...valid, material: { kind: "aws_credentials", access_key_id: "a", secret_access_key: "b", external_id: "e" } }, [
      { path: "/material/role_arn", message: "is required when external_id is given" },
    ]);
    await expectIssues({ ...valid, material: { kind: "github_app_credentials", app_id: "my-app", private_key: "-----BEGIN PRIVATE KEY-----" } }, [
      { path: "/material/app_id", message: expect.any(String) },
    ]);
    await expectIssues({ ...valid, material: { kind: "github_app_credentials", app_id: "1", private_key: "not a key" } }, [
      { path: "/material/private_key", message: expect.any(String) },
    ]);
  });

  it("validates the owner, the name and the metadata", async () => {
    await expectIssues({ ...valid, owner: { kind: "team" } }, [{ path: "/owner/kind", message: "must be one of: org, project, user" }]);
    await expectIssues({ ...valid, owner: { kind: "project" } }, [{ path: "/owner/project_id", message: "is required" }]);
    await expectIssues({ ...valid, owner: { kind: "project", project_id: "proj_nope" } }, [{ path: "/owner/project_id", message: expect.any(String) }]);
    await expectIssues({ ...valid, owner: undefined }, [{ path: "/owner", message: "is required" }]);
    await expectIssues({ ...valid, name: " padded" }, [{ path: "/name", message: expect.any(String) }]);
    await expectIssues({ ...valid, name: "x".repeat(65) }, [{ path: "/name", message: expect.any(String) }]);
    await expectIssues({ ...valid, metadata: { env: 1 } }, [{ path: "/metadata/env", message: "must be string" }]);
    await expectIssues({ ...valid, metadata: ["env"] }, [{ path: "/metadata", message: "must be object" }]);
  });

  it("validates updates, versions and grants the same way", async () => {
    const secret = await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "target" });
    const base = `/api/v1/orgs/${orgId}/secrets/${secret.id}`;
    const cases: Array<[string, string, unknown, Array<{ path: string; message: unknown }>]> = [
      ["PATCH", base, {}, [{ path: "", message: expect.any(String) }]],
      ["PATCH", base, { owner: { kind: "user" } }, [{ path: "/owner", message: "unknown field" }]],
      ["PATCH", base, { kind: "aws_credentials" }, [{ path: "/kind", message: "unknown field" }]],
      ["PATCH", base, { name: "" }, [{ path: "/name", message: expect.any(String) }]],
      ["POST", `${base}/versions`, {}, [{ path: "/material", message: "is required" }]],
      ["POST", `${base}/versions`, { material: { kind: "generic" } }, [{ path: "/material/value", message: "is required" }]],
      ["POST", `${base}/versions`, { material: generic(), name: "x" }, [{ path: "/name", message: "unknown field" }]],
      ["POST", `${base}/grants`, {}, [{ path: "/target_project_id", message: "is required" }]],
      ["POST", `${base}/grants`, { target_project_id: "proj_x" }, [{ path: "/target_project_id", message: expect.any(String) }]],
    ];
    for (const [method, path, body, issues] of cases) {
      const reply = await server.api.request(method, path, { token, body });
      expect(reply.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues });
    }
  });
});

describe("updating, versioning and deleting", () => {
  it("renames and replaces metadata, keeping the owner, kind and value", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const owner = { kind: "project", project_id: project.id } as const;
    const secret = await createSecret(server.api, token, org.id, { owner, name: "before", metadata: { a: "1", b: "2" } });
    await createSecret(server.api, token, org.id, { owner, name: "taken" });
    await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: "free-in-project" });
    const base = `/api/v1/orgs/${org.id}/secrets/${secret.id}`;

    const renamed = await server.api.patch(base, { name: "after" }, { token });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...secret, name: "after", updated_at: expect.stringMatching(ISO) });
    expect(renamed.body.updated_at >= secret.updated_at).toBe(true);

    const replaced = await server.api.patch(base, { metadata: { c: "3" } }, { token });
    expect(replaced.body).toEqual({ ...renamed.body, metadata: { c: "3" }, updated_at: expect.stringMatching(ISO) });
    const cleared = await server.api.patch(base, { metadata: {} }, { token });
    expect(cleared.body.metadata).toEqual({});

    const sameName = await server.api.patch(base, { name: "after", metadata: { d: "4" } }, { token });
    expect(sameName.status).toBe(200);
    expect(sameName.body).toMatchObject({ name: "after", metadata: { d: "4" } });

    const clash = await server.api.patch(base, { name: "taken" }, { token });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("conflict");
    const otherOwnersName = await server.api.patch(base, { name: "free-in-project" }, { token });
    expect(otherOwnersName.status).toBe(200);
    expect((await server.api.get(base, { token })).body).toEqual(otherOwnersName.body);
  });

  it("adds versions of the same kind, bumping the number and the field names", async () => {
    const { token, org } = await server.api.userWithOrg();
    const secret = await createSecret(server.api, token, org.id, {
      owner: { kind: "org" },
      name: "token",
      material: { kind: "oauth_token_set", access_token: "first-SENTINEL" },
    });
    const versions = `/api/v1/orgs/${org.id}/secrets/${secret.id}/versions`;
    const second = await server.api.post(versions, { material: MATERIALS.oauth_token_set.material }, { token });
    expect(second.status).toBe(200);
    expect(second.text).not.toContain(VALUE_MARKER);
    expect(second.body).toEqual({
      ...secret,
      current_version_number: 2,
      payload_keys: MATERIALS.oauth_token_set.payloadKeys,
      updated_at: expect.stringMatching(ISO),
    });
    const third = await server.api.post(versions, { material: { kind: "oauth_token_set", access_token: "third-SENTINEL", token_type: "Bearer" } }, { token });
    expect(third.body).toMatchObject({ current_version_number: 3, payload_keys: ["access_token", "token_type"] });

    const wrongKind = await server.api.post(versions, { material: generic() }, { token });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body).toEqual({
      error: expect.any(String),
      code: "validation_failed",
      issues: [{ path: "/material/kind", message: 'must be "oauth_token_set", the kind of this secret' }],
    });
    const badRefresh = await server.api.post(
      versions,
      { material: { kind: "oauth_token_set", access_token: "a", refresh: { refresh_token: "r", token_endpoint: "http://x.example/t", client_id: "c", resource: "r" } } },
      { token },
    );
    expect(badRefresh.body.issues).toEqual([{ path: "/material/refresh/token_endpoint", message: expect.any(String) }]);
    const after = await server.api.get(`/api/v1/orgs/${org.id}/secrets/${secret.id}`, { token });
    expect(after.body.current_version_number).toBe(3);
  });

  it("deletes a secret with its versions and grants", async () => {
    const { token, org } = await server.api.userWithOrg();
    const target = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Target" }, { token });
    const secret = await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: "doomed" });
    const base = `/api/v1/orgs/${org.id}/secrets/${secret.id}`;
    await server.api.post(`${base}/versions`, { material: generic("second") }, { token });
    expect((await server.api.post(`${base}/grants`, { target_project_id: target.body.id }, { token })).status).toBe(201);

    const deleted = await server.api.delete(base, { token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect((await server.api.get(base, { token })).status).toBe(404);
    expect((await server.api.delete(base, { token })).status).toBe(404);
    expect((await server.api.get(`${base}/grants`, { token })).status).toBe(404);
    expect((await server.api.get(`/api/v1/orgs/${org.id}/projects/${target.body.id}/secrets`, { token })).body.data).toEqual([]);
    const rows = await server.db.read.select().from(secretVersions).where(eq(secretVersions.secretId, uuid("secret", secret.id)));
    expect(rows).toEqual([]);
    // The name is free again for the same owner.
    await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: "doomed" });
  });
});

describe("operator-provisioned secrets", () => {
  it("can be read, listed and granted away from, but not changed through the API", async () => {
    const { token, org } = await server.api.userWithOrg();
    const target = (await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Target" }, { token })).body;
    const secret = await createSecret(server.api, token, org.id, { owner: { kind: "org" }, name: "provisioned" });
    // The operator path does not exist yet; mark the row as an operator would have written it.
    await server.db.tx((tx) => tx.update(secrets).set({ managementKind: "cluster" }).where(eq(secrets.id, uuid("secret", secret.id))));
    const base = `/api/v1/orgs/${org.id}/secrets/${secret.id}`;
    expect((await server.api.get(base, { token })).body).toEqual({ ...secret, management_kind: "cluster" });
    expect((await server.api.get(`${base}/grants`, { token })).status).toBe(200);
    const changes: Array<[string, string, unknown]> = [
      ["PATCH", base, { name: "renamed" }],
      ["POST", `${base}/versions`, { material: generic() }],
      ["POST", `${base}/grants`, { target_project_id: target.id }],
      ["DELETE", base, undefined],
    ];
    for (const [method, path, body] of changes) {
      const reply = await server.api.request(method, path, { token, body });
      expect(reply.status, `${method} ${path}`).toBe(409);
      expect(reply.body).toEqual({ error: expect.any(String), code: "conflict" });
    }
  });
});

describe("the OpenAPI document", () => {
  it("documents every secrets operation under the Secrets tag", () => {
    const doc = server.app.http.swagger() as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
    const operations = Object.values(doc.paths)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op.tags?.includes("Secrets"))
      .map((op) => op.operationId)
      .sort();
    expect(operations).toEqual([
      "createSecret",
      "createSecretGrant",
      "createSecretVersion",
      "deleteSecret",
      "deleteSecretGrant",
      "getProjectAvailableSecret",
      "getSecret",
      "listProjectAvailableSecrets",
      "listSecretGrants",
      "listSecrets",
      "startSecretMCPOAuth",
      "updateSecret",
    ]);
    const list = doc.paths["/api/v1/orgs/{orgID}/secrets"]!["get"] as unknown as { parameters: Array<{ name: string }> };
    expect(list.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(["owner_kind", "owner_project_id", "kind", "mcp_oauth_flow_id", "metadata"]));
  });
});

describe("concurrent changes", () => {
  it("settles racing creations, versions and grants without a 5xx", async () => {
    const { token, org } = await server.api.userWithOrg();
    const target = (await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Target" }, { token })).body;
    const creations = await Promise.all(
      Array.from({ length: 6 }, () => server.api.post(`/api/v1/orgs/${org.id}/secrets`, { owner: { kind: "org" }, name: "race", material: generic() }, { token })),
    );
    expect(creations.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const secret = creations.find((r) => r.status === 201)!.body;

    const versions = await Promise.all(
      Array.from({ length: 6 }, (_, i) => server.api.post(`/api/v1/orgs/${org.id}/secrets/${secret.id}/versions`, { material: generic(`v${i}`) }, { token })),
    );
    expect(versions.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(versions.map((r) => r.body.current_version_number).sort()).toEqual([2, 3, 4, 5, 6, 7]);

    const grants = await Promise.all(
      Array.from({ length: 4 }, () => server.api.post(`/api/v1/orgs/${org.id}/secrets/${secret.id}/grants`, { target_project_id: target.id }, { token })),
    );
    expect(grants.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });
});

describe("encryption at rest", () => {
  it("stores only ciphertext, and resolves the current value for projects that can use the secret", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const other = (await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Other" }, { token })).body;
    const material = MATERIALS.aws_credentials.material;
    const secret = await createSecret(server.api, token, org.id, { owner: { kind: "project", project_id: project.id }, name: "aws", material });

    const rows = await server.db.read.select().from(secretVersions).where(eq(secretVersions.secretId, uuid("secret", secret.id)));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ versionNumber: 1, mcpOAuthFlowId: null });
    expect(Object.keys(rows[0]!.envelope).sort()).toEqual(["alg", "ciphertext", "kid", "nonce", "tag", "wrap_nonce", "wrap_tag", "wrapped_key"]);
    const stored = JSON.stringify(rows[0]);
    for (const value of Object.values(material)) expect(stored).not.toContain(value);
    expect(stored).not.toContain("access_key_id");
    expect(stored).not.toContain(Buffer.from(material.secret_access_key).toString("base64"));

    const [orgId, projectId, otherId, secretId] = [uuid("org", org.id), uuid("project", project.id), uuid("project", other.id), uuid("secret", secret.id)];
    const resolve = (p: string, s: string) => server.db.tx((tx) => server.app.services.secrets.resolvePayload(tx, orgId, p, s));
    expect(await resolve(projectId, secretId)).toEqual(material);

    const next = { kind: "aws_credentials", access_key_id: "AKIA-2", secret_access_key: "rotated" };
    await server.api.post(`/api/v1/orgs/${org.id}/secrets/${secret.id}/versions`, { material: next }, { token });
    expect(await resolve(projectId, secretId)).toEqual(next);

    const denied = await resolve(otherId, secretId).catch((err: unknown) => err);
    expect(denied).toBeInstanceOf(AppError);
    expect((denied as AppError).code).toBe("not_found");
    await server.api.post(`/api/v1/orgs/${org.id}/secrets/${secret.id}/grants`, { target_project_id: other.id }, { token });
    expect(await resolve(otherId, secretId)).toEqual(next);
  });

  it("binds each ciphertext to its secret: a copied envelope does not open", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const owner = { kind: "project", project_id: project.id } as const;
    const a = await createSecret(server.api, token, org.id, { owner, name: "a", material: generic("value-a") });
    const b = await createSecret(server.api, token, org.id, { owner, name: "b", material: generic("value-b") });
    const [aId, bId] = [uuid("secret", a.id), uuid("secret", b.id)];
    const [source] = await server.db.read.select().from(secretVersions).where(eq(secretVersions.secretId, aId));
    await server.db.tx((tx) => tx.update(secretVersions).set({ envelope: source!.envelope }).where(eq(secretVersions.secretId, bId)));
    const resolve = (s: string) => server.db.tx((tx) => server.app.services.secrets.resolvePayload(tx, uuid("org", org.id), uuid("project", project.id), s));
    expect(await resolve(aId)).toEqual(generic("value-a"));
    await expect(resolve(bId)).rejects.toThrow();
  });
});
