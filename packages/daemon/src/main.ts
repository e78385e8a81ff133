#!/usr/bin/env node
import { restart, start, status, stop } from "./control.js";
import { install, INSTALL_USAGE, uninstall } from "./install.js";
import { installedHome } from "./installed.js";
import { EXIT_USAGE, run, RUN_USAGE } from "./run.js";

const USAGE = `usage: ${RUN_USAGE}
       svcd start|stop|restart|status|uninstall [--home <dir>]   (an installed svcd)
       ${INSTALL_USAGE}

run: connects this computer to svc as the machine the token belongs to and runs its agents' commands, in
the foreground, until stopped (SIGTERM or SIGINT). The token comes from --token-file (- reads standard
input), an installed home's token file, or SVC_DAEMON_TOKEN; never from the arguments. --socket reaches svc
through a Unix socket instead of the network (svc's sandboxed local machines use it).

install: what svc's installer (curl -fsSL <svc>/install/svcd.sh | sh) runs once it has unpacked svcd.
start, stop, restart, status, uninstall: the svcd installed in this home (docs/machines.md).

exit status: 0 done, 1 failed (its home unusable: svc is told), 2 bad usage, 3 svc refused the token or ended
this daemon for good (status: not running), 4 another svcd runs on the home`;

const CONTROLS: Record<string, (home: string) => number | Promise<number>> = { start, stop, restart, status, uninstall };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "run") return run(rest);
  if (command === "install") return install(rest);
  const control = command === undefined ? undefined : CONTROLS[command];
  if (!control) {
    console.error(USAGE);
    return command === "--help" || command === "help" ? 0 : EXIT_USAGE;
  }
  const home = installedHome(homeOption(rest));
  if (!home) {
    console.error(`svcd: no installed svcd ${homeOption(rest) ? `in ${homeOption(rest)}` : "here"}: run ${command} through <home>/svcd, or give --home <dir>`);
    return EXIT_USAGE;
  }
  return control(home);
}

function homeOption(args: string[]): string | undefined {
  const at = args.indexOf("--home");
  return at === -1 ? undefined : args[at + 1];
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error("svcd: fatal:", err);
    process.exit(1);
  },
);
