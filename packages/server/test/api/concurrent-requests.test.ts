import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { createProvider, createSecret } from "./models-fixtures.js";

/*
 * SVC_MAX_CONCURRENT_REQUESTS (issue 9: an embedded mode that stays responsive): API requests beyond the
 * limit wait their turn in arrival order; probes, event streams and daemon routes are not counted; a
 * client that leaves while waiting gives its turn up; a full queue is a 503 at once. One place here, held by
 * a model-catalog request whose provider answers only when the test lets it.
 */
const server = useTestServer({ SVC_MAX_CONCURRENT_REQUESTS: "1", SVC_ALLOW_PRIVATE_NETWORK: "true" });

/** A provider whose model list answers at once until `hold()`, then only at `release()`. */
const held: ServerResponse[] = [];
let holding = false;
const provider = createServer((_request, response) => {
  if (holding) held.push(response);
  else answer(response);
});
const answer = (response: ServerResponse) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "m" }] }));
let providerUrl = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  held.splice(0).forEach(answer);
  provider.closeAllConnections();
  await new Promise<void>((resolve) => provider.close(() => resolve()));
});

async function heldCatalog() {
  const owner = await server.api.userWithOrg();
  const auth = { token: owner.token };
  const secretId = await createSecret(server.api, owner, owner.org.id, { value: "sk-held" });
  const config = (await createProvider(server.api, auth, owner.org.id, { name: "held", api_format: "openai-chat-completions", base_url: providerUrl, credential_secret_id: secretId })).body.config;
  holding = true;
  const seen = held.length;
  const catalog = server.api.get(`/api/v1/orgs/${owner.org.id}/model-provider-configs/${config.id}/model-catalog`, auth);
  // The catalog request holds the one place once svc has asked the provider.
  while (held.length === seen) await new Promise((resolve) => setTimeout(resolve, 10));
  const release = () => {
    holding = false;
    held.splice(0).forEach(answer);
  };
  return { owner, auth, catalog, release };
}

/** svc_http_requests_waiting, polled (bounded) until it reads `count`. */
async function untilWaiting(count: number) {
  for (let attempt = 0; attempt < 500; attempt++) {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    if (Number(/^svc_http_requests_waiting (\d+)$/m.exec(text)?.[1]) === count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never ${count} requests waiting`);
}

const finished: string[] = [];
const track = <T>(name: string, promise: Promise<T>) => promise.then((value) => (finished.push(name), value));

describe("the concurrent-request limit", () => {
  it("queues API requests beyond the limit, in order, while probes and event streams go on", async () => {
    const { owner, auth, catalog, release } = await heldCatalog();
    finished.length = 0;
    const first = track("first", server.api.get(`/api/v1/orgs/${owner.org.id}`, auth));
    await untilWaiting(1);
    const second = track("second", server.api.get(`/api/v1/orgs/${owner.org.id}/projects`, auth));
    await untilWaiting(2);

    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const stream = await fetch(`${server.url}/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}/agents/agt_${"a".repeat(26)}/events/stream`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    // Answered (not found) while the place is held: streams are not counted.
    expect(stream.status).toBe(404);
    expect(finished).toEqual([]);

    release();
    track("catalog", catalog);
    expect((await catalog).status).toBe(200);
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(finished).toEqual(["catalog", "first", "second"]);
  });

  it("gives up the turn of a client that left while waiting", async () => {
    const { owner, auth, catalog, release } = await heldCatalog();
    const leaving = new AbortController();
    const left = fetch(`${server.url}/api/v1/orgs/${owner.org.id}`, { headers: { authorization: `Bearer ${owner.token}` }, signal: leaving.signal });
    await untilWaiting(1);
    leaving.abort();
    await expect(left).rejects.toThrow();
    await untilWaiting(0);
    release();
    expect((await catalog).status).toBe(200);
    // Were the place lost with the client that left, every request from here on would wait forever.
    for (let i = 0; i < 3; i++) expect((await server.api.get(`/api/v1/orgs/${owner.org.id}`, auth)).status).toBe(200);
  });

  it("answers 503 service_unavailable at once when 16 requests per place are already waiting", async () => {
    const { owner, auth, catalog, release } = await heldCatalog();
    const queued = Array.from({ length: 16 }, () => server.api.get(`/api/v1/orgs/${owner.org.id}`, auth));
    await untilWaiting(16);
    const refused = await server.api.get(`/api/v1/orgs/${owner.org.id}`, auth);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ code: "service_unavailable", error: expect.stringContaining("retry") });
    expect(refused.headers.get("retry-after")).toBe("1");
    release();
    expect((await catalog).status).toBe(200);
    expect((await Promise.all(queued)).map((reply) => reply.status)).toEqual(Array.from({ length: 16 }, () => 200));
  });

  it("does not count clients that left while waiting towards the 503", async () => {
    const { owner, auth, catalog, release } = await heldCatalog();
    const leaving = Array.from({ length: 16 }, () => new AbortController());
    const left = leaving.map((controller) => fetch(`${server.url}/api/v1/orgs/${owner.org.id}`, { headers: { authorization: `Bearer ${owner.token}` }, signal: controller.signal }));
    await untilWaiting(16);
    leaving.forEach((controller) => controller.abort());
    await Promise.allSettled(left);
    await untilWaiting(0);
    const queued = Array.from({ length: 16 }, () => server.api.get(`/api/v1/orgs/${owner.org.id}`, auth));
    await untilWaiting(16);
    release();
    expect((await catalog).status).toBe(200);
    expect((await Promise.all(queued)).map((reply) => reply.status)).toEqual(Array.from({ length: 16 }, () => 200));
  });
});
