import { randomBytes } from "node:crypto";
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

/**
 * Scripts and styles from this origin only: the build has no inline script or style. The one exception is
 * the page's nonce (`nonce` below): libraries that make their styles at run time (CodeMirror's style
 * elements) may add style elements carrying it, and nothing else inline is allowed.
 */
const csp = (nonce?: string) => [
  "default-src 'none'",
  "script-src 'self'",
  nonce ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/**
 * A fresh nonce for each load of the page, in its CSP and in a `<meta property="csp-nonce">` (the shape
 * Vite's html.cspNonce uses), where the console's code reads it (the `nonce` property; browsers hide the
 * attribute from the DOM once loaded).
 */
function withNonce(text: string): { page: string; nonce: string } {
  const nonce = randomBytes(18).toString("base64");
  const meta = `<meta property="csp-nonce" nonce="${nonce}" />`;
  return { page: text.includes("</head>") ? text.replace("</head>", `  ${meta}\n  </head>`) : meta + text, nonce };
}

/** A file name the build writes into assets/: no separators, so a request cannot leave that folder. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,200}$/;

/**
 * `publicUrl` (SVC_PUBLIC_URL, the one origin the login and CSRF checks accept) is written into the page as
 * `<meta name="svc-public-url">`, so a console opened at another address says so on load, not at the
 * first refused change.
 */
export function consoleRoutes(app: HttpApp, dist: string = CONSOLE_DIST, publicUrl?: string): void {
  const meta = publicUrl ? `<meta name="svc-public-url" content="${escapeAttribute(publicUrl)}" />` : "";
  const sendPage = async (reply: FastifyReply) => {
    // Read on every load (half a kilobyte): a rebuild while svc runs names new asset files, and a cached
    // copy would point at the deleted ones. A missing build is said, with how to make it, not a bare 404.
    const file = await readFile(join(dist, "index.html"), "utf8").catch(() => undefined);
    const page = file === undefined ? undefined : withNonce(file.replace("<head>", `<head>${meta}`));
    return secure(reply, page?.nonce)
      .status(page ? 200 : 503)
      .header("cache-control", "no-cache")
      .type(page ? "text/html; charset=utf-8" : "text/plain; charset=utf-8")
      .send(page?.page ?? NOT_BUILT);
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

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function acceptsHtml(accept: string | undefined): boolean {
  return accept === undefined || accept.includes("text/html") || accept.includes("*/*");
}

function secure(reply: FastifyReply, nonce?: string): FastifyReply {
  return reply
    .header("content-security-policy", csp(nonce))
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "same-origin");
}

const NOT_BUILT = `The svc console is not built.

Build it with \`npm run build\` in the svc checkout (or start svc with \`npm start\`, which builds
whatever is missing or stale), then reload this page. The API works without it, under /api/v1.
`;
