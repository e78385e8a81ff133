import { readFile, stat } from "node:fs/promises";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyReply } from "fastify";
import { notFound } from "../errors.js";
import type { HttpApp } from "./app.js";

/*
 * The console (issue 23): packages/web's build, served by svc itself at `/`, so there is no second server.
 * Hashed files under /assets/ are cached for good; index.html answers every other browser path (the
 * console's own routes) and is never cached, so a new build shows on the next load. Nothing under /api/
 * is ever answered with the page.
 */

/** packages/web/dist, found from this file in src/ and in dist/ alike (both sit at the same depth). */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), "../../../../web/dist");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

/** Scripts and styles from this origin only: the build has no inline script or style. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** A file name the build writes into assets/: no separators, so a request cannot leave that folder. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,200}$/;

export function consoleRoutes(app: HttpApp, dist: string = CONSOLE_DIST): void {
  const sendPage = async (reply: FastifyReply) => {
    // Read on every load (half a kilobyte): a rebuild while svc runs names new asset files, and a cached
    // copy would point at the deleted ones. A missing build is said, with how to make it, not a bare 404.
    const html = await readFile(join(dist, "index.html")).catch(() => undefined);
    return secure(reply)
      .status(html ? 200 : 503)
      .header("cache-control", "no-cache")
      .type(html ? "text/html; charset=utf-8" : "text/plain; charset=utf-8")
      .send(html ?? NOT_BUILT);
  };

  app.get("/", { config: { auth: "public" } }, async (_request, reply) => sendPage(reply));
  app.get<{ Params: { name: string } }>("/assets/:name", { config: { auth: "public" } }, async (request, reply) => {
    const name = request.params.name;
    const type = TYPES[extname(name)];
    if (!ASSET_NAME.test(name) || !type) throw notFound(`console asset ${name.slice(0, 200)}`);
    const file = join(dist, "assets", name);
    const found = await stat(file).catch(() => undefined);
    if (!found?.isFile()) throw notFound(`console asset ${name}`);
    return secure(reply)
      .header("cache-control", "public, max-age=31536000, immutable")
      .type(type)
      .send(await readFile(file));
  });
  // The console's client routes (/agents/…, /signin): any other GET for a page outside the API.
  app.get("/*", { config: { auth: "public" } }, async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (path === "/api" || path.startsWith("/api/") || !acceptsHtml(request.headers.accept)) {
      throw notFound(`route ${request.method} ${path}`);
    }
    return sendPage(reply);
  });
}

function acceptsHtml(accept: string | undefined): boolean {
  return accept === undefined || accept.includes("text/html") || accept.includes("*/*");
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", CSP)
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "same-origin");
}

const NOT_BUILT = `The svc console is not built.

Build it with \`npm run build\` in the svc checkout (or start svc with \`npm start\`, which builds
whatever is missing or stale), then reload this page. The API works without it, under /api/v1.
`;
