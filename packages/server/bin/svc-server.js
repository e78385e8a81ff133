#!/usr/bin/env node
// Committed so that npm links the `svc` command at install time, before `npm run build` has made dist/.
import { existsSync } from "node:fs";

const main = new URL("../dist/main.js", import.meta.url);
if (!existsSync(main)) {
  console.error("svc-server is not built yet: run `npm run build` in the repository first");
  process.exit(2);
}
await import(main.href);
