import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { builtSvcdTarball } from "../support/daemon.js";
import { TEST_ORIGIN, useTestServer } from "../support/server.js";

/*
 * The public downloads (docs/machines.md "Install svcd"): the installer script names the origin to download
 * from (SVC_PUBLIC_URL, else the request's own) and the digest of the svcd it downloads; the tarballs carry
 * their digest. No credentials needed, and nothing a request sends reaches the script unchecked.
 */

let tarball: Buffer;
beforeAll(() => {
  tarball = readFileSync(builtSvcdTarball());
}, 240_000);

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest();

describe("with SVC_PUBLIC_URL", () => {
  const server = useTestServer();

  it("GET /install/svcd.sh: a POSIX sh script for SVC_PUBLIC_URL with svcd's digest, without credentials", async () => {
    const reply = await fetch(`${server.url}/install/svcd.sh`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/x-shellscript; charset=utf-8");
    const script = await reply.text();
    expect(script.startsWith("#!/bin/sh\n")).toBe(true);
    expect(script).toContain(`svc_origin='${TEST_ORIGIN}'\n`);
    expect(script).toContain(`svcd_sha256='${sha256(tarball).toString("hex")}'\n`);
    // The token is never an argument of anything the script runs.
    expect(script).not.toMatch(/--token[ =]/);
  });

  it("GET /downloads/svcd.tgz: the tarball with its SHA-256 as ETag and Repr-Digest, 304 when unchanged; unknown files 404", async () => {
    const reply = await fetch(`${server.url}/downloads/svcd.tgz`);
    expect(reply.status).toBe(200);
    expect(Buffer.from(await reply.arrayBuffer()).equals(tarball)).toBe(true);
    const etag = `"sha256-${sha256(tarball).toString("hex")}"`;
    expect(reply.headers.get("etag")).toBe(etag);
    expect(reply.headers.get("repr-digest")).toBe(`sha-256=:${sha256(tarball).toString("base64")}:`);
    const again = await fetch(`${server.url}/downloads/svcd.tgz`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    for (const name of ["nope.tgz", "..%2Fpackage.json", "svcd.tgz.sha256", "constructor", "__proto__", "toString"]) {
      const missing = await server.api.get(`/downloads/${name}`);
      expect(missing.status, name).toBe(404);
      expect(missing.body.code).toBe("not_found");
    }
  });
});

describe("without SVC_PUBLIC_URL", () => {
  const server = useTestServer({ SVC_PUBLIC_URL: "" });

  it("the installer names the origin the request was made to, and refuses a Host that is not a host", async () => {
    const script = await server.app.http.inject({ method: "GET", url: "/install/svcd.sh", headers: { host: "svc.example.org:8443" } });
    expect(script.statusCode).toBe(200);
    expect(script.body).toContain("svc_origin='http://svc.example.org:8443'\n");
    for (const host of ["evil';rm -rf ~;'", "a b", "x$(id)"]) {
      const refused = await server.app.http.inject({ method: "GET", url: "/install/svcd.sh", headers: { host } });
      expect(refused.statusCode, host).toBe(400);
      expect(refused.json()).toMatchObject({ code: "invalid_request" });
    }
  });
});
