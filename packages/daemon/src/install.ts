import { chmodSync, cpSync, existsSync, mkdirSync, renameSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DaemonApi, TokenRefused } from "./api.js";
import { launcher, runInstalled, stopOwner } from "./control.js";
import { writeAtomically } from "./home.js";
import { CONFIG_FILE, PACKAGE_DIR, readInstalled, tokenPath, type Installed } from "./installed.js";
import { EXIT_FAILED, EXIT_REFUSED, EXIT_USAGE, UsageError } from "./run.js";
import { chooseServiceManager, serviceOf } from "./service.js";
import { readToken, TokenError } from "./token.js";

/*
 * `svcd install`, run by the installer svc serves (GET /install/svcd.sh, docs/machines.md "Install svcd")
 * once it has downloaded, checked and unpacked svcd: asks svc which machine the token belongs to, makes that
 * machine's home (installed.ts), moves the package into it, writes the token (0600) and the settings, and
 * registers the service, or runs svcd in the foreground where there is no service manager.
 */

export const INSTALL_USAGE = "svcd install --url <svc origin> --package <unpacked package dir> [--token-file <path>|-]";

export async function install(argv: string[]): Promise<number> {
  let values: { url?: string; package?: string; "token-file"?: string };
  let token: string;
  try {
    const options = { url: { type: "string" }, package: { type: "string" }, "token-file": { type: "string" } } as const;
    ({ values } = parseArgs({ args: argv, options }));
    if (!values.url || !values.package) throw new UsageError("--url and --package are required");
    token = readToken(values["token-file"]);
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TokenError) && !(err instanceof TypeError)) throw err;
    console.error(`svcd: ${(err as Error).message}\n\nusage: ${INSTALL_USAGE}`);
    return EXIT_USAGE;
  }
  const origin = values.url;
  let machineId: string;
  try {
    ({ machine_id: machineId } = await new DaemonApi(origin, token).bootstrap());
  } catch (err) {
    const refused = err instanceof TokenRefused;
    console.error(refused ? `svcd: ${origin} refused the token (revoked, or its machine deleted): connect the machine again for a new one` : `svcd: ${(err as Error).message}`);
    return refused ? EXIT_REFUSED : EXIT_FAILED;
  }

  const home = resolve(process.env["SVCD_HOME"] || join(homedir(), ".svcd", machineId));
  await replacePrevious(home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  placePackage(resolve(values.package), join(home, PACKAGE_DIR));
  writeAtomically(tokenPath(home), `${token}\n`);
  const installed: Installed = { home, origin, machine_id: machineId, node: process.execPath, service: chooseServiceManager() };
  writeSettings(installed);
  writeLauncher(installed);

  const service = serviceOf(installed);
  if (service) {
    try {
      service.install();
      console.log(`svcd: installed for machine ${machineId} in ${home}, running as a ${installed.service} user service`);
      console.log(`svcd: manage it with ${launcher(home)} start|stop|restart|status|uninstall`);
      return 0;
    } catch (err) {
      console.error(`svcd: could not register a ${installed.service} user service (${(err as Error).message}); running in the foreground instead`);
      writeSettings({ ...installed, service: "foreground" });
    }
  }
  console.log(`svcd: installed for machine ${machineId} in ${home}`);
  console.log(`svcd: no service manager here, so svcd runs in the foreground: Ctrl-C stops it, ${launcher(home)} start starts it again`);
  console.log(`svcd: manage it with ${launcher(home)} start|stop|restart|status|uninstall`);
  return runInstalled(readInstalled(home));
}

/** `svcd uninstall`: stops svcd, removes its service and its home (the machine stays registered in svc). */
export async function uninstall(home: string): Promise<number> {
  const installed = readInstalled(home);
  serviceOf(installed)?.remove();
  if (!(await stopOwner(home))) return EXIT_FAILED;
  rmSync(home, { recursive: true, force: true });
  console.log(`svcd: removed ${home}; machine ${installed.machine_id} stays registered in svc (delete it there, or install again with a new token)`);
  return 0;
}

/** An earlier install of the same machine (a reinstall or an update): stopped, its service removed; its journals and outbox kept. */
async function replacePrevious(home: string): Promise<void> {
  if (existsSync(join(home, CONFIG_FILE))) serviceOf(readInstalled(home))?.remove();
  await stopOwner(home);
  rmSync(join(home, PACKAGE_DIR), { recursive: true, force: true });
}

/** Moves the unpacked package into the home, and removes the installer's directory it came in once that is empty. */
function placePackage(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    cpSync(from, to, { recursive: true });
    rmSync(from, { recursive: true, force: true });
  }
  try {
    rmdirSync(dirname(from));
  } catch {
    // Not empty, or not the installer's: left alone.
  }
}

function writeSettings(installed: Installed): void {
  const { home, ...settings } = installed;
  writeAtomically(join(home, CONFIG_FILE), `${JSON.stringify(settings, null, 2)}\n`);
}

/** `<home>/svcd`: the installed svcd under the Node.js that installed it (a service's PATH may not have it). */
function writeLauncher(installed: Installed): void {
  const path = launcher(installed.home);
  writeFileSync(path, `#!/bin/sh\nexec ${shQuote(installed.node)} ${shQuote(join(installed.home, PACKAGE_DIR, "bin", "svcd.js"))} "$@"\n`, { mode: 0o755 });
  chmodSync(path, 0o755);
}

const shQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
