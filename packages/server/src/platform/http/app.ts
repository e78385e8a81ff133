import type { IncomingMessage, ServerResponse } from "node:http";
import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import websocket from "@fastify/websocket";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RawServerDefault, type RouteOptions } from "fastify";
import type { Config } from "../../config.js";
import { notFound } from "../errors.js";
import { hoistComponents } from "./components.js";
import { authHook, type Authenticator, type AuthMode } from "./auth.js";
import { errorHandler } from "./error-handler.js";
import { parseJsonBodies } from "./json-body.js";
import { acceptAbsentBodies, markOptionalBodies } from "./optional-body.js";
import { refuseUnstorableText } from "./storable-input.js";
import { clientError, frameworkError, MAX_PARAM_LENGTH, secureResponses } from "./hardening.js";
import { pacedServerFactory } from "./pacing.js";
import { strictQueries } from "./strict-query.js";
import { traceRequests } from "./tracing.js";
import { serializerCompiler } from "./serialization.js";
import { validatorCompiler } from "./validation.js";

export type HttpApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export const API_PREFIX = "/api/v1";
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/**
 * Routes anyone may call (sign-up, sign-in, device login) take small bodies: their rate limits are checked
 * after parsing, so a stranger's megabyte of JSON would cost svc a second of CPU per request before any limit.
 */
export const PUBLIC_BODY_LIMIT = 16 * 1024;
export const API_VERSION = "0.1.0";

export interface HttpAppOptions {
  config: Config;
  authenticator: Authenticator;
  logger: FastifyBaseLogger | boolean;
}

/** The HTTP shell every module registers into: validation, errors, cookies, auth and the OpenAPI document. */
export async function createHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const { config } = options;
  const app = Fastify({
    loggerInstance: typeof options.logger === "object" ? options.logger : undefined,
    logger: typeof options.logger === "boolean" ? options.logger : undefined,
    // One line per request, written by logRequests with its route and status, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    ajv: { customOptions: { strict: false } },
    serverFactory: pacedServerFactory(config.requestStartsPerTurn),
  }).withTypeProvider<TypeBoxTypeProvider>();
  traceRequests(app);
  logRequests(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request) => {
    throw notFound(`route ${request.method} ${request.url.split("?")[0]}`);
  });
  // svc speaks JSON only; any other body type is a 415 rather than a string reaching a route.
  app.removeContentTypeParser("text/plain");
  parseJsonBodies(app);
  const optionalBodies = acceptAbsentBodies(app);
  refuseUnstorableText(app);
  secureResponses(app);
  strictQueries(app, API_PREFIX);
  app.decorateRequest("principal", null);
  app.decorateRequest("daemon", null);
  await app.register(cookie);
  // The machine daemons' runtime sockets (modules/daemon); frames are capped at the reference's 1 MiB.
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "svc API",
        version: API_VERSION,
        description: "Agent orchestration service. Self-hosted deployments serve it under /api/v1.",
      },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", description: "svc_pat_v1_… or svc_org_v1_… token" },
          browserSessionCookie: { type: "apiKey", in: "cookie", name: "svc_session" },
          csrfHeader: { type: "apiKey", in: "header", name: "X-Svc-Csrf" },
          machineDaemonAuth: { type: "http", scheme: "bearer", description: "svc_daemon_v1_… machine daemon token; valid only on the daemon routes" },
        },
      },
    },
    hideUntagged: true,
    transformObject: (documents) =>
      "openapiObject" in documents ? hoistComponents(markOptionalBodies(documents.openapiObject, optionalBodies)) : documents.swaggerObject,
  });
  app.addHook("onRoute", documentSecurity);
  app.addHook("onRoute", limitPublicBodies);
  const authenticate = authHook(config, options.authenticator);
  app.addHook("onRequest", authenticate);
  app.decorate("principalAgain", authenticate.principalAgain);
  return app;
}

const SECURITY: Record<AuthMode, Array<Record<string, string[]>>> = {
  public: [],
  principal: [{ bearerAuth: [] }, { browserSessionCookie: [], csrfHeader: [] }],
  user: [{ bearerAuth: [] }, { browserSessionCookie: [], csrfHeader: [] }],
  session: [{ browserSessionCookie: [], csrfHeader: [] }],
  daemon: [{ machineDaemonAuth: [] }],
  bearer: [{ bearerAuth: [] }],
};

/** Writes each route's credential requirement (from its auth mode) into the OpenAPI document. */
function limitPublicBodies(route: RouteOptions): void {
  const mode = (route.config as { auth?: AuthMode } | undefined)?.auth;
  if (mode === "public") route.bodyLimit = Math.min(route.bodyLimit ?? PUBLIC_BODY_LIMIT, PUBLIC_BODY_LIMIT);
}

function documentSecurity(route: RouteOptions): void {
  if (!route.schema) return;
  const mode = (route.config as { auth?: AuthMode } | undefined)?.auth ?? "principal";
  (route.schema as Record<string, unknown>)["security"] = SECURITY[mode];
}

/**
 * Each answered request as one line: method, route (the pattern, so no id, token or query reaches the
 * log), status and duration.
 */
/**
 * At info, a line per change and per failure; reads that succeed (the console's and clients' polls, the
 * health checks) are at debug, or they would bury everything else (docs/operations.md, "Logs").
 */
function logRequests(app: FastifyInstance): void {
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    const level = READS.has(request.method) && reply.statusCode < 400 ? "debug" : "info";
    request.log[level]({ method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, `${request.method} ${route} ${reply.statusCode}`);
  });
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
