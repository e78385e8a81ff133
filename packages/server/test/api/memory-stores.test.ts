import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { ISO } from "./models-fixtures.js";

const server = useTestServer();

const MST_ID = /^mst_[a-z2-7]{26}$/;
const MEM_ID = /^mem_[a-z2-7]{26}$/;
const digestOf = (content: string) => `sha256:${createHash("sha256").update(content, "utf8").digest("hex")}`;

/** A new user with an org; `base` is the memory stores of its default project. */
async function project() {
  const { token, org, project, userId } = await server.api.userWithOrg();
  return { token, auth: { token }, orgId: org.id as string, userId, base: `/api/v1/orgs/${org.id}/projects/${project.id}/memory-stores` };
}

async function createStore(p: { base: string; token: string }, body: Record<string, unknown>) {
  const reply = await server.api.post(p.base, body, { token: p.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

describe("memory stores", () => {
  it("creates, reads, updates and deletes a store", async () => {
    const p = await project();
    const created = await createStore(p, { name: "notes", description: "What the team learned" });
    expect(created).toEqual({
      id: expect.stringMatching(MST_ID),
      org_id: p.orgId,
      project_id: expect.stringMatching(/^proj_/),
      name: "notes",
      description: "What the team learned",
      writable: true,
      metadata: {},
      memory_count: 0,
      size_bytes: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: created.created_at,
    });
    const path = `${p.base}/${created.id}`;
    expect((await server.api.get(path, p.auth)).body).toEqual(created);

    const patched = await server.api.patch(path, { description: "Facts", writable: false, metadata: { team: "core" } }, p.auth);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: "notes", description: "Facts", writable: false, metadata: { team: "core" } });
    expect((await server.api.patch(path, { name: "renamed" }, p.auth)).status).toBe(400);

    const twin = await server.api.post(p.base, { name: "notes" }, p.auth);
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe("conflict");
    for (const name of ["..", ".hidden", "a/b", "with space", ""]) {
      const bad = await server.api.post(p.base, { name }, p.auth);
      expect(bad.status, name).toBe(400);
      expect(bad.body.code, name).toBe("validation_failed");
    }

    expect((await server.api.delete(path, p.auth)).status).toBe(204);
    expect((await server.api.get(path, p.auth)).status).toBe(404);
    expect((await server.api.delete(path, p.auth)).status).toBe(404);
    // The name is free again.
    await createStore(p, { name: "notes" });
  });

  it("pages the stores and filters them by name", async () => {
    const p = await project();
    for (const name of ["alpha", "beta", "alpine", "gamma", "alps"]) await createStore(p, { name });
    const all = await collectPages(server.api, `${p.base}?limit=2&sort=name`, p.auth);
    expect(all.map((s) => s.name)).toEqual(["alpha", "alpine", "alps", "beta", "gamma"]);
    const filtered = await collectPages(server.api, `${p.base}?limit=1&name=al*`, p.auth);
    expect(filtered.map((s) => s.name)).toEqual(["alps", "alpine", "alpha"]);
  });
});

describe("memories", () => {
  it("writes, replaces, reads and deletes files, keeping every version", async () => {
    const p = await project();
    const mst = await createStore(p, { name: "notes" });
    const files = `${p.base}/${mst.id}/memories`;

    const first = await server.api.put(files, { path: "people/ada.md", content: "Ada likes tea" }, p.auth);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(MEM_ID),
      memory_store_id: mst.id,
      path: "people/ada.md",
      digest: digestOf("Ada likes tea"),
      size_bytes: 13,
      version: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const file = `${files}/${first.body.id}`;

    const stale = await server.api.put(files, { path: "people/ada.md", content: "Ada likes coffee", expected_digest: digestOf("nope") }, p.auth);
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: expect.any(String), code: "file_content_conflict", current_digest: digestOf("Ada likes tea") });

    const replaced = await server.api.put(files, { path: "people/ada.md", content: "Ada likes cöffee", expected_digest: digestOf("Ada likes tea") }, p.auth);
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ id: first.body.id, version: 2, size_bytes: 17, digest: digestOf("Ada likes cöffee") });
    // The same content again changes nothing.
    const same = await server.api.put(files, { path: "people/ada.md", content: "Ada likes cöffee" }, p.auth);
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(2);
    expect((await server.api.get(file, p.auth)).body).toEqual({ ...replaced.body, content: "Ada likes cöffee" });
    const empty = await server.api.put(files, { path: "empty", content: "" }, p.auth);
    expect(empty.status).toBe(201);
    expect(empty.body).toMatchObject({ size_bytes: 0, digest: digestOf("") });
    expect((await server.api.get(`${p.base}/${mst.id}`, p.auth)).body).toMatchObject({ memory_count: 2, size_bytes: 17 });

    expect((await server.api.delete(file, p.auth)).status).toBe(204);
    expect((await server.api.get(file, p.auth)).status).toBe(404);
    expect((await server.api.delete(file, p.auth)).status).toBe(404);
    expect((await server.api.get(`${p.base}/${mst.id}`, p.auth)).body).toMatchObject({ memory_count: 1, size_bytes: 0 });
    const gone = await server.api.put(files, { path: "people/ada.md", content: "x", expected_digest: digestOf("Ada likes cöffee") }, p.auth);
    expect(gone.status).toBe(409);
    expect(gone.body).toEqual({ error: expect.any(String), code: "file_content_conflict" });

    const again = await server.api.put(files, { path: "people/ada.md", content: "Ada is back" }, p.auth);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, version: 4 });

    const writer = { kind: "user", id: p.userId };
    const versions = await collectPages(server.api, `${file}/versions?limit=1`, p.auth);
    expect(versions).toEqual([
      { version: 4, deleted: false, digest: digestOf("Ada is back"), size_bytes: 11, written_by: writer, created_at: expect.stringMatching(ISO) },
      { version: 3, deleted: true, digest: null, size_bytes: 0, written_by: writer, created_at: expect.stringMatching(ISO) },
      { version: 2, deleted: false, digest: digestOf("Ada likes cöffee"), size_bytes: 17, written_by: writer, created_at: expect.stringMatching(ISO) },
      { version: 1, deleted: false, digest: digestOf("Ada likes tea"), size_bytes: 13, written_by: writer, created_at: expect.stringMatching(ISO) },
    ]);
    expect((await server.api.get(`${file}/versions/1`, p.auth)).body).toEqual({ ...versions[3], content: "Ada likes tea" });
    expect((await server.api.get(`${file}/versions/3`, p.auth)).body).toEqual({ ...versions[1], content: null });
    expect((await server.api.get(`${file}/versions/5`, p.auth)).status).toBe(404);
    expect((await server.api.get(`${file}/versions/zero`, p.auth)).status).toBe(404);
  });

  it("records an org API key as the writer", async () => {
    const { session, org, project } = await server.api.userWithOrg();
    const key = await server.api.orgKey(session, org.id, "admin");
    const base = `/api/v1/orgs/${org.id}/projects/${project.id}/memory-stores`;
    const mst = (await server.api.post(base, { name: "keyed" }, { token: key.token })).body;
    const put = await server.api.put(`${base}/${mst.id}/memories`, { path: "a", content: "b" }, { token: key.token });
    expect(put.status, put.text).toBe(201);
    const versions = await server.api.get(`${base}/${mst.id}/memories/${put.body.id}/versions`, { token: key.token });
    expect(versions.body.data[0].written_by).toEqual({ kind: "api_key", id: key.key.id });
  });

  it("refuses bad paths, NUL, oversized content and writes to a read-only store", async () => {
    const p = await project();
    const mst = await createStore(p, { name: "rules" });
    const files = `${p.base}/${mst.id}/memories`;
    const badPaths = ["/abs", "a//b", "a/", "./a", "a/../b", "..", "a/./b", "tab\there", "x".repeat(513), "é".repeat(257)];
    for (const path of badPaths) {
      const reply = await server.api.put(files, { path, content: "c" }, p.auth);
      expect(reply.status, path).toBe(400);
      expect(reply.body.code, path).toBe("validation_failed");
      expect(reply.body.issues, path).toEqual([{ path: "/path", message: expect.any(String) }]);
    }
    expect((await server.api.put(files, { path: "x".repeat(512), content: "c" }, p.auth)).status).toBe(201);
    expect((await server.api.put(files, { path: "", content: "c" }, p.auth)).status).toBe(400);

    const nul = await server.api.put(files, { path: "nul", content: "a\u0000b" }, p.auth);
    expect(nul.status).toBe(400);
    expect(nul.body.issues).toEqual([{ path: "/content", message: expect.stringContaining("NUL") }]);

    const limit = 10 * 1024 * 1024;
    // Distinct words, so that the search vector of a full-size file is as large as it gets.
    const words = Array.from({ length: limit / 8 }, (_, i) => i.toString(36).padStart(7, "w")).join(" ");
    const full = words.padEnd(limit, "z").slice(0, limit);
    const largest = await server.api.put(files, { path: "big", content: full }, p.auth);
    expect(largest.status, largest.text).toBe(201);
    expect(largest.body.size_bytes).toBe(limit);
    const over = await server.api.put(files, { path: "bigger", content: `${full}é` }, p.auth);
    expect(over.status).toBe(413);
    expect(over.body.code).toBe("request_too_large");
    expect((await server.api.get(`${files}?path_prefix=bigger`, p.auth)).body.data).toEqual([]);

    expect((await server.api.patch(`${p.base}/${mst.id}`, { writable: false }, p.auth)).status).toBe(200);
    const readOnly = await server.api.put(files, { path: "new", content: "c" }, p.auth);
    expect(readOnly.status).toBe(409);
    expect(readOnly.body.code).toBe("file_read_only");
    expect((await server.api.delete(`${files}/${largest.body.id}`, p.auth)).status).toBe(409);
    expect((await server.api.get(`${files}/${largest.body.id}`, p.auth)).status).toBe(200);
  });

  it("pages by path, filters by prefix and ranks full-text matches", async () => {
    const p = await project();
    const mst = await createStore(p, { name: "kb" });
    const files = `${p.base}/${mst.id}/memories`;
    const contents: Record<string, string> = {
      "b/deploy.md": "deploy deploy deploy the service with care",
      "a/readme.md": "how to deploy once",
      "a/zebra.md": "nothing relevant here",
      "c/deploy-notes.md": "notes",
      "a/other.md": "unrelated text",
    };
    for (const [path, content] of Object.entries(contents)) {
      expect((await server.api.put(files, { path, content }, p.auth)).status).toBe(201);
    }
    const all = await collectPages(server.api, `${files}?limit=2`, p.auth);
    expect(all.map((m) => m.path)).toEqual(["a/other.md", "a/readme.md", "a/zebra.md", "b/deploy.md", "c/deploy-notes.md"]);
    expect(all.every((m) => !("content" in m))).toBe(true);
    const inA = await collectPages(server.api, `${files}?limit=1&path_prefix=a/`, p.auth);
    expect(inA.map((m) => m.path)).toEqual(["a/other.md", "a/readme.md", "a/zebra.md"]);

    const found = await collectPages(server.api, `${files}?limit=1&q=deploy`, p.auth);
    // Three mentions rank first; the two single mentions (one in a path) tie and follow newest first.
    expect(found.map((m) => m.path)).toEqual(["b/deploy.md", "c/deploy-notes.md", "a/readme.md"]);
    const byPath = await server.api.get(`${files}?q=zebra`, p.auth);
    expect(byPath.body.data.map((m: { path: string }) => m.path)).toEqual(["a/zebra.md"]);
    const phrase = await server.api.get(`${files}?q=${encodeURIComponent('"with care" -nothing')}`, p.auth);
    expect(phrase.body.data.map((m: { path: string }) => m.path)).toEqual(["b/deploy.md"]);
    expect((await server.api.get(`${files}?q=absent`, p.auth)).body).toEqual({ data: [], next_cursor: null });

    const pathCursor = (await server.api.get(`${files}?limit=1`, p.auth)).body.next_cursor;
    expect((await server.api.get(`${files}?q=deploy&cursor=${pathCursor}`, p.auth)).status).toBe(400);
  });

  it("lets viewers read and only editors write; another org sees nothing", async () => {
    const p = await project();
    const mst = await createStore(p, { name: "guarded" });
    const store = `${p.base}/${mst.id}`;
    const file = (await server.api.put(`${store}/memories`, { path: "f", content: "c" }, p.auth)).body;
    const projectId = store.split("/")[6];
    const withRole = async (role: string) => {
      const member = await server.api.orgMember(p.auth, p.orgId, "member");
      const set = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${projectId}`, { role }, p.auth);
      expect(set.status, set.text).toBe(200);
      return member.token;
    };
    const reads = [store, p.base, `${store}/memories`, `${store}/memories/${file.id}`, `${store}/memories/${file.id}/versions`, `${store}/memories/${file.id}/versions/1`];

    for (const role of ["viewer", "operator"]) {
      const token = await withRole(role);
      for (const path of reads) expect((await server.api.get(path, { token })).status, `${role} ${path}`).toBe(200);
      expect((await server.api.post(p.base, { name: `by-${role}` }, { token })).status, role).toBe(403);
      expect((await server.api.patch(store, { description: "mine" }, { token })).status, role).toBe(403);
      expect((await server.api.put(`${store}/memories`, { path: "g", content: "c" }, { token })).status, role).toBe(403);
      expect((await server.api.delete(`${store}/memories/${file.id}`, { token })).status, role).toBe(403);
      expect((await server.api.delete(store, { token })).status, role).toBe(403);
    }
    const developer = await withRole("developer");
    expect((await server.api.put(`${store}/memories`, { path: "g", content: "c" }, { token: developer })).status).toBe(201);

    const stranger = (await server.api.userWithOrg("Elsewhere")).token;
    for (const path of reads) expect((await server.api.get(path, { token: stranger })).status, path).toBe(404);
    expect((await server.api.put(`${store}/memories`, { path: "h", content: "c" }, { token: stranger })).status).toBe(404);
    expect((await server.api.delete(store, { token: stranger })).status).toBe(404);
    expect((await server.api.get(store, p.auth)).body.memory_count).toBe(2);
  });
});
