import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.js";
import { AppError, invalidRequest, notFound } from "../../platform/errors.js";
import type { HttpApp } from "../../platform/http/app.js";
import { DOWNLOADS, downloadReader, type DownloadReader } from "./files.js";
import { installerScript } from "./installer.js";

/*
 * Public downloads, no authentication (docs/machines.md "Install svcd"): the svcd installer at
 * /install/svcd.sh and the package tarballs at /downloads/<file>. Each tarball carries its SHA-256 as its
 * ETag and in Repr-Digest (RFC 9530), and is revalidated on every use (its name does not change between
 * builds); the installer names the digest of the svcd it downloads and refuses any other bytes.
 */

/** A bare http(s) origin: a host name, IPv4 or bracketed IPv6 address, and an optional port. */
const ORIGIN = /^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

export function downloadRoutes(app: HttpApp, deps: { config: Config; read?: DownloadReader }): void {
  const read = deps.read ?? downloadReader();
  const notBuilt = (name: string) => new AppError("service_unavailable", `${name} is not built: run \`npm run build\` in svc's checkout (npm start does)`);

  app.get("/install/svcd.sh", { config: { auth: "public" } }, async (request, reply) => {
    const svcd = await read("svcd.tgz");
    if (!svcd) throw notBuilt("svcd");
    const script = installerScript(originFor(request, deps.config), svcd.sha256);
    return reply.header("cache-control", "no-cache").type("text/x-shellscript; charset=utf-8").send(script);
  });

  app.get<{ Params: { file: string } }>("/downloads/:file", { config: { auth: "public" } }, async (request, reply) => {
    const name = request.params.file;
    const found = await read(name);
    if (!found) {
      if (Object.hasOwn(DOWNLOADS, name)) throw notBuilt(name);
      throw notFound(`download ${name.slice(0, 100)}`);
    }
    const etag = `"sha256-${found.sha256}"`;
    const base64 = Buffer.from(found.sha256, "hex").toString("base64");
    describe(reply, etag, base64);
    if (request.headers["if-none-match"] === etag) return reply.status(304).send();
    return reply.type("application/gzip").send(found.bytes);
  });
}

function describe(reply: FastifyReply, etag: string, base64: string): void {
  reply.header("etag", etag).header("repr-digest", `sha-256=:${base64}:`).header("cache-control", "no-cache").header("x-content-type-options", "nosniff");
}

/** SVC_PUBLIC_URL when set, else the origin the request was made to (its Host, and the scheme a trusted proxy forwarded). */
function originFor(request: FastifyRequest, config: Config): string {
  if (config.publicUrlSet) return config.publicUrl;
  const origin = `${request.protocol}://${request.host}`;
  if (!ORIGIN.test(origin)) throw invalidRequest("the request's Host is not a host name or address; set SVC_PUBLIC_URL to svc's public origin");
  return origin;
}
