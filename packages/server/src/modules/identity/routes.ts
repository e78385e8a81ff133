import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config.js";
import { pathId } from "../../platform/http/params.js";
import { encodeId } from "../../platform/ids.js";
import { cookieNames, type UserPrincipal } from "../../platform/http/auth.js";
import { cspNonce, sendHtml } from "../../platform/http/html.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { errorResponses, iso, OkResponse, Page } from "../../platform/http/schemas.js";
import { pageQuery } from "../../platform/http/lists.js";
import * as s from "./schemas.js";
import { renderVerifyEmailPage } from "./pages.js";
import { SESSION_IDLE_SECONDS } from "./store.js";
import type { IdentityService, NewSession } from "./service.js";
import { patView, userView } from "./views.js";

const TAG = "Users and API keys";
/** The tag of every /api/auth route (here and in device-login). */
export const AUTH_TAG = "Authentication";

export function sessionCookies(config: Config) {
  const names = cookieNames(config);
  const base = { path: "/", sameSite: "lax" as const, secure: config.secureCookies, maxAge: SESSION_IDLE_SECONDS };
  return {
    set(reply: FastifyReply, session: NewSession) {
      void reply.setCookie(names.session, session.token, { ...base, httpOnly: true });
      void reply.setCookie(names.csrf, session.csrf, { ...base, httpOnly: false });
    },
    clear(reply: FastifyReply) {
      void reply.clearCookie(names.session, { path: "/", secure: config.secureCookies });
      void reply.clearCookie(names.csrf, { path: "/", secure: config.secureCookies });
    },
  };
}

/** Sign-up, sign-in and sign-out under /api/auth (unversioned, beside device login). */
export function authRoutes(app: HttpApp, deps: { identity: IdentityService; config: Config }) {
  const { identity } = deps;
  const cookies = sessionCookies(deps.config);

  app.post(
    "/api/auth/signup",
    {
      config: { auth: "public", startsSession: true },
      schema: {
        tags: [AUTH_TAG],
        operationId: "signUp",
        summary: "Sign up",
        description: "Creates a user. Without email verification it also starts a browser session (session and CSRF cookies, and `csrf_token` in the body); with verification on, the session starts at the first sign-in after the mailed link is followed.",
        body: s.SignupRequest,
        response: { 201: s.AuthResponse, ...errorResponses(403, 409, 429) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { user, session, mailError } = await identity.signup(
        { email: body.email, password: body.password, displayName: body.display_name },
        request.ip,
      );
      if (mailError) request.log.error({ err: mailError }, "verification mail could not be sent");
      if (session) cookies.set(reply, session);
      return reply.status(201).send({
        user: userView(user),
        ...(session ? { csrf_token: session.csrf } : {}),
        email_verification_required: session === null,
      });
    },
  );

  app.post(
    "/api/auth/login",
    {
      config: { auth: "public", startsSession: true },
      schema: { tags: [AUTH_TAG], operationId: "signIn", summary: "Sign in", description: "Checks the email and password and starts a browser session: the session cookie (HttpOnly), the CSRF cookie, and `csrf_token` in the body. Browser-session writes send that value in `X-Svc-Csrf`. Repeated failures are rate limited (429). A browser request from an origin other than svc's public URL is 403 csrf_check_failed.", body: s.LoginRequest, response: { 200: s.AuthResponse, ...errorResponses(403, 429) } },
    },
    async (request, reply) => {
      const { user, session } = await identity.login(request.body, request.ip);
      cookies.set(reply, session);
      return { user: userView(user), csrf_token: session.csrf, email_verification_required: false };
    },
  );

  app.post(
    "/api/auth/logout",
    { config: { auth: "session" }, schema: { tags: [AUTH_TAG], operationId: "signOut", summary: "Sign out", description: "Ends the browser session and clears its cookies.", response: { 200: OkResponse, ...errorResponses() } } },
    async (request, reply) => {
      const principal = request.principal as Extract<UserPrincipal, { via: "session" }>;
      await identity.logout(principal.sessionId);
      cookies.clear(reply);
      return { ok: true as const };
    },
  );

  // The link in the verification mail lands here, in a browser: it answers a page, never JSON.
  // The page reads its query itself: a malformed link answers the page, never a JSON 400.
  const page = { description: "An HTML page saying whether the address is verified.", content: { "text/html": { schema: Type.String() } } };
  const verifyEmail = { tags: [AUTH_TAG], operationId: "verifyEmail", summary: "Verify an email address", description: "The link in the verification mail (`?token=\u2026`). Answers an HTML page, 200 when the address is verified, 400 when the link is invalid or expired.", response: { 200: page, 400: page } };
  app.get("/api/auth/verify-email", { config: { auth: "public" }, schema: verifyEmail }, async (request, reply) => {
    const token = (request.query as Record<string, unknown>)["token"];
    const verified = typeof token === "string" && (await identity.verifyEmail(token));
    const nonce = cspNonce();
    return sendHtml(reply, verified ? 200 : 400, renderVerifyEmailPage({ nonce, verified }), nonce);
  });
}

/** /me and personal access tokens under /api/v1. */
export function identityRoutes(app: HttpApp, deps: { identity: IdentityService }) {
  const { identity } = deps;

  app.get(
    "/me",
    { config: { auth: "user" }, schema: { tags: [TAG], operationId: "getCurrentUser", summary: "Get the signed-in user", description: "The caller's user and the organizations they belong to, with their role in each.", response: { 200: s.CurrentUser, ...errorResponses() } } },
    async (request) => {
      const { user, orgs } = await identity.me(userOf(request.principal));
      return {
        user: userView(user),
        orgs: orgs.map((o) => ({ id: encodeId("org", o.id), name: o.name, role: o.role, created_at: iso(o.createdAt) })),
      };
    },
  );

  app.delete(
    "/me",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "deleteCurrentUser",
        summary: "Delete the signed-in user's account",
        description:
          "Deletes the account: its personal access tokens, browser sessions and device logins, its organization and project " +
          "memberships, and its own secrets and skills; the email address can sign up again, as a new user. Refused (409) while " +
          "the user is the last owner of an organization, or one of their secrets or skills is still in use. What the user " +
          "created in organizations stays, without its creator.",
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await identity.deleteAccount(userOf(request.principal));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/personal-access-tokens",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "listPersonalAccessTokens",
        summary: "List personal access tokens",
        description: "The caller's personal access tokens, revoked ones included, newest first. Token values are never returned.",
        querystring: Type.Object(pageQuery, { additionalProperties: false }),
        response: { 200: Page(s.PersonalAccessToken), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await identity.listPats(userOf(request.principal), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), patView);
    },
  );

  app.post(
    "/personal-access-tokens",
    {
      config: { auth: "session" },
      schema: {
        tags: [TAG],
        operationId: "createPersonalAccessToken",
        summary: "Create a personal access token",
        description: "Mints a `svc_pat_v1_\u2026` token for the signed-in user. The value is in this answer only; svc keeps its hash. Needs a browser session (cookie and CSRF header), not a token.",
        body: s.CreatePatRequest,
        response: { 201: s.CreatePatResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { token, record } = await identity.createPat(userOf(request.principal), request.body.name);
      return reply.status(201).send({ token, token_record: patView(record) });
    },
  );

  app.post(
    "/personal-access-tokens/:tokenID/revoke",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "revokePersonalAccessToken",
        summary: "Revoke a personal access token",
        description: "Revokes one of the caller's tokens for good; requests with it are refused from now on.",
        params: s.PatParams,
        response: { 200: s.PersonalAccessToken, ...errorResponses() },
      },
    },
    async (request) => {
      return patView(await identity.revokePat(userOf(request.principal), pathId("pat", request.params.tokenID)));
    },
  );
}

function userOf(principal: unknown): string {
  return (principal as UserPrincipal).userId;
}
