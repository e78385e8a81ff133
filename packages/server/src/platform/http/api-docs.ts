import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { FastifyReply } from "fastify";
import type { HttpApp } from "./app.js";

/*
 * The API reference page (issue 23): the OpenAPI document rendered by Redoc's standalone bundle, which svc
 * serves from its own dependency, so the page loads nothing from another origin.
 */

const REDOC_VERSION = (createRequire(import.meta.url)("redoc/package.json") as { version: string }).version;
const REDOC_BUNDLE = createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");
/** The bundle's address names its version, so a browser may keep it for good. */
export const REDOC_PATH = `/api/docs/redoc-${REDOC_VERSION}.standalone.js`;

/**
 * Scripts from this origin only, and no inline script at all. Redoc's styled-components insert `<style>`
 * elements at run time and the bundle offers no nonce for them, hence 'unsafe-inline' for styles alone;
 * its search index runs in a worker it starts from a blob: URL.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API reference</title>
</head>
<body>
<redoc spec-url="/api/v1/openapi.json" hide-hostname="true" path-in-middle-panel="true"></redoc>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

let bundle: Promise<Buffer> | undefined;

/** `GET /api/docs`, the reference page, and `GET /api/docs/redoc-<version>.standalone.js`, its renderer. */
export function apiDocsRoutes(app: HttpApp): void {
  app.get("/api/docs", { config: { auth: "public" } }, async (_request, reply) =>
    securePage(reply).header("cache-control", "no-cache").type("text/html; charset=utf-8").send(PAGE),
  );
  app.get(REDOC_PATH, { config: { auth: "public" } }, async (_request, reply) => {
    bundle ??= readFile(REDOC_BUNDLE);
    return reply
      .header("cache-control", "public, max-age=31536000, immutable")
      .type("text/javascript; charset=utf-8")
      .send(await bundle);
  });
}

function securePage(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", CSP)
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "same-origin");
}
