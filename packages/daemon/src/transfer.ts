import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProcessOffer } from "@svc/protocol";

/*
 * upload_file and download_file as svcd runs them: a process like any command, so the journal, the outbox,
 * reconciliation, stop_process, cancel and read_process work unchanged. Instead of the offer's command, the
 * wrapper runs svcd's own transfer program (transfer-main.ts) under the same Node.js, which reads or writes
 * the machine file, talks to the tool call's daemon transfer routes with the daemon token, prints one JSON
 * line on success (exit 0) or the reason on stderr (exit 1). Being a process of its own, a transfer survives
 * a svcd restart like a command does. The token reaches it on a pipe at file descriptor 3 (TOKEN_FD), never
 * in its environment, which other processes of the same user could read in /proc/<pid>/environ.
 */

/** The descriptor a transfer reads svcd's token from: a pipe svcd writes the token to and closes. */
export const TOKEN_FD = 3;

export interface TransferAccess {
  /** svc's origin, as svcd was given it. */
  origin: string;
  token: string;
}

/** What the supervisor runs for a transfer offer: shell, command line, working directory and environment. */
export interface TransferLaunch {
  shell: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to TOKEN_FD of the transfer. */
  token: string;
}

const here = fileURLToPath(import.meta.url);
/** transfer-main next to this module: .js once built, .ts when svcd runs from its sources (tsx). */
const MAIN = join(dirname(here), `transfer-main${extname(here)}`);

/**
 * The transfer runs in svcd's own working directory, so that Node.js resolves svcd's runtime flags (a
 * loader under development) as svcd did; the machine paths it is given are resolved against the process's
 * working directory (the binding's, else svcd's home), passed as SVCD_TRANSFER_CWD.
 */
export function transferLaunch(offer: ProcessOffer & { transfer: NonNullable<ProcessOffer["transfer"]> }, access: TransferAccess, env: NodeJS.ProcessEnv, home: string): TransferLaunch {
  // A debugger flag would make the transfer listen on svcd's port.
  const flags = process.execArgv.filter((flag) => !flag.startsWith("--inspect"));
  const argv = [process.execPath, ...flags, MAIN].map(quote).join(" ");
  return {
    shell: "/bin/sh",
    command: `exec ${argv}`,
    cwd: process.cwd(),
    env: {
      ...env,
      SVCD_TRANSFER: JSON.stringify(offer.transfer),
      SVCD_TRANSFER_CWD: offer.cwd || home,
      SVCD_TRANSFER_URL: access.origin,
    },
    token: access.token,
  };
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
