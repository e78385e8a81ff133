// `npm start`: builds what is missing or older than its sources, then becomes `svc serve` in this same
// process. One process (the package script execs it, so no shell sits between) means SIGTERM or SIGINT
// to `npm start` reaches svc itself, which stops cleanly and releases its data directory.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { staleWorkspaces } from "./build-state.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"];

stopWhenOrphaned();
const stale = staleWorkspaces(root);
if (stale.length > 0) {
  console.log(`svc: building ${stale.join(", ")} (sources changed since the last build)`);
  const code = await build();
  if (code !== 0) process.exit(code);
}
const main = join(root, "packages/server/dist/main.js");
process.argv = [process.argv[0], main, "serve"];
await import(pathToFileURL(main).href);

/** `npm run build` in a child; a signal while it runs ends the build too, and then this process. */
function build() {
  const child = spawn("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  const forward = (signal) => {
    child.kill(signal);
    process.exitCode = 1;
  };
  for (const signal of SIGNALS) process.once(signal, forward);
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      for (const name of SIGNALS) process.off(name, forward);
      resolve(signal ? 1 : (code ?? 1));
    });
    child.once("error", (err) => {
      console.error(`svc: could not run the build: ${err.message}`);
      resolve(1);
    });
  });
}

/**
 * When the process that started this one dies without passing on a signal (npm killed with SIGKILL, a
 * closed terminal), this process is handed to another parent: svc then stops as if sent SIGTERM rather
 * than run on unseen, holding its data directory.
 */
function stopWhenOrphaned() {
  const parent = process.ppid;
  if (parent <= 1) return;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, "SIGTERM");
  }, 1000);
  watch.unref();
}
