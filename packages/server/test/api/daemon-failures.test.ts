import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { connectMachine } from "../support/daemon.js";
import { useTestServer } from "../support/server.js";

/** `POST /daemon/failures`: a daemon's failure recorded as its machine's failure_report, replaced by the next, cleared by a registration. */

const server = useTestServer();

async function machine(name: string) {
  const owner = await server.api.userWithOrg();
  const connected = await connectMachine(server.api, owner.token, owner.org.id, owner.project.id, name);
  return { ...owner, orgId: owner.org.id as string, ...connected, path: `/api/v1/orgs/${owner.org.id}/machines/${connected.machineId}` };
}

const report = (token: string, query: string, body?: string, contentType = "text/plain") =>
  fetch(`${server.url}/api/v1/daemon/failures?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": contentType }) },
    body: body ?? null,
  });

describe("daemon failure reports", () => {
  it("records the latest failure on the machine and clears it when a daemon registers", async () => {
    const m = await machine("failing");
    expect((await server.api.get(m.path, { token: m.token })).body.failure_report).toBeUndefined();

    const first = await report(m.daemonToken, "stage=daemon_start&exit_status=1&daemon_version=0.1.0", "svcd could not use its home /nope: EACCES");
    expect(first.status, await first.clone().text()).toBe(204);
    const seen = (await server.api.get(m.path, { token: m.token })).body;
    expect(seen.failure_report).toEqual({
      stage: "daemon_start",
      exit_status: 1,
      output_tail: "svcd could not use its home /nope: EACCES",
      output_truncated: false,
      daemon_version: "0.1.0",
      reported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    // The next one replaces it: 4,096 characters and one more say the output was cut.
    const long = `x${"y".repeat(4096)}`;
    expect((await report(m.daemonToken, "stage=startup_script&target_version=2", long)).status).toBe(204);
    const replaced = (await server.api.get(m.path, { token: m.token })).body.failure_report;
    expect(replaced).toEqual({ stage: "startup_script", output_tail: "y".repeat(4096), output_truncated: true, target_version: "2", reported_at: expect.any(String) });
    // Without a body the output is empty.
    expect((await report(m.daemonToken, "stage=daemon_update")).status).toBe(204);
    expect((await server.api.get(m.path, { token: m.token })).body.failure_report).toMatchObject({ stage: "daemon_update", output_tail: "" });

    const registered = await server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: randomUUID(), daemon_version: "test", processes: [] }, { token: m.daemonToken });
    expect(registered.status).toBe(201);
    expect((await server.api.get(m.path, { token: m.token })).body.failure_report).toBeUndefined();
  });

  it("refuses bad input with 4xx in the error envelope, and every credential but a daemon token", async () => {
    const m = await machine("picky");
    const cases: Array<[Response, number, string]> = [
      [await report(m.daemonToken, "stage=exploded", "x"), 400, "invalid_request"],
      [await report(m.daemonToken, "", "x"), 400, "invalid_request"],
      [await report(m.daemonToken, "stage=daemon_start&exit_status=0", "x"), 400, "invalid_request"],
      [await report(m.daemonToken, "stage=daemon_start", "x".repeat(4098)), 400, "validation_failed"],
      [await report(m.daemonToken, "stage=daemon_start", "a\u0000b"), 400, "validation_failed"],
      [await report(m.daemonToken, "stage=daemon_start", "{}", "application/xml"), 415, "unsupported_media_type"],
      [await report(m.token, "stage=daemon_start", "x"), 403, "forbidden"],
      [await report("svc_daemon_v1_" + "a".repeat(43), "stage=daemon_start", "x"), 401, "unauthorized"],
    ];
    for (const [reply, status, code] of cases) {
      expect(reply.status).toBe(status);
      expect(await reply.json()).toEqual({ code, error: expect.any(String), ...(code === "validation_failed" ? { issues: expect.any(Array) } : {}) });
    }
    expect((await server.api.get(m.path, { token: m.token })).body.failure_report).toBeUndefined();
    // Text is accepted on this route only.
    const elsewhere = await fetch(`${server.url}/api/v1/daemon/runtimes`, { method: "POST", headers: { authorization: `Bearer ${m.daemonToken}`, "content-type": "text/plain" }, body: "x" });
    expect(elsewhere.status).toBe(415);
  });
});
