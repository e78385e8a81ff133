import type { Config } from "../../config.js";
import type { HttpApp } from "../../platform/http/app.js";
import type { UserPrincipal } from "../../platform/http/auth.js";
import { ErrorEnvelope, errorResponses, iso, OkResponse } from "../../platform/http/schemas.js";
import { AUTH_TAG } from "../identity/routes.js";
import * as s from "./schemas.js";
import type { DeviceLoginService } from "./service.js";

/**
 * Device login (RFC 8628) under /api/auth, outside the versioned API. The approval page at /device is the
 * console's (packages/web), which svc serves at every browser path outside /api.
 * The two device routes answer RFC-style `{error}` bodies; the browser routes use the usual envelope.
 */
export function deviceLoginRoutes(app: HttpApp, deps: { deviceLogin: DeviceLoginService; config: Config }) {
  const { deviceLogin, config } = deps;
  const verificationUri = `${config.publicUrl}/device`;

  app.post(
    "/api/auth/device/code",
    {
      config: { auth: "public" },
      schema: {
        tags: [AUTH_TAG],
        operationId: "startDeviceLogin",
        summary: "Start a device login",
        description: "Starts an RFC 8628 device authorization flow for a CLI or another device without a browser. Show `user_code` and `verification_uri` to the user, then poll the token route every `interval` seconds.",
        body: s.CodeRequest,
        response: { 200: s.CodeResponse, 400: ErrorEnvelope, 429: ErrorEnvelope },
      },
    },
    async (request) => {
      const flow = await deviceLogin.start({ clientName: request.body.client_name, tokenName: request.body.token_name }, request.ip);
      return {
        device_code: flow.deviceCode,
        user_code: flow.userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(flow.userCode)}`,
        expires_in: flow.expiresIn,
        interval: flow.interval,
      };
    },
  );

  app.post(
    "/api/auth/device/token",
    {
      config: { auth: "public" },
      schema: {
        tags: [AUTH_TAG],
        operationId: "pollDeviceLogin",
        summary: "Poll a device login",
        description: "Answers 202 `authorization_pending` (or `slow_down`, with a longer interval) until the user decides; then 200 with a personal access token once, or 400 `access_denied`, `expired_token` or `invalid_grant`.",
        body: s.TokenRequest,
        response: { 200: s.TokenResponse, 202: s.PendingPollResponse, 400: s.PollError, 429: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const outcome = await deviceLogin.poll(request.body.device_code, request.ip);
      void reply.header("cache-control", "no-store");
      switch (outcome.kind) {
        case "token":
          return reply.status(200).send({ access_token: outcome.accessToken, token_type: "Bearer" as const });
        case "authorization_pending":
        case "slow_down":
          return reply.status(202).send({ error: outcome.kind, interval: outcome.interval });
        default:
          return reply.status(400).send({ error: outcome.kind });
      }
    },
  );

  app.get(
    "/api/auth/device/pending",
    {
      config: { auth: "session" },
      schema: {
        tags: [AUTH_TAG],
        operationId: "getPendingDeviceLogin",
        summary: "Look up a pending device login",
        description: "What the approval page shows before the signed-in user decides: the requesting client's name and the name the token will get. Needs a browser session.",
        querystring: s.UserCodeQuery,
        response: { 200: s.PendingFlow, ...errorResponses(429) },
      },
    },
    async (request) => {
      const flow = await deviceLogin.pending(userOf(request.principal), request.query.user_code);
      return { user_code: flow.userCode, client_name: flow.clientName, token_name: flow.tokenName, expires_at: iso(flow.expiresAt) };
    },
  );

  for (const decision of ["approve", "deny"] as const) {
    app.post(
      `/api/auth/device/${decision}`,
      {
        config: { auth: "session" },
        schema: {
          tags: [AUTH_TAG],
          operationId: `${decision}DeviceLogin`,
          ...DECISION_DOCS[decision],
          body: s.UserCodeRequest,
          response: { 200: OkResponse, ...errorResponses(409, 429) },
        },
      },
      async (request) => {
        await deviceLogin[decision](userOf(request.principal), request.body.user_code);
        return { ok: true as const };
      },
    );
  }
}

const DECISION_DOCS = {
  approve: { summary: "Approve a device login", description: "Approves the flow of `user_code`: the device's next poll receives a personal access token of the signed-in user. Needs a browser session and the CSRF header." },
  deny: { summary: "Deny a device login", description: "Refuses the flow of `user_code`: the device's next poll answers `access_denied`. Needs a browser session and the CSRF header." },
};

function userOf(principal: unknown): string {
  return (principal as UserPrincipal).userId;
}
