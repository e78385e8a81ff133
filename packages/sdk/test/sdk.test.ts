import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { collect, createClient, followEvents, paginate, startDeviceLogin, SvcError, unwrap, waitForDeviceLogin, type StreamFrame } from "@svc/sdk";
import { useTestServer } from "../../server/test/support/server.js";
import { useFakeProvider } from "../../server/test/support/fake-provider.js";
import { agentProject, yamlConfig } from "../../server/test/support/agents.js";
import { createConfig, launch, send, untilEvents } from "../../server/test/support/agent-loop.js";
import { generate, GENERATED } from "../scripts/generate.mjs";

const server = useTestServer({ SVC_DEVICE_POLL_INTERVAL_SECONDS: "1" }, { worker: true });
const provider = useFakeProvider();

describe("generated types", () => {
  it("are what the generator makes of the committed api/openapi.json (run `npm run generate -w @svc/sdk`)", async () => {
    expect(await readFile(GENERATED, "utf8")).toBe(await generate());
  });
});

describe("calls and errors", () => {
  it("returns a call's data and throws SvcError with the envelope's code and issues", async () => {
    const { token, org, project, userId } = await server.api.userWithOrg("Sdk Org");
    const client = createClient({ baseUrl: server.url, token });
    const me = await unwrap(client.GET("/api/v1/me"));
    expect(me.user.id).toBe(userId);
    expect(me.orgs.map((o) => o.id)).toEqual([org.id]);

    const anonymous = createClient({ baseUrl: `${server.url}/`, token: "svc_pat_v1_not-a-token" });
    const unauthorized = await unwrap(anonymous.GET("/api/v1/me")).catch((err: unknown) => err);
    expect(unauthorized).toBeInstanceOf(SvcError);
    expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized", issues: [] });

    const invalid = await unwrap(
      client.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs", {
        params: { path: { orgID: org.id, projectID: project.id } },
        body: { source: "version: v1\ninstruction: hi\nmodel:\n  provider_config: nope\n", source_format: "yaml" },
      }),
    ).catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(SvcError);
    const error = invalid as SvcError;
    expect([error.status, error.code]).toEqual([400, "validation_failed"]);
    expect(error.issues.length).toBeGreaterThan(0);
    for (const issue of error.issues) expect(issue).toMatchObject({ path: expect.any(String), message: expect.any(String), line: expect.any(Number), column: expect.any(Number) });
  });
});

describe("paginate", () => {
  it("walks every page of a cursor list once, in the list's order", async () => {
    const { token, org } = await server.api.userWithOrg("Paged");
    const client = createClient({ baseUrl: server.url, token });
    for (const name of ["p1", "p2", "p3", "p4"]) {
      await unwrap(client.POST("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org.id } }, body: { name } }));
    }
    const pages: number[] = [];
    const items = await collect(
      paginate(async (cursor) => {
        const page = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org.id }, query: { limit: 2, sort: "name", ...(cursor ? { cursor } : {}) } } }));
        pages.push(page.data.length);
        return page;
      }),
    );
    const all = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org.id }, query: { limit: 100, sort: "name" } } }));
    expect(all.data).toHaveLength(5);
    expect(items.map((p) => p.id)).toEqual(all.data.map((p) => p.id));
    expect(pages).toEqual([2, 2, 1]);
  });
});

describe("device login", () => {
  it("polls until the user approves and returns a working personal access token", async () => {
    const client = createClient({ baseUrl: server.url });
    const code = await startDeviceLogin(client, { client_name: "sdk test" });
    const session = await server.api.signup();
    const waiting = waitForDeviceLogin(client, code);
    const approved = await server.api.post("/api/auth/device/approve", { user_code: code.user_code }, { session });
    expect(approved.status, approved.text).toBe(200);
    const token = await waiting;
    const me = await unwrap(createClient({ baseUrl: server.url, token }).GET("/api/v1/me"));
    expect(me.user.id).toBe(session.userId);
  });

  it("throws access_denied when the user denies", async () => {
    const client = createClient({ baseUrl: server.url });
    const code = await startDeviceLogin(client);
    const session = await server.api.signup();
    const waiting = waitForDeviceLogin(client, code).catch((err: unknown) => err);
    const denied = await server.api.post("/api/auth/device/deny", { user_code: code.user_code }, { session });
    expect(denied.status, denied.text).toBe(200);
    expect(await waiting).toMatchObject({ status: 400, code: "access_denied" });
  });
});

describe("followEvents", () => {
  it("follows a running agent and, after the connection drops, resumes after the last saved sequence", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "first answer" }, { text: "second answer" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    await untilEvents(server.api, project, agentId, (list) => list.length >= 2);

    let connections = 0;
    // The first connection breaks right after its first saved frame, as a dropped network would.
    const dropping: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      connections += 1;
      return connections === 1 && response.body ? new Response(cutAfterFirstFrame(response.body), response) : response;
    };
    const client = createClient({ baseUrl: server.url, token: project.token, fetch: dropping });
    const controller = new AbortController();
    const reconnects: number[] = [];
    const frames: StreamFrame[] = [];
    let outputs = 0;
    for await (const frame of followEvents(client, {
      orgId: project.orgId,
      projectId: project.projectId,
      agentId,
      signal: controller.signal,
      backoff: { initialMs: 10 },
      onReconnect: (r) => reconnects.push(r.lastSequence),
    })) {
      frames.push(frame);
      if (frame.event !== "model_output") continue;
      outputs += 1;
      // The second answer is made while the stream follows live, after the reconnect.
      if (outputs === 1) await send(server.api, project, agentId, "again");
      else controller.abort();
    }
    expect(reconnects).toEqual([1]);
    expect(connections).toBe(2);
    const listed = await untilEvents(server.api, project, agentId, () => true);
    expect(frames.map((f) => f.sequence)).toEqual(listed.map((e) => e.sequence));
    expect(frames.map((f) => f.data)).toEqual(listed);
    expect(frames.filter((f) => f.event === "model_output")).toHaveLength(2);
  });

  it("gives up after maxAttempts failed connections in a row, waiting longer each time", async () => {
    let attempts = 0;
    const unreachable: typeof fetch = async () => {
      attempts += 1;
      throw new TypeError("fetch failed");
    };
    const client = createClient({ baseUrl: server.url, token: "t", fetch: unreachable });
    const delays: number[] = [];
    const stream = followEvents(client, { orgId: "org_x", projectId: "proj_x", agentId: "agt_x", backoff: { initialMs: 5, maxMs: 15, maxAttempts: 4 }, onReconnect: (r) => delays.push(r.delayMs) });
    await expect(stream.next()).rejects.toThrow("fetch failed");
    expect(attempts).toBe(4);
    expect(delays).toEqual([5, 10, 15]);
  });

  it("ends with the SvcError of a request the server refuses", async () => {
    const { token, org, project } = await server.api.userWithOrg();
    const client = createClient({ baseUrl: server.url, token });
    const stream = followEvents(client, { orgId: org.id, projectId: project.id, agentId: "agt_aaaaaaaaaaaaaaaaaaaaaaaaaa" });
    await expect(stream.next()).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

/** The body up to and including the first SSE message that has an id, then a network error. */
function cutAfterFirstFrame(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = "";
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      const before = seen.length;
      seen += new TextDecoder().decode(value);
      const end = seen.search(/id: ?\d+\n(?:.*\n)*?\n/);
      if (end === -1) return controller.enqueue(value);
      const match = /id: ?\d+\n(?:.*\n)*?\n/.exec(seen)!;
      const upTo = match.index + match[0].length;
      controller.enqueue(new TextEncoder().encode(seen.slice(before, upTo)));
      await reader.cancel();
      controller.error(new TypeError("network connection lost"));
    },
  });
}
