import { createHmac, createVerify, generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pullsAnswer, type Answer, type FakePull } from "./fake-github-pulls.js";

/**
 * GitHub's REST API for Apps on a loopback port: `GET /app`, `GET /app/installations/{id}` and
 * `POST /app/installations/{id}/access_tokens`, each checking the app JWT (RS256, `iss` the app id, not
 * expired, at most 10 minutes long) against the app's public key, as GitHub does; the pull-request
 * endpoints (fake-github-pulls.ts) for the installation tokens it minted, with GitHub's rate-limit
 * answers on request; and deliveries signed the way GitHub signs webhooks
 * (`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body>`).
 */

export interface FakeGithubApp {
  appId: string;
  slug: string;
  privateKeyPem: string;
  publicKey: KeyObject;
  webhookSecret: string;
}

export interface FakeInstallation {
  id: string;
  appId: string;
  login: string;
  suspended: boolean;
}

export interface GithubCall {
  method: string;
  path: string;
  /** The app id the JWT named, when it verified. */
  jwtIssuer: string | undefined;
  /** The installation access token the call carried, when it was one this fake minted. */
  token?: string;
  accept?: string;
  body?: Record<string, unknown>;
}

/** What `rateLimitNext` makes the next installation call answer: GitHub's primary (403, remaining 0) or secondary (429, Retry-After) limit. */
export type RateLimit = { kind: "primary"; resetInSeconds: number } | { kind: "secondary"; retryAfterSeconds: number };

export interface FakeGithub {
  apiUrl: string;
  calls: GithubCall[];
  addApp(slug?: string): FakeGithubApp;
  addInstallation(app: FakeGithubApp, overrides?: Partial<FakeInstallation>): FakeInstallation;
  /** A pull request in a repository the installation holds. */
  addPullRequest(installation: FakeInstallation, pull: Omit<FakePull, "installationId" | "issueComments" | "reviewComments">): FakePull;
  /** The installation access tokens minted, in order. */
  minted: Array<{ installationId: string; token: string }>;
  rateLimitNext(limit: RateLimit): void;
  /** Revokes every installation token minted so far (GitHub: `DELETE /installation/token`, or an uninstall and reinstall). */
  revokeTokens(): void;
  reset(): void;
  close(): Promise<void>;
}

let counter = 1000;

export async function startFakeGithub(): Promise<FakeGithub> {
  const apps = new Map<string, FakeGithubApp>();
  const installations = new Map<string, FakeInstallation>();
  const calls: GithubCall[] = [];
  const pulls: FakePull[] = [];
  const tokens = new Map<string, { installationId: string; expiresAt: number }>();
  const minted: Array<{ installationId: string; token: string }> = [];
  let rateLimit: RateLimit | undefined;
  const http: Server = createServer(async (req, res) => {
    const answer = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    const url = new URL(req.url ?? "/", "http://github.test");
    const path = url.pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const body = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>);
    const app = verifiedApp(apps, req.headers.authorization);
    const token = /^(?:Bearer|token) (ghs_\w+)$/.exec(req.headers.authorization ?? "")?.[1];
    const installationToken = token ? tokens.get(token) : undefined;
    calls.push({ method: req.method ?? "", path, jwtIssuer: app?.appId, ...(installationToken ? { token } : {}), accept: req.headers.accept ?? "", ...(body ? { body } : {}) });
    if (!req.headers["user-agent"]) return answer(403, { message: "Request forbidden by administrative rules. Please make sure your request has a User-Agent header" });
    if (installationToken && installationToken.expiresAt > Date.now()) {
      if (rateLimit) {
        const limit = rateLimit;
        rateLimit = undefined;
        return rateLimited(res, limit);
      }
      const pulled = pullsAnswer(pulls, installationToken.installationId, req.method ?? "", url, req.headers.accept ?? "", body ?? {});
      return send(res, pulled ?? { status: 404, body: { message: "Not Found" } });
    }
    if (token) return answer(401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" });
    if (!app) return answer(401, { message: "A JSON web token could not be decoded", documentation_url: "https://docs.github.com/rest" });
    if (req.method === "GET" && path === "/app") {
      return answer(200, { id: Number(app.appId), slug: app.slug, name: app.slug, owner: { login: "acme", type: "Organization" } });
    }
    const match = /^\/app\/installations\/([0-9]+)(\/access_tokens)?$/.exec(path);
    const installation = match ? installations.get(match[1]!) : undefined;
    if (!match || !installation || installation.appId !== app.appId) return answer(404, { message: "Not Found" });
    if (req.method === "GET" && !match[2]) {
      return answer(200, { id: Number(installation.id), app_id: Number(app.appId), app_slug: app.slug, account: { login: installation.login, type: "Organization" }, suspended_at: installation.suspended ? new Date().toISOString() : null });
    }
    if (req.method === "POST" && match[2]) {
      if (installation.suspended) return answer(403, { message: "This installation has been suspended" });
      const token = `ghs_${randomUUID().replace(/-/g, "")}`;
      const expiresAt = Date.now() + 3600_000;
      tokens.set(token, { installationId: installation.id, expiresAt });
      minted.push({ installationId: installation.id, token });
      return answer(201, { token, expires_at: new Date(expiresAt).toISOString(), permissions: { pull_requests: "write", issues: "read" }, repository_selection: "all" });
    }
    return answer(404, { message: "Not Found" });
  });
  const address = await new Promise<AddressInfo>((resolve) => http.listen(0, "127.0.0.1", () => resolve(http.address() as AddressInfo)));
  return {
    apiUrl: `http://127.0.0.1:${address.port}`,
    calls,
    addApp(slug = `svc-reviewer-${++counter}`) {
      const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const app: FakeGithubApp = {
        appId: String(++counter),
        slug,
        privateKeyPem: privateKey.export({ format: "pem", type: "pkcs1" }).toString(),
        publicKey,
        webhookSecret: `whsec-${randomUUID()}-SENTINEL`,
      };
      apps.set(app.appId, app);
      return app;
    },
    addInstallation(app, overrides = {}) {
      const installation: FakeInstallation = { id: String(++counter * 10), appId: app.appId, login: "acme", suspended: false, ...overrides };
      installations.set(installation.id, installation);
      return installation;
    },
    addPullRequest(installation, pull) {
      const added: FakePull = { ...pull, installationId: installation.id, issueComments: [], reviewComments: [] };
      pulls.push(added);
      return added;
    },
    minted,
    rateLimitNext(limit) {
      rateLimit = limit;
    },
    revokeTokens() {
      tokens.clear();
    },
    reset() {
      calls.length = 0;
      minted.length = 0;
      rateLimit = undefined;
    },
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

function send(res: ServerResponse, answer: Answer): void {
  const headers = { "content-type": "application/json; charset=utf-8", "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", ...answer.headers };
  res.writeHead(answer.status, headers).end(answer.text ?? JSON.stringify(answer.body ?? {}));
}

/** GitHub's answers when a limit is hit (GitHub docs: "Rate limits for the REST API"). */
function rateLimited(res: ServerResponse, limit: RateLimit): void {
  if (limit.kind === "primary") {
    const reset = String(Math.floor(Date.now() / 1000) + limit.resetInSeconds);
    return send(res, { status: 403, body: { message: "API rate limit exceeded for installation ID 1.", documentation_url: "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting" }, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset } });
  }
  send(res, { status: 429, body: { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." }, headers: { "retry-after": String(limit.retryAfterSeconds) } });
}

/** The app whose key signed this `Bearer` JWT, if it is a valid, current app JWT (GitHub: "Authenticating as a GitHub App"). */
function verifiedApp(apps: Map<string, FakeGithubApp>, authorization: string | undefined): FakeGithubApp | undefined {
  const jwt = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(authorization ?? "");
  if (!jwt) return undefined;
  const [, header, payload, signature] = jwt as unknown as [string, string, string, string];
  let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: unknown }).alg;
    claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as typeof claims;
  } catch {
    return undefined;
  }
  const app = apps.get(String(claims.iss));
  if (alg !== "RS256" || !app || typeof claims.iat !== "number" || typeof claims.exp !== "number") return undefined;
  const now = Math.floor(Date.now() / 1000);
  if (claims.exp <= now || claims.iat > now + 60 || claims.exp - claims.iat > 600) return undefined;
  const verifier = createVerify("RSA-SHA256").update(`${header}.${payload}`);
  return verifier.verify(app.publicKey, Buffer.from(signature, "base64url")) ? app : undefined;
}

/** The headers GitHub sends with a webhook delivery of `event` for this app, signed with `secret`. */
export function signDelivery(app: Pick<FakeGithubApp, "appId">, secret: string, event: string, body: string, delivery = randomUUID()): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": delivery,
    "x-github-hook-id": "1",
    "x-github-hook-installation-target-type": "integration",
    "x-github-hook-installation-target-id": app.appId,
    "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    "user-agent": "GitHub-Hookshot/fake",
  };
}
