import { createConnection, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { describe, expect, it } from "vitest";
import { pacedServerFactory } from "../../src/platform/http/pacing.js";
import { useTestServer } from "../support/server.js";

/*
 * SVC_REQUEST_STARTS_PER_TURN (issue 9: an embedded mode that stays responsive): a burst of API requests
 * read in one poll phase starts a few per turn of the event loop; requests outside /api/ start at once.
 */

/** Counts turns of the event loop: one increment per check phase. */
function turnCounter() {
  let turn = 0;
  let counting = true;
  const tick = () => {
    turn += 1;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turn, stop: () => void (counting = false) };
}

/**
 * Sends one request per path, each on its own connection, so that they all reach the server's sockets
 * while this thread is blocked: the next poll phase reads them together, as when many clients send at once.
 * Answers the turn each request started in, in the order the requests started.
 */
async function startsOfBurst(perTurn: number, paths: string[]): Promise<Array<{ path: string; turn: number }>> {
  const turns = turnCounter();
  const started: Array<{ path: string; turn: number }> = [];
  const server: Server = pacedServerFactory(perTurn)((request, response) => {
    started.push({ path: request.url!, turn: turns.now() });
    response.end("ok");
  }, {});
  let accepted = 0;
  server.on("connection", () => (accepted += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const sockets = await Promise.all(paths.map(() => connected(port)));
    for (let wait = 0; accepted < paths.length && wait < 200; wait++) await new Promise((resolve) => setTimeout(resolve, 5));
    const answered = sockets.map(readToEnd);
    sockets.forEach((socket, i) => socket.write(`GET ${paths[i]} HTTP/1.1\r\nHost: svc.test\r\nConnection: close\r\n\r\n`));
    const blockedUntil = Date.now() + 50;
    while (Date.now() < blockedUntil); // hold the loop while the requests land in the kernel
    const replies = await Promise.all(answered);
    expect(replies.every((reply) => reply.startsWith("HTTP/1.1 200"))).toBe(true);
    return started;
  } finally {
    turns.stop();
    await new Promise((resolve) => server.close(resolve));
  }
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: "127.0.0.1" }, () => resolve(socket));
    socket.once("error", reject);
  });
}

function readToEnd(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.once("end", () => resolve(text));
    socket.once("error", reject);
  });
}

/** How many requests started in each turn that started any. */
function perTurn(started: Array<{ turn: number }>): number[] {
  const counts = new Map<number, number>();
  for (const { turn } of started) counts.set(turn, (counts.get(turn) ?? 0) + 1);
  return [...counts.values()];
}

describe("request pacing", () => {
  const apiPaths = Array.from({ length: 6 }, (_, i) => `/api/v1/orgs/org_${i}`);

  it("starts a burst of API requests at most perTurn per turn", async () => {
    const started = await startsOfBurst(2, apiPaths);
    expect(started).toHaveLength(6);
    expect(Math.max(...perTurn(started))).toBeLessThanOrEqual(2);
    expect(perTurn(started).length).toBeGreaterThanOrEqual(3);
  });

  it("starts the whole burst in one turn when pacing is off (0)", async () => {
    const started = await startsOfBurst(0, apiPaths);
    expect(perTurn(started)).toEqual([6]);
  });

  it("starts a probe at once, ahead of API requests that arrived with it", async () => {
    const started = await startsOfBurst(1, [...apiPaths, "/healthz"]);
    expect(started[0]).toEqual({ path: "/healthz", turn: expect.any(Number) });
    expect(started.slice(1).every((start) => start.turn > started[0]!.turn)).toBe(true);
  });

  it("keeps the server options Fastify would have set", () => {
    const server = pacedServerFactory(4)(() => {}, { keepAliveTimeout: 1234, requestTimeout: 5678, connectionTimeout: 0, maxRequestsPerSocket: 7 });
    expect([server.keepAliveTimeout, server.requestTimeout, server.maxRequestsPerSocket]).toEqual([1234, 5678, 7]);
  });
});

describe("request pacing in svc", () => {
  const server = useTestServer({ SVC_REQUEST_STARTS_PER_TURN: "1" });

  it("answers every request of a burst, bodies included, when it starts one per turn", async () => {
    const owner = await server.api.userWithOrg();
    const auth = { token: owner.token };
    const names = Array.from({ length: 12 }, (_, i) => `paced-${i}`);
    const [created, reads, probe] = await Promise.all([
      Promise.all(names.map((name) => server.api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name }, auth))),
      Promise.all(names.map(() => server.api.get(`/api/v1/orgs/${owner.org.id}`, auth))),
      fetch(`${server.url}/healthz`),
    ]);
    expect(created.map((reply) => [reply.status, reply.body.name])).toEqual(names.map((name) => [201, name]));
    expect(reads.every((reply) => reply.status === 200)).toBe(true);
    expect(probe.status).toBe(200);
  });
});
