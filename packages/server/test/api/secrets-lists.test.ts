import { beforeAll, describe, expect, it } from "vitest";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import { useTestServer } from "../support/server.js";
import { collect, createSecret, MATERIALS, sortedBy, type Owner } from "./secrets-fixtures.js";

const server = useTestServer();
let token: string;
let orgId: string;
let p1: string;
let p2: string;
const byName = new Map<string, any>();

/** One org holding secrets of every owner kind, several kinds and metadata, created in this order. */
const SEED: Array<{ name: string; owner: "org" | "p1" | "p2" | "user"; kind: keyof typeof MATERIALS; metadata?: Record<string, string> }> = [
  { name: "api-key", owner: "org", kind: "generic", metadata: { env: "prod", team: "core" } },
  { name: "API-token", owner: "org", kind: "oauth_token_set", metadata: { env: "prod" } },
  { name: "a*b", owner: "org", kind: "generic", metadata: { env: "dev" } },
  { name: "axb", owner: "org", kind: "aws_credentials" },
  { name: "a_b", owner: "org", kind: "generic" },
  { name: "p1-one", owner: "p1", kind: "slack_app_credentials", metadata: { env: "prod", team: "core" } },
  { name: "p1-two", owner: "p1", kind: "generic", metadata: { team: "core" } },
  { name: "p2-one", owner: "p2", kind: "github_app_credentials", metadata: { env: "prod" } },
  { name: "mine", owner: "user", kind: "generic", metadata: { env: "prod" } },
];

beforeAll(async () => {
  const owner = await server.api.userWithOrg();
  [token, orgId, p1] = [owner.token, owner.org.id, owner.project.id];
  p2 = (await server.api.post(`/api/v1/orgs/${orgId}/projects`, { name: "Beta" }, { token })).body.id;
  const owners: Record<string, Owner> = {
    org: { kind: "org" },
    p1: { kind: "project", project_id: p1 },
    p2: { kind: "project", project_id: p2 },
    user: { kind: "user" },
  };
  for (const seed of SEED) {
    const secret = await createSecret(server.api, token, orgId, {
      owner: owners[seed.owner]!,
      name: seed.name,
      metadata: seed.metadata,
      material: MATERIALS[seed.kind].material,
    });
    byName.set(seed.name, secret);
  }
  // Touch two early secrets so that updated_at orders differently from created_at.
  for (const name of ["api-key", "a*b"]) {
    const reply = await server.api.patch(`/api/v1/orgs/${orgId}/secrets/${byName.get(name).id}`, { metadata: { touched: "yes" } }, { token });
    byName.set(name, reply.body);
  }
});

const list = (query = "") => server.api.get(`/api/v1/orgs/${orgId}/secrets${query}`, { token });
const names = async (query: string) => {
  const reply = await list(query);
  expect(reply.status, `${query}: ${reply.text}`).toBe(200);
  return reply.body.data.map((s: { name: string }) => s.name).sort();
};

describe("listing secrets", () => {
  it("lists everything the owner may see, newest first, with full shapes", async () => {
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(reply.body.next_cursor).toBeNull();
    expect(reply.body.data).toEqual(SEED.map((s) => byName.get(s.name)).reverse());
  });

  it("pages through every secret exactly once under every sort", async () => {
    const all = [...byName.values()];
    for (const sort of ["-created_at", "created_at", "name", "-name", "updated_at", "-updated_at"]) {
      const expected = sortedBy(all, sort).map((s) => s.id);
      for (const limit of [1, 2, 4]) {
        const items = await collect(server.api, `/api/v1/orgs/${orgId}/secrets?sort=${sort}&limit=${limit}`, token);
        expect(items.map((s) => s.id), `${sort} limit=${limit}`).toEqual(expected);
      }
    }
    const filtered = await collect(server.api, `/api/v1/orgs/${orgId}/secrets?owner_kind=org&sort=name&limit=2`, token);
    expect(filtered.map((s) => s.name)).toEqual(["API-token", "a*b", "a_b", "api-key", "axb"]);
  });

  it("filters by owner kind, and owner_project_id only goes with owner_kind=project", async () => {
    expect(await names("?owner_kind=org")).toEqual(["API-token", "a*b", "a_b", "api-key", "axb"]);
    expect(await names(`?owner_kind=project&owner_project_id=${p1}`)).toEqual(["p1-one", "p1-two"]);
    expect(await names(`?owner_kind=project&owner_project_id=${p2}`)).toEqual(["p2-one"]);
    expect(await names("?owner_kind=user")).toEqual(["mine"]);
    for (const query of ["?owner_kind=project", `?owner_project_id=${p1}`, `?owner_kind=org&owner_project_id=${p1}`, `?owner_kind=user&owner_project_id=${p1}`]) {
      const reply = await list(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "invalid_request" });
    }
    const bad = await list("?owner_kind=team");
    expect(bad.status).toBe(400);
    const foreign = await server.api.userWithOrg();
    const elsewhere = await list(`?owner_kind=project&owner_project_id=${foreign.project.id}`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe("not_found");
    const unknown = await list(`?owner_kind=project&owner_project_id=${encodeId("project", newUuid())}`);
    expect(unknown.status).toBe(404);
  });

  it("filters by kind", async () => {
    expect(await names("?kind=generic")).toEqual(["a*b", "a_b", "api-key", "mine", "p1-two"]);
    expect(await names("?kind=github_app_credentials")).toEqual(["p2-one"]);
    expect(await names("?kind=slack_app_credentials&owner_kind=org")).toEqual([]);
    expect((await list("?kind=ssh_key")).status).toBe(400);
  });

  it("filters by every metadata pair given", async () => {
    expect(await names("?metadata[env]=prod")).toEqual(["API-token", "mine", "p1-one", "p2-one"]);
    expect(await names("?metadata[team]=core")).toEqual(["p1-one", "p1-two"]);
    expect(await names("?metadata[env]=prod&metadata[team]=core")).toEqual(["p1-one"]);
    expect(await names("?metadata[touched]=yes")).toEqual(["a*b", "api-key"]);
    expect(await names("?metadata[env]=PROD")).toEqual([]);
    expect(await names("?metadata[missing]=x")).toEqual([]);
    expect(await names("?metadata[env]=prod&kind=generic&owner_kind=user")).toEqual(["mine"]);
    expect(await names(`?${encodeURIComponent("metadata[env]")}=prod`)).toEqual(["API-token", "mine", "p1-one", "p2-one"]);
    for (const query of ["?metadata[]=x", "?metadata=x", "?metadata[env]=a&metadata[env]=b", "?meta[env]=x"]) {
      const reply = await list(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
  });

  it("filters by MCP OAuth flow: a well-formed unused flow id matches nothing", async () => {
    expect(await names(`?mcp_oauth_flow_id=${encodeId("mcpOAuthFlow", newUuid())}`)).toEqual([]);
    const nonCanonical = `moaf_${"7".repeat(26)}`;
    for (const id of ["moaf_short", encodeId("secret", newUuid()), nonCanonical]) {
      const reply = await list(`?mcp_oauth_flow_id=${id}`);
      expect(reply.status, id).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
  });

  it("filters names with a case-insensitive glob where a backslash escapes", async () => {
    expect(await names("?name=api*")).toEqual(["API-token", "api-key"]);
    expect(await names("?name=API-*")).toEqual(["API-token", "api-key"]);
    expect(await names("?name=a?b")).toEqual(["a*b", "a_b", "axb"]);
    expect(await names(`?name=${encodeURIComponent("a\\*b")}`)).toEqual(["a*b"]);
    expect(await names("?name=a_b")).toEqual(["a_b"]);
    expect(await names("?name=a%25")).toEqual([]);
    expect(await names("?name=*one")).toEqual(["p1-one", "p2-one"]);
    expect(await names("?name=p?-*&owner_kind=project&owner_project_id=" + p1)).toEqual(["p1-one", "p1-two"]);
    expect(await names("?name=MINE")).toEqual(["mine"]);
    expect((await list(`?name=${"x".repeat(201)}`)).status).toBe(400);
  });

  it("rejects bad paging parameters", async () => {
    const first = await list("?sort=name&limit=1");
    for (const query of ["?limit=0", "?limit=101", "?sort=kind", "?sort=owner_kind", "?cursor=garbage", `?sort=-name&cursor=${first.body.next_cursor}`, "?colour=red"]) {
      const reply = await list(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "invalid_request" });
    }
  });
});
