import { expect } from "vitest";
import type { ApiClient } from "../support/client.js";

/** Shared by the machines test files: an org with projects and roles, and creation shortcuts. */

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const MACHINE_ID = /^mch_[a-z2-7]{26}$/;
export const TOKEN_ID = /^mdt_[a-z2-7]{26}$/;
export const GRANT_ID = /^pmg_[a-z2-7]{26}$/;
export const DAEMON_TOKEN = /^svc_daemon_v1_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/;

/** An owner's org with extra projects by name (plus its default project as `Default`). */
export async function orgWithProjects(api: ApiClient, ...projectNames: string[]) {
  const owner = await api.userWithOrg();
  const projects: Record<string, any> = { Default: owner.project };
  for (const name of projectNames) {
    const reply = await api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name }, { token: owner.token });
    expect(reply.status, reply.text).toBe(201);
    projects[name] = reply.body;
  }
  return { ...owner, orgId: owner.org.id as string, projects };
}

export async function setProjectRole(api: ApiClient, managerToken: string, orgId: string, userId: string, projectId: string, role: string) {
  const reply = await api.put(`/api/v1/orgs/${orgId}/members/${userId}/projects/${projectId}`, { role }, { token: managerToken });
  expect(reply.status, reply.text).toBe(200);
}

/** Creates a BYO machine record; fails the test on any status but 201. */
export async function createMachine(api: ApiClient, token: string, orgId: string, body: Record<string, unknown> = {}) {
  const reply = await api.post(`/api/v1/orgs/${orgId}/machines`, { display_name: `machine ${Math.random().toString(36).slice(2, 8)}`, ...body }, { token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

export async function grantMachine(api: ApiClient, token: string, orgId: string, projectId: string, machineId: string) {
  const reply = await api.post(`/api/v1/orgs/${orgId}/projects/${projectId}/machine-grants`, { machine_id: machineId }, { token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.grant;
}

export async function createGenericSecret(api: ApiClient, token: string, orgId: string, owner: Record<string, unknown>, name: string, value = "secret-value-SENTINEL") {
  const reply = await api.post(`/api/v1/orgs/${orgId}/secrets`, { owner, name, material: { kind: "generic", value } }, { token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}
