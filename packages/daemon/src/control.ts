import { spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readInstalled, PACKAGE_DIR, type Installed } from "./installed.js";
import { runningOwner } from "./lock.js";
import { run } from "./run.js";
import { serviceOf } from "./service.js";
import { isAlive } from "./supervisor.js";

/* `svcd start|stop|restart|status` of an installed home (installed.ts), through its service manager or, without one, in the foreground. */

/** How long `svcd stop` waits for a foreground svcd to end its runtime after SIGTERM. */
const STOP_WAIT_MS = 20_000;
const STOP_POLL_MS = 100;
/** `svcd status` of a stopped svcd, as LSB init scripts say "not running". */
export const EXIT_NOT_RUNNING = 3;

export async function start(home: string): Promise<number> {
  const installed = readInstalled(home);
  const service = serviceOf(installed);
  if (service) {
    service.start();
    console.log(`svcd: started (${installed.service}); \`${launcher(home)} status\` says how it is`);
    return 0;
  }
  const pid = runningOwner(home);
  if (pid !== undefined) {
    console.log(`svcd: already running (pid ${pid})`);
    return 0;
  }
  console.log(`svcd: running in the foreground (no service manager here); Ctrl-C stops it, \`${launcher(home)} start\` starts it again`);
  return run(["--home", home]);
}

export async function stop(home: string): Promise<number> {
  const installed = readInstalled(home);
  serviceOf(installed)?.stop();
  return (await stopOwner(home)) ? 0 : 1;
}

export async function restart(home: string): Promise<number> {
  const installed = readInstalled(home);
  const service = serviceOf(installed);
  if (service) {
    service.restart();
    return 0;
  }
  if (!(await stopOwner(home))) return 1;
  return start(home);
}

export function status(home: string): number {
  const installed = readInstalled(home);
  const pid = runningOwner(home);
  const service = serviceOf(installed);
  console.log(
    [
      `machine   ${installed.machine_id}`,
      `svc       ${installed.origin}`,
      `home      ${home}`,
      `service   ${installed.service}${service ? ` (output: ${service.logHint})` : ""}`,
      `state     ${pid === undefined ? "stopped" : `running (pid ${pid})`}`,
    ].join("\n"),
  );
  return pid === undefined ? EXIT_NOT_RUNNING : 0;
}

/** Ends the svcd holding the home (SIGTERM: it ends its runtime first); false when it outlived the wait. */
export async function stopOwner(home: string): Promise<boolean> {
  const pid = runningOwner(home);
  if (pid === undefined) return true;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return true;
  }
  for (let waited = 0; waited < STOP_WAIT_MS; waited += STOP_POLL_MS) {
    if (!isAlive(pid)) return true;
    await sleep(STOP_POLL_MS);
  }
  console.error(`svcd: pid ${pid} did not stop within ${STOP_WAIT_MS / 1000} s`);
  return false;
}

/** Runs the installed svcd in the foreground as a child (this process's code may not be the installed copy); its exit status. */
export function runInstalled(installed: Installed): Promise<number> {
  const child = spawn(installed.node, [join(installed.home, PACKAGE_DIR, "bin", "svcd.js"), "run"], { stdio: "inherit" });
  // Ctrl-C reaches the whole foreground group: the child stops on it; this process waits for it.
  const ignore = () => {};
  process.on("SIGINT", ignore);
  const forward = () => child.kill("SIGTERM");
  process.on("SIGTERM", forward);
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      process.off("SIGINT", ignore);
      process.off("SIGTERM", forward);
      resolve(signal ? 1 : (code ?? 1));
    });
    child.once("error", (err) => {
      console.error(`svcd: could not start ${installed.node}: ${err.message}`);
      resolve(1);
    });
  });
}

export const launcher = (home: string) => join(home, "svcd");
