#!/usr/bin/env node
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DaemonApi } from "./api.js";
import { Home } from "./home.js";
import { reportFailure } from "./failures.js";
import { startRelay } from "./relay.js";
import { DAEMON_VERSION, DaemonRuntime } from "./runtime.js";

const USAGE = `usage: svcd run --url <svc origin> --token <svc_daemon_v1_…> --home <dir>
       svcd run --socket <path> --token <svc_daemon_v1_…> --home <dir>

Connects this computer to svc as the machine the token belongs to and runs its agents' commands, in the
foreground, until stopped (SIGTERM or SIGINT). The token may also come from SVC_DAEMON_TOKEN. --socket
reaches svc through a Unix socket instead of the network (svc's sandboxed local machines use it).

exit status: 0 stopped, 1 failed (its home unusable: svc is told), 2 bad usage, 3 svc refused the token or ended
this daemon for good`;

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_REFUSED = 3;

async function main(argv: string[]): Promise<number> {
  if (argv[0] !== "run") {
    console.error(USAGE);
    return argv[0] === "--help" || argv[0] === "help" ? 0 : EXIT_USAGE;
  }
  let values: { url?: string; socket?: string; token?: string; home?: string };
  try {
    const options = { url: { type: "string" }, socket: { type: "string" }, token: { type: "string" }, home: { type: "string" } } as const;
    ({ values } = parseArgs({ args: argv.slice(1), options }));
  } catch (err) {
    console.error(`svcd: ${(err as Error).message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const token = values.token ?? process.env["SVC_DAEMON_TOKEN"];
  if (!values.url === !values.socket || !token || !values.home) {
    console.error(`svcd: --token, --home and one of --url and --socket are required\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (!token.startsWith("svc_daemon_v1_")) {
    console.error("svcd: the token must be a machine daemon token (svc_daemon_v1_…)");
    return EXIT_USAGE;
  }
  const origin = values.socket ? (await startRelay(values.socket)).origin : values.url!;
  try {
    new URL(origin);
  } catch {
    console.error(`svcd: --url is not a URL: ${origin}`);
    return EXIT_USAGE;
  }

  const log = { info: (m: string) => console.log(`svcd: ${m}`), warn: (m: string) => console.error(`svcd: ${m}`) };
  const api = new DaemonApi(origin, token);
  let home: Home;
  try {
    home = new Home(resolve(values.home));
  } catch (err) {
    // Not transient: svcd cannot keep its promises without its home. svc records why (POST /daemon/failures).
    const output = `svcd could not use its home ${resolve(values.home)}: ${(err as Error).message}`;
    log.warn(output);
    await reportFailure(api, { stage: "daemon_start", output, exitStatus: EXIT_FAILED, version: DAEMON_VERSION });
    return EXIT_FAILED;
  }
  const runtime = new DaemonRuntime(api, home, log);
  const stop = () => runtime.stop();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  log.info(`svcd ${DAEMON_VERSION} starting; home ${resolve(values.home)}`);
  const outcome = await runtime.run();
  if (outcome.kind === "refused") {
    log.warn(`stopping: ${outcome.reason}`);
    return EXIT_REFUSED;
  }
  log.info("stopped");
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error("svcd: fatal:", err);
    process.exit(1);
  },
);
