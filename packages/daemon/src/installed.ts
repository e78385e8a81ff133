import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/*
 * An installed svcd (docs/machines.md, "Install svcd"): one home per machine, ~/.svcd/<machine id>/ unless
 * SVCD_HOME names another, holding
 *
 *   svcd.json       the origin of svc, the machine, the Node.js that runs svcd and the service manager
 *   token           the machine's daemon token, mode 0600: never in argv, a unit file or an environment
 *   svcd            a launcher: `<home>/svcd start|stop|restart|status|uninstall`
 *   daemon/         the unpacked package (svcd's code, bundled: no npm install)
 *   svcd.log        the service's output when launchd runs it (systemd keeps it in the journal)
 *   svcd.lock, processes/, outbox/   what `svcd run` keeps in any home (lock.ts, home.ts)
 */

export type ServiceManager = "systemd" | "launchd" | "foreground";

export interface Installed {
  home: string;
  origin: string;
  machine_id: string;
  node: string;
  service: ServiceManager;
}

export const CONFIG_FILE = "svcd.json";
export const TOKEN_FILE = "token";
export const PACKAGE_DIR = "daemon";

export const tokenPath = (home: string) => join(home, TOKEN_FILE);

/** The installed home this svcd runs from: `home` when given, else the one its own files were unpacked into. */
export function installedHome(home: string | undefined): string | undefined {
  if (home !== undefined) return existsSync(join(home, CONFIG_FILE)) ? resolve(home) : undefined;
  // This file is <home>/daemon/dist/<file>.js once installed (a bundle keeps one directory level).
  const candidate = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  return existsSync(join(candidate, CONFIG_FILE)) ? candidate : undefined;
}

export function readInstalled(home: string): Installed {
  const config = JSON.parse(readFileSync(join(home, CONFIG_FILE), "utf8")) as Omit<Installed, "home">;
  return { ...config, home };
}
