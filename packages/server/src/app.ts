import type { FastifyBaseLogger } from "fastify";
import { Type } from "typebox";
import type { Config } from "./config.js";
import type { Database } from "./platform/db/index.js";
import { loadMasterKey } from "./platform/crypto/master-key.js";
import { EnvelopeCipher } from "./platform/crypto/envelope.js";
import { API_PREFIX, createHttpApp, type HttpApp } from "./platform/http/app.js";
import { createRateLimiter, type RateLimiter } from "./platform/rate-limit.js";
import { AppError } from "./platform/errors.js";
import { authRoutes, identityRoutes } from "./modules/identity/routes.js";
import { createIdentityService, type IdentityService } from "./modules/identity/service.js";
import { createOrgService, type OrgService } from "./modules/orgs/service.js";
import { orgRoutes } from "./modules/orgs/routes.js";

export interface Services {
  identity: IdentityService;
  orgs: OrgService;
  rateLimiter: RateLimiter;
  cipher: EnvelopeCipher;
}

export interface App {
  http: HttpApp;
  services: Services;
}

/** Wires every module into one HTTP app over one database. Owns no process lifecycle. */
export async function buildApp(options: { config: Config; db: Database; logger: FastifyBaseLogger | boolean }): Promise<App> {
  const { config, db } = options;
  const rateLimiter = createRateLimiter(db);
  const cipher = new EnvelopeCipher(loadMasterKey(config));
  const orgs = createOrgService({ db });
  const identity = createIdentityService({ db, config, rateLimiter, mailer: null, directory: orgs });
  // wiring(services): org-api-keys
  // wiring(services): invitations
  // wiring(services): secrets
  // wiring(services): device-login
  const services: Services = { identity, orgs, rateLimiter, cipher };

  const http = await createHttpApp({
    config,
    logger: options.logger,
    authenticator: {
      bearer: (kind, hash) => (kind === "personal" ? identity.authenticatePat(hash) : Promise.resolve(null)),
      session: (hash) => identity.authenticateSession(hash),
    },
  });

  healthRoutes(http, db);
  authRoutes(http, { identity, config });
  // wiring(auth-routes): device-login
  await http.register(
    async (api) => {
      identityRoutes(api, { identity });
      orgRoutes(api, { orgs });
      // wiring(api-routes): members
      // wiring(api-routes): org-api-keys
      // wiring(api-routes): invitations
      // wiring(api-routes): secrets
      api.get("/openapi.json", { config: { auth: "public" } }, async () => http.swagger());
    },
    { prefix: API_PREFIX },
  );
  return { http, services };
}

function healthRoutes(http: HttpApp, db: Database) {
  const Status = Type.Object({ status: Type.String() });
  http.get("/healthz", { config: { auth: "public" }, schema: { response: { 200: Status } } }, async () => ({ status: "ok" }));
  http.get("/readyz", { config: { auth: "public" }, schema: { response: { 200: Status } } }, async () => {
    try {
      await db.ping();
    } catch (err) {
      throw new AppError("service_unavailable", "database is not reachable", {}, err);
    }
    return { status: "ready" };
  });
}
