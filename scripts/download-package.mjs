// Builds the package tarball svc serves for a workspace (`/downloads/<file>`, docs/machines.md and
// docs/cli.md): run by that workspace's `npm run build`, after its own TypeScript build. The tarball must
// work on a computer with nothing but Node.js (`^20.19 || >=22.12`): no checkout, and no @svc/* package on
// the npm registry. So svcd and the CLI are bundled whole with esbuild (their workspace packages and
// third-party code in one file per entry point: svcd needs no `npm install` at all), and the SDK ships its
// compiled files with openapi-fetch as an ordinary registry dependency (its types refer to it).
// `npm pack` writes the tarball with fixed timestamps, so an unchanged build has an unchanged digest.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const PACKAGES = {
  daemon: {
    file: "svcd.tgz",
    manifest: { name: "svcd", bin: { svcd: "bin/svcd.js" } },
    bundle: { "dist/main": "src/main.ts", "dist/transfer-main": "src/transfer-main.ts" },
    copy: ["bin"],
    // ws loads these native speed-ups when present and does without them otherwise.
    external: ["bufferutil", "utf-8-validate"],
  },
  cli: {
    file: "svc-cli.tgz",
    manifest: { name: "@svc/cli", bin: { svc: "bin/svc.js" } },
    bundle: { "dist/main": "src/main.ts" },
    copy: ["bin"],
    // The CLI checks every answer against the contract it was built with (src/answers.ts).
    files: { "openapi.json": "../../api/openapi.json" },
    // The server commands load svc itself when it is installed beside the CLI (src/server.ts).
    external: ["@svc/server"],
  },
  sdk: {
    file: "svc-sdk.tgz",
    manifest: { name: "@svc/sdk", exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } }, types: "dist/index.d.ts" },
    copy: ["dist"],
    dependencies: ["openapi-fetch"],
  },
};

const workspace = process.argv[2];
const spec = PACKAGES[workspace];
if (!spec) throw new Error(`usage: download-package.mjs ${Object.keys(PACKAGES).join("|")}`);
const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", workspace);
const source = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const out = join(dir, "dist", "download");
// Staged outside dist/: the SDK ships dist/ itself (without this folder).
const stage = mkdtempSync(join(tmpdir(), `svc-${workspace}-package-`));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

for (const path of spec.copy) cpSync(join(dir, path), join(stage, path), { recursive: true, filter: (from) => from !== out && !from.endsWith(".map") });
for (const [to, from] of Object.entries(spec.files ?? {})) cpSync(join(dir, from), join(stage, to));
if (spec.bundle) {
  await build({
    absWorkingDir: dir,
    entryPoints: Object.entries(spec.bundle).map(([outPath, inPath]) => ({ in: inPath, out: outPath })),
    outdir: stage,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20.19",
    external: spec.external,
    // Workspace packages from their sources, whichever of them was built first.
    conditions: ["@svc/source"],
    // Bundled CommonJS (ws, commander) calls require() for Node's own modules.
    banner: { js: 'import { createRequire as __svcCreateRequire } from "node:module"; const require = __svcCreateRequire(import.meta.url);' },
    legalComments: "inline",
    logLevel: "warning",
  });
}
const dependencies = Object.fromEntries((spec.dependencies ?? []).map((name) => [name, source.dependencies[name]]));
const manifest = {
  ...spec.manifest,
  version: source.version,
  description: source.description,
  license: "Apache-2.0",
  type: "module",
  engines: { node: "^20.19.0 || >=22.12.0" },
  ...(spec.dependencies ? { dependencies } : {}),
};
writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
execFileSync("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", out], { cwd: stage, stdio: ["ignore", "ignore", "inherit"] });
const packed = readdirSync(out).find((name) => name.endsWith(".tgz"));
renameSync(join(out, packed), join(out, spec.file));
rmSync(stage, { recursive: true, force: true });
