import { collectPages } from "../support/paging.js";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { ApiClient, Reply } from "../support/client.js";

/** Shared by the models test files: id shapes, creation shortcuts, a pager and a misbehaving provider. */

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const MPC_ID = /^mpc_[a-z2-7]{26}$/;
export const MDL_ID = /^mdl_[a-z2-7]{26}$/;
export const MREV_ID = /^mrev_[a-z2-7]{26}$/;
export const PMOG_ID = /^pmog_[a-z2-7]{26}$/;

type Auth = { token: string };

/** A secret of the org holding `value` (an org-owned generic one unless told otherwise); returns its id. */
export async function createSecret(
  api: ApiClient,
  auth: Auth,
  orgId: string,
  options: { value?: string; name?: string; owner?: unknown; material?: unknown } = {},
): Promise<string> {
  const reply = await api.post(
    `/api/v1/orgs/${orgId}/secrets`,
    {
      owner: options.owner ?? { kind: "org" },
      name: options.name ?? `key ${Math.random().toString(36).slice(2, 10)}`,
      material: options.material ?? { kind: "generic", value: options.value ?? "sk-test-key" },
    },
    auth,
  );
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id as string;
}

export async function createProvider(api: ApiClient, auth: Auth, orgId: string, body: Record<string, unknown>): Promise<Reply> {
  const reply = await api.post(`/api/v1/orgs/${orgId}/model-provider-configs`, body, auth);
  expect(reply.status, reply.text).toBe(201);
  return reply;
}

export async function createModel(api: ApiClient, auth: Auth, orgId: string, providerId: string, body: Record<string, unknown>) {
  const reply = await api.post(`/api/v1/orgs/${orgId}/model-provider-configs/${providerId}/models`, body, auth);
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** Follows next_cursor from `path` (which carries its own query) to the end; returns every item in order. */
export async function pageAll(api: ApiClient, auth: Auth, path: string): Promise<any[]> {
  return collectPages(api, path, auth);
}

/** A provider stand-in that answers every request with one fixed status and body, and records headers. */
export async function startStaticProvider(status: number, body: unknown) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
