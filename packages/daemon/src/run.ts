import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DaemonApi } from "./api.js";
import { reportFailure } from "./failures.js";
import { Home } from "./home.js";
import { installedHome, readInstalled, tokenPath } from "./installed.js";
import { HomeLocked, lockHome, type HomeLock } from "./lock.js";
import { startRelay } from "./relay.js";
import { DAEMON_VERSION, DaemonRuntime } from "./runtime.js";
import { readToken, TokenError } from "./token.js";

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_REFUSED = 3;
/** Another svcd runs on the home. */
export const EXIT_LOCKED = 4;

export const RUN_USAGE = `svcd run --url <svc origin> --home <dir> [--token-file <path>|-]
       svcd run --socket <path> --home <dir> [--token-file <path>|-]
       svcd run                        (an installed svcd: its home, origin and token)`;

export class UsageError extends Error {}

interface Target {
  origin: string;
  home: string;
  token: string;
}

/** What `svcd run` connects as: an installed home's settings, or the options given. */
async function target(argv: string[]): Promise<Target> {
  let values: { url?: string; socket?: string; home?: string; "token-file"?: string };
  try {
    const options = { url: { type: "string" }, socket: { type: "string" }, home: { type: "string" }, "token-file": { type: "string" } } as const;
    ({ values } = parseArgs({ args: argv, options }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const installed = !values.url && !values.socket ? installedHome(values.home) : undefined;
  if (installed) {
    const settings = readInstalled(installed);
    return { origin: settings.origin, home: installed, token: readToken(values["token-file"] ?? tokenPath(installed)) };
  }
  if (!values.url === !values.socket || !values.home) throw new UsageError("--home and one of --url and --socket are required");
  const token = readToken(values["token-file"]);
  const origin = values.socket ? (await startRelay(values.socket)).origin : values.url!;
  try {
    new URL(origin);
  } catch {
    throw new UsageError(`--url is not a URL: ${origin}`);
  }
  return { origin, home: resolve(values.home), token };
}

/** Runs svcd in the foreground until SIGTERM or SIGINT; its exit status. */
export async function run(argv: string[]): Promise<number> {
  let connect: Target;
  try {
    connect = await target(argv);
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TokenError)) throw err;
    console.error(`svcd: ${err.message}\n\nusage: ${RUN_USAGE}`);
    return EXIT_USAGE;
  }
  const log = { info: (m: string) => console.log(`svcd: ${m}`), warn: (m: string) => console.error(`svcd: ${m}`) };
  const api = new DaemonApi(connect.origin, connect.token);
  let home: Home;
  let lock: HomeLock;
  try {
    home = new Home(connect.home);
    lock = lockHome(connect.home);
  } catch (err) {
    if (err instanceof HomeLocked) {
      log.warn(err.message);
      return EXIT_LOCKED;
    }
    // Not transient: svcd cannot keep its promises without its home. svc records why (POST /daemon/failures).
    const output = `svcd could not use its home ${connect.home}: ${(err as Error).message}`;
    log.warn(output);
    await reportFailure(api, { stage: "daemon_start", output, exitStatus: EXIT_FAILED, version: DAEMON_VERSION });
    return EXIT_FAILED;
  }
  try {
    const runtime = new DaemonRuntime(api, home, log);
    const stop = () => runtime.stop();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    log.info(`svcd ${DAEMON_VERSION} starting; home ${connect.home}`);
    const outcome = await runtime.run();
    if (outcome.kind === "refused") {
      log.warn(`stopping: ${outcome.reason}`);
      return EXIT_REFUSED;
    }
    log.info("stopped");
    return 0;
  } finally {
    lock.release();
  }
}
