import { execFileSync } from "node:child_process";

/*
 * The wrapper shell every command runs under, and how svcd signals it. The wrapper is started in its own
 * session and process group (its pid is the group's id), so it outlives svcd and one signal reaches
 * everything the command started.
 *
 * $0 names it in `ps`; $1 the shell, $2 the command, $3 the exit file, $4 the pid file, $5 the stdin FIFO,
 * $6 the io mode: `pipe`, `script` (a pty through util-linux script) or `python` (a pty through Python's
 * pty module). It writes its pid first (a svcd killed right after spawning still finds it) and its status
 * last, whole (temporary name, then rename), so a reader never sees half of it.
 *
 * Standard input is a FIFO in the process directory. A holder process keeps it open for writing, so the
 * command sees no end of input while svcd restarts or between two writes; killing the holder is
 * close_stdin. The holder ignores INT and TERM (an interrupt is not a close); the wrapper catches them
 * with an empty trap, which leaves the command their default action (an ignored signal would be inherited,
 * a caught one is not), and runs the command in the foreground so it still writes the status after.
 */
export const WRAPPER = [
  'echo $$ > "$4"',
  '[ -p "$5" ] || mkfifo -m 600 "$5"',
  '( trap "" INT TERM; exec 3<>"$5"; exec sleep 2147483647 ) & h=$!',
  'echo $h > "$4.holder"',
  "trap : INT TERM",
  'case "$6" in',
  '  script) SHELL="$1" script -qefc "$2" /dev/null < "$5"; code=$? ;;',
  "  python) python3 -c 'import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn([sys.argv[1], \"-c\", sys.argv[2]])) & 255)' \"$1\" \"$2\" < \"$5\"; code=$? ;;",
  '  *) "$1" -c "$2" < "$5"; code=$? ;;',
  "esac",
  "kill -KILL $h 2>/dev/null",
  'printf "%s" "$code" > "$3.tmp" && mv "$3.tmp" "$3"',
].join("\n");

export type PtyHelper = "script" | "python";

let helper: PtyHelper | null | undefined;

/**
 * How this machine gives a command a terminal without a native addon: util-linux `script` (Linux), else
 * Python 3's `pty` module (3.9 or newer), else nothing, and pty commands fail with a clear reason. Looked
 * up once per svcd.
 */
export function ptyHelper(): PtyHelper | null {
  if (helper === undefined) helper = probe();
  return helper;
}

function probe(): PtyHelper | null {
  try {
    if (execFileSync("script", ["--version"], { encoding: "utf8", timeout: 5_000, stdio: ["ignore", "pipe", "ignore"] }).includes("util-linux")) return "script";
  } catch {
    // not there, or not util-linux's (BSD script takes other arguments)
  }
  try {
    execFileSync("python3", ["-c", "import os, pty; os.waitstatus_to_exitcode"], { timeout: 5_000, stdio: "ignore" });
    return "python";
  } catch {
    return null;
  }
}

/** Sends `signal` to the wrapper's process group; false when nothing was there to receive it. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

const SIGNALS: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM" };

/** A shell status above 128 is a death by signal 128+n. */
export function signalOfStatus(status: number): string | null {
  if (status <= 128 || status > 128 + 64) return null;
  return SIGNALS[status - 128] ?? `SIG${status - 128}`;
}
