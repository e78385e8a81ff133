import { describe, expect, it } from "vitest";
import { useTestServer } from "../../server/test/support/server.js";
import { json, useCli } from "./support.js";

/** `svc memory`: stores and their files through the built binary, as docs/memory.md shows them. */

const server = useTestServer();
const { svc, configDir } = useCli(server);

describe("svc memory", () => {
  it("creates a store, puts, lists, reads, searches, versions and removes files, and deletes the store", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const env = { SVC_TOKEN: token, SVC_ORG: org.id, SVC_PROJECT: project.id, SVC_CONFIG_DIR: configDir() };

    const store = json(await svc(["memory", "stores", "create", "team", "--description", "What we decided", "--json"], { env }));
    expect(store).toMatchObject({ name: "team", description: "What we decided", writable: true });
    expect(json(await svc(["memory", "stores", "list", "--json"], { env })).map((s: { id: string }) => s.id)).toEqual([store.id]);

    const first = json(await svc(["memory", "put", "team", "notes/plan.md", "--json"], { env, input: "# Plan\nship it\n" }));
    expect(first).toMatchObject({ path: "notes/plan.md", version: 1 });
    const stale = await svc(["memory", "put", "team", "notes/plan.md", "--expected-digest", `sha256:${"0".repeat(64)}`], { env, input: "x" });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("file_content_conflict");
    json(await svc(["memory", "put", "team", "notes/plan.md", "--expected-digest", first.digest, "--json"], { env, input: "# Plan\nship it today\n" }));

    const ls = await svc(["memory", "ls", "team"], { env });
    expect(ls.stdout).toContain("notes/plan.md");
    expect((await svc(["memory", "cat", "team", "notes/plan.md"], { env })).stdout).toBe("# Plan\nship it today\n");
    expect((await svc(["memory", "cat", "team", "notes/plan.md", "--at-version", "1"], { env })).stdout).toBe("# Plan\nship it\n");
    const versions = json(await svc(["memory", "versions", "team", "notes/plan.md", "--json"], { env }));
    expect(versions.map((v: { version: number; written_by: { kind: string } }) => [v.version, v.written_by.kind])).toEqual([[2, "user"], [1, "user"]]);
    expect(json(await svc(["memory", "search", "team", "today", "--json"], { env })).map((m: { path: string }) => m.path)).toEqual(["notes/plan.md"]);

    expect((await svc(["memory", "rm", "team", "notes/plan.md"], { env })).code).toBe(0);
    expect(json(await svc(["memory", "ls", "team", "--json"], { env }))).toEqual([]);
    const missing = await svc(["memory", "cat", "team", "notes/plan.md"], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("svc memory ls team");

    expect((await svc(["memory", "stores", "delete", "team"], { env })).code).toBe(0);
    expect(json(await svc(["memory", "stores", "list", "--json"], { env }))).toEqual([]);
  });
});
