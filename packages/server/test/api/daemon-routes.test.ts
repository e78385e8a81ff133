import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { connectMachine, connectionState } from "../support/daemon.js";
import { useTestServer } from "../support/server.js";

/** The machine daemon routes over plain HTTP: who may call them, runtimes, leases and their end. */

const server = useTestServer();

async function machine(name = "box") {
  const owner = await server.api.userWithOrg();
  const connected = await connectMachine(server.api, owner.token, owner.org.id, owner.project.id, name);
  return { ...owner, orgId: owner.org.id as string, ...connected };
}

const register = (token: string, instance = randomUUID()) =>
  server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: instance, daemon_version: "test", processes: [] }, { token });

describe("the daemon routes", () => {
  it("take a daemon token and nothing else", async () => {
    const m = await machine();
    const bootstrap = await server.api.post("/api/v1/daemon/bootstrap", undefined, { token: m.daemonToken });
    expect(bootstrap.status, bootstrap.text).toBe(200);
    expect(bootstrap.body).toEqual({ installation_id: expect.stringMatching(/^inst_[a-z2-7]{26}$/), machine_id: m.machineId });
    const personal = await server.api.post("/api/v1/daemon/bootstrap", undefined, { token: m.token });
    expect(personal.status).toBe(403);
    expect(personal.body.code).toBe("forbidden");
    const anonymous = await server.api.post("/api/v1/daemon/bootstrap");
    expect(anonymous.status).toBe(401);
    const unknown = await server.api.post("/api/v1/daemon/bootstrap", undefined, { token: m.daemonToken.slice(0, 20) + "x".repeat(m.daemonToken.length - 20) });
    expect(unknown.status).toBe(401);
    // And the daemon token is refused by the rest of the API.
    expect((await server.api.get(`/api/v1/orgs/${m.orgId}/machines`, { token: m.daemonToken })).status).toBe(401);
  });

  it("registers a runtime with a lease that puts the machine online; ending it puts it offline", async () => {
    const m = await machine();
    expect(await connectionState(server.api, m.token, m.orgId, m.machineId)).toBe("offline");
    const registered = await register(m.daemonToken);
    expect(registered.status, registered.text).toBe(201);
    const runtime = registered.body.runtime;
    expect(runtime).toMatchObject({ id: expect.stringMatching(/^drt_/), machine_id: m.machineId, state: "active", next_heartbeat_after_ms: 10_000, ended_at: null });
    expect(Date.parse(runtime.lease_expires_at) - Date.parse(runtime.last_seen_at)).toBe(120_000);
    expect(registered.body.reconciliation).toEqual({ processes: [] });
    expect(await connectionState(server.api, m.token, m.orgId, m.machineId)).toBe("online");

    const sleep = await server.api.post(`/api/v1/daemon/runtimes/${runtime.id}/sleep`, undefined, { token: m.daemonToken });
    expect(sleep.status).toBe(409);
    expect(sleep.body.code).toBe("not_wake_capable");

    const ended = await server.api.post(`/api/v1/daemon/runtimes/${runtime.id}/end`, undefined, { token: m.daemonToken });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body).toMatchObject({ state: "ended", state_reason_code: "daemon_ended", ended_at: expect.any(String) });
    expect(await connectionState(server.api, m.token, m.orgId, m.machineId)).toBe("offline");
    expect((await server.api.post(`/api/v1/daemon/runtimes/${runtime.id}/end`, undefined, { token: m.daemonToken })).body.state).toBe("ended");
    const socket = await server.api.get(`/api/v1/daemon/runtimes/${runtime.id}/socket`, { token: m.daemonToken });
    expect(socket.status).toBe(410);
    expect(socket.body.code).toBe("gone");
  });

  it("replaces a runtime when a new instance registers; the replaced instance is gone", async () => {
    const m = await machine();
    const first = randomUUID();
    const one = (await register(m.daemonToken, first)).body.runtime;
    const two = await register(m.daemonToken);
    expect(two.status).toBe(201);
    expect(two.body.runtime.id).not.toBe(one.id);
    const again = await register(m.daemonToken, first);
    expect(again.status).toBe(410);
    expect(again.body.code).toBe("gone");
  });

  it("never reach another machine's runtime", async () => {
    const a = await machine("a");
    const b = await machine("b");
    const runtime = (await register(a.daemonToken)).body.runtime;
    const end = await server.api.post(`/api/v1/daemon/runtimes/${runtime.id}/end`, undefined, { token: b.daemonToken });
    expect(end.status).toBe(404);
    expect(await connectionState(server.api, a.token, a.orgId, a.machineId)).toBe("online");
  });

  it("refuse a revoked token and a deleted machine's token", async () => {
    const m = await machine();
    await register(m.daemonToken);
    const revoked = await server.api.post(`/api/v1/orgs/${m.orgId}/machines/${m.machineId}/daemon-tokens/${m.tokenId}/revoke`, undefined, { token: m.token });
    expect(revoked.status).toBe(200);
    expect((await register(m.daemonToken)).status).toBe(401);
    expect(await connectionState(server.api, m.token, m.orgId, m.machineId)).toBe("offline");
    const other = await machine("doomed");
    expect((await server.api.delete(`/api/v1/orgs/${other.orgId}/machines/${other.machineId}`, { token: other.token })).status).toBe(204);
    expect((await server.api.post("/api/v1/daemon/bootstrap", undefined, { token: other.daemonToken })).status).toBe(401);
  });
});
