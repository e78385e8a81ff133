import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { PACKAGE_DIR, type Installed, type ServiceManager } from "./installed.js";

/*
 * How an installed svcd is kept running, as the reference's installer does it: a systemd user unit on
 * Linux, a launchd agent on macOS, else nothing (svcd runs in the foreground of the terminal that starts
 * it). SVCD_SERVICE_MANAGER (systemd, launchd or foreground) overrides the choice, for containers and
 * hosts whose user manager is not wanted. Either unit runs `node <home>/daemon/bin/svcd.js run`, which
 * reads the token from the home's 0600 file: the unit holds no secret.
 */

const PROBE_TIMEOUT_MS = 5_000;
const CONTROL_TIMEOUT_MS = 30_000;

export function chooseServiceManager(): ServiceManager {
  const forced = process.env["SVCD_SERVICE_MANAGER"];
  if (forced === "systemd" || forced === "launchd" || forced === "foreground") return forced;
  if (forced) throw new Error(`SVCD_SERVICE_MANAGER must be systemd, launchd or foreground, not ${forced}`);
  if (process.platform === "darwin" && succeeds("launchctl", ["version"])) return "launchd";
  if (process.platform === "linux" && succeeds("systemctl", ["--user", "show-environment"])) return "systemd";
  return "foreground";
}

/** What `svcd start|stop|restart|uninstall` ask of the manager an install chose. */
export interface Service {
  /** Writes the unit and has the manager start it now and at login. */
  install(): void;
  start(): void;
  stop(): void;
  restart(): void;
  /** Stops it and removes the unit. */
  remove(): void;
  /** Where its output goes, for `svcd status`. */
  logHint: string;
}

export function serviceOf(installed: Installed): Service | undefined {
  if (installed.service === "systemd") return systemd(installed);
  if (installed.service === "launchd") return launchd(installed);
  return undefined;
}

function execStart(installed: Installed): string[] {
  return [installed.node, join(installed.home, PACKAGE_DIR, "bin", "svcd.js"), "run"];
}

function systemd(installed: Installed): Service {
  const name = `svcd-${installed.machine_id}.service`;
  const path = join(process.env["XDG_CONFIG_HOME"] || join(homedir(), ".config"), "systemd", "user", name);
  const ctl = (...args: string[]) => control("systemctl", ["--user", ...args]);
  return {
    install() {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, systemdUnit(installed), { mode: 0o644 });
      ctl("daemon-reload");
      ctl("enable", "--now", name);
    },
    start: () => ctl("start", name),
    stop: () => ctl("stop", name),
    restart: () => ctl("restart", name),
    remove() {
      spawnSync("systemctl", ["--user", "disable", "--now", name], { stdio: "inherit", timeout: CONTROL_TIMEOUT_MS });
      rmSync(path, { force: true });
      spawnSync("systemctl", ["--user", "daemon-reload"], { stdio: "inherit", timeout: CONTROL_TIMEOUT_MS });
    },
    logHint: `journalctl --user -u ${name}`,
  };
}

/**
 * KillMode=process: stopping svcd leaves the commands it started running (they live in process groups of
 * their own and a restarted svcd adopts them, as after any restart). Exit statuses 2 (bad usage), 3 (svc
 * refused the token) and 4 (another svcd holds the home) would only repeat, so they are not restarted.
 */
export function systemdUnit(installed: Installed): string {
  return [
    "[Unit]",
    `Description=svcd, the machine daemon of svc (machine ${installed.machine_id})`,
    "Wants=network-online.target",
    "After=network-online.target",
    "",
    "[Service]",
    `ExecStart=${execStart(installed).map(systemdQuote).join(" ")}`,
    "Restart=on-failure",
    "RestartSec=5",
    "RestartPreventExitStatus=2 3 4",
    "KillMode=process",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

function launchd(installed: Installed): Service {
  const label = `dev.svc.svcd.${installed.machine_id}`;
  const path = join(homedir(), "Library", "LaunchAgents", `${label}.plist`);
  const domain = `gui/${userInfo().uid}`;
  const bootstrap = () => control("launchctl", ["bootstrap", domain, path]);
  const bootout = () => spawnSync("launchctl", ["bootout", `${domain}/${label}`], { stdio: "ignore", timeout: CONTROL_TIMEOUT_MS });
  return {
    install() {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, launchdPlist(installed, label), { mode: 0o644 });
      bootout();
      bootstrap();
    },
    start: bootstrap,
    stop: () => void bootout(),
    restart: () => control("launchctl", ["kickstart", "-k", `${domain}/${label}`]),
    remove() {
      bootout();
      rmSync(path, { force: true });
    },
    logHint: join(installed.home, "svcd.log"),
  };
}

/** Kept alive unless it exits 0; AbandonProcessGroup leaves the commands running when svcd stops (as KillMode=process). */
export function launchdPlist(installed: Installed, label: string): string {
  const strings = (values: string[]) => values.map((v) => `    <string>${xml(v)}</string>`).join("\n");
  const log = xml(join(installed.home, "svcd.log"));
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${xml(label)}</string>
  <key>ProgramArguments</key>
  <array>
${strings(execStart(installed))}
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>10</integer>
  <key>AbandonProcessGroup</key>
  <true/>
  <key>StandardOutPath</key>
  <string>${log}</string>
  <key>StandardErrorPath</key>
  <string>${log}</string>
</dict>
</plist>
`;
}

/** One ExecStart word: quoted, with systemd's specifiers (%) and variables ($) taken literally. */
function systemdQuote(word: string): string {
  if (/[\n\r]/.test(word)) throw new Error(`a path with a line break cannot go into a systemd unit: ${JSON.stringify(word)}`);
  return `"${word.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%").replaceAll("$", "$$$$")}"`;
}

function xml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

function succeeds(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: "ignore", timeout: PROBE_TIMEOUT_MS }).status === 0;
}

function control(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: "inherit", timeout: CONTROL_TIMEOUT_MS });
}
