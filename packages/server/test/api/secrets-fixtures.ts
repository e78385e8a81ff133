import { collectPages } from "../support/paging.js";
import { expect } from "vitest";
import { decodeId, ID_PREFIXES, type IdKind } from "../../src/platform/ids.js";
import type { ApiClient } from "../support/client.js";

/** Shared by the secrets test files: sample materials, a creation shortcut and a pager. */

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const SECRET_ID = /^sec_[a-z2-7]{26}$/;
export const GRANT_ID = /^sgr_[a-z2-7]{26}$/;

const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA-pem-body-SENTINEL\n-----END RSA PRIVATE KEY-----";

/** One full material of every kind, the payload_keys it must report, and the values no response may show. */
export const MATERIALS = {
  generic: {
    material: { kind: "generic", value: "generic-value-SENTINEL" },
    payloadKeys: ["value"],
  },
  oauth_token_set: {
    material: {
      kind: "oauth_token_set",
      access_token: "access-token-SENTINEL",
      access_token_expires_in_seconds: 3600,
      refresh: {
        refresh_token: "refresh-token-SENTINEL",
        token_endpoint: "https://auth.example.com/token",
        client_id: "client-id-SENTINEL",
        client_secret: "client-secret-SENTINEL",
        resource: "https://mcp.example.com",
      },
      id_token: "id-token-SENTINEL",
      mcp_url: "https://mcp.example.com/mcp",
      scopes: "read write",
      token_type: "Bearer",
    },
    payloadKeys: ["access_token", "access_token_expires_in_seconds", "id_token", "mcp_url", "refresh", "scopes", "token_type"],
  },
  slack_app_credentials: {
    material: {
      kind: "slack_app_credentials",
      access_token: "xoxb-SENTINEL",
      client_id: "slack-client-SENTINEL",
      client_secret: "slack-secret-SENTINEL",
      signing_secret: "slack-signing-SENTINEL",
    },
    payloadKeys: ["access_token", "client_id", "client_secret", "signing_secret"],
  },
  aws_credentials: {
    material: {
      kind: "aws_credentials",
      access_key_id: "AKIA-SENTINEL",
      secret_access_key: "aws-secret-SENTINEL",
      session_token: "aws-session-SENTINEL",
      role_arn: "arn:aws:iam::123456789012:role/svc-SENTINEL",
      external_id: "external-SENTINEL",
    },
    payloadKeys: ["access_key_id", "external_id", "role_arn", "secret_access_key", "session_token"],
  },
  github_app_credentials: {
    material: {
      kind: "github_app_credentials",
      app_id: "123456",
      private_key: PEM,
      webhook_secret: "webhook-SENTINEL",
      client_id: "Iv1.github-client-SENTINEL",
      client_secret: "github-secret-SENTINEL",
    },
    payloadKeys: ["app_id", "client_id", "client_secret", "private_key", "webhook_secret"],
  },
} as const;

/** Every response body must be free of this marker, which every sample value carries. */
export const VALUE_MARKER = "SENTINEL";

export function generic(value = "plain-value-SENTINEL") {
  return { kind: "generic", value };
}

export type Owner = { kind: "org" } | { kind: "project"; project_id: string } | { kind: "user" };

/** Creates a secret and returns its body; fails the test on any status but 201. */
export async function createSecret(
  api: ApiClient,
  token: string,
  orgId: string,
  body: { owner: Owner; name: string; metadata?: Record<string, string>; material?: unknown },
) {
  const reply = await api.post(`/api/v1/orgs/${orgId}/secrets`, { material: generic(), ...body }, { token });
  expect(reply.status, reply.text).toBe(201);
  expect(reply.text).not.toContain(VALUE_MARKER);
  return reply.body;
}

/** Follows next_cursor from the first page to the last; returns every item in order. */
export async function collect(api: ApiClient, path: string, token: string): Promise<any[]> {
  return collectPages(api, path, { token }, (reply) => expect(reply.text).not.toContain(VALUE_MARKER));
}

/** The order a sort must produce: by the key (names by code point), ties broken by id, both in the sort's direction. */
export function sortedBy<T extends { id: string; name: string; created_at: string; updated_at?: string }>(items: T[], sort: string): T[] {
  const descending = sort.startsWith("-");
  const key = sort.replace(/^-/, "") as "name" | "created_at" | "updated_at";
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const out = [...items].sort((a, b) => cmp(String(a[key]), String(b[key])) || cmp(uuidOf(a.id), uuidOf(b.id)));
  return descending ? out.reverse() : out;
}

/** Ids tie-break in UUID order, which is not the order of their base32 text. */
function uuidOf(publicId: string): string {
  const prefix = publicId.slice(0, publicId.indexOf("_"));
  const kind = (Object.keys(ID_PREFIXES) as IdKind[]).find((k) => ID_PREFIXES[k] === prefix)!;
  return decodeId(kind, publicId)!;
}
