import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Home, Journal } from "./home.js";
import type { ProcessClaim, ProcessFinished, ProcessOffer, Report } from "./protocol.js";

/*
 * Runs accepted processes so that they outlive svcd: each command runs under a small wrapper shell in its
 * own process group, with its output going to files in its process directory and its exit status written
 * by the wrapper when it ends. A svcd killed while a command runs finds it again when it restarts: still
 * running (it waits for it), or finished (it reports the status the wrapper wrote). A command is started
 * only after its journal says `accepted`, and a journal that says `accepted` is never started again, so
 * no command runs twice.
 */

/** Bytes of each stream a report carries; the rest stays counted in `*_bytes` and marked `truncated`. */
export const REPORT_OUTPUT_BYTES = 128 * 1024;
/** How often processes svcd did not start itself (found again after a restart) are looked at. */
const ADOPTED_POLL_MS = 200;

// $0 names the wrapper in `ps`; $1 the shell, $2 the command, $3 the exit file, $4 the pid file. The wrapper
// writes its pid first (a svcd killed right after spawning still finds it) and its status last, whole
// (temporary name, then rename), so a reader never sees half of it. SIGTERM or SIGINT to the wrapper is
// passed to the command, and the wrapper waits for it to end, so a stopped command still gets a status.
const WRAPPER = [
  'echo $$ > "$4"',
  '"$1" -c "$2" & c=$!',
  "trap 'kill -TERM $c 2>/dev/null' TERM INT",
  "wait $c; code=$?",
  "while kill -0 $c 2>/dev/null; do wait $c; code=$?; done",
  'printf "%s" "$code" > "$3.tmp" && mv "$3.tmp" "$3"',
].join("; ");

const SHELLS: Record<string, string> = { sh: "sh", bash: "bash", zsh: "zsh", pwsh: "pwsh", powershell: "pwsh" };

export interface SupervisorEvents {
  /** A finished process's report is in the outbox and should be sent. */
  reported(report: Report): void;
}

export class Supervisor {
  private readonly watched = new Map<string, Journal>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly home: Home,
    private readonly instanceId: string,
    private readonly events: SupervisorEvents,
  ) {
    this.timer = setInterval(() => this.pollAdopted(), ADOPTED_POLL_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** What svcd holds, for registration. */
  claims(): ProcessClaim[] {
    return this.home.readJournals().map((journal) => ({
      process_id: journal.process_id,
      supervisor_instance_id: journal.supervisor_instance_id,
      phase: journal.phase,
      supervisor_live: journal.pid !== null && isAlive(journal.pid),
      execution_committed: journal.phase !== "prepared",
      action_admission_closed: true,
      resolved_action_seq: 0,
      actions: [],
    }));
  }

  journal(processId: string): Journal | undefined {
    return this.home.readJournals().find((j) => j.process_id === processId);
  }

  /** An offer svcd takes on: written down before the server is told, so a restart remembers it. */
  prepare(offer: ProcessOffer): void {
    this.home.writeJournal({ process_id: offer.process_id, supervisor_instance_id: this.instanceId, phase: "prepared", offer, pid: null, started_at: null });
  }

  /** The server granted the process: it is marked accepted, durably, and only then started. */
  start(journal: Journal): void {
    const accepted: Journal = { ...journal, phase: "accepted", started_at: new Date().toISOString() };
    this.home.writeJournal(accepted);
    const refusal = preparationError(journal.offer);
    if (refusal) {
      this.finish(accepted, { state: "failed", exit_code: null, reason: refusal });
      return;
    }
    const dir = this.home.processDir(journal.process_id);
    const out = openSync(join(dir, "stdout"), "a");
    const err = openSync(join(dir, "stderr"), "a");
    try {
      const args = [shellOf(journal.offer.shell_selector), journal.offer.command, join(dir, "exit"), join(dir, "pid")];
      const child = spawn("/bin/sh", ["-c", WRAPPER, "svcd-process", ...args], {
        cwd: journal.offer.cwd || this.home.root,
        env: commandEnv(journal.offer.env, this.home.root),
        stdio: ["ignore", out, err],
        // Its own process group: a svcd killed by a signal to its group does not take the command with it.
        detached: true,
      });
      child.on("error", (error) => this.finish({ ...accepted, pid: null }, { state: "failed", exit_code: null, reason: `could not start the shell: ${error.message}` }));
      child.on("exit", () => this.collect({ ...accepted, pid: child.pid ?? null }));
      child.unref();
      if (child.pid !== undefined) this.home.writeJournal({ ...accepted, pid: child.pid });
    } finally {
      closeSync(out);
      closeSync(err);
    }
  }

  /** Follows a process found again after a restart, until it ends. */
  adopt(journal: Journal): void {
    if (journal.phase === "accepted") this.watched.set(journal.process_id, journal);
  }

  /** svc no longer wants the process (its call was canceled): SIGTERM to the wrapper, which stops the command. */
  terminate(processId: string): void {
    const journal = this.journal(processId);
    if (!journal || journal.phase !== "accepted") return;
    this.home.writeJournal({ ...journal, terminate_requested: true });
    const pid = journal.pid ?? readStatus(join(this.home.processDir(processId), "pid"));
    if (pid === undefined || pid === null) return;
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already gone: its end is being collected.
    }
  }

  /** Forgets a process the server no longer wants anything of. */
  release(processId: string): void {
    this.watched.delete(processId);
    this.home.forgetProcess(processId);
  }

  private pollAdopted(): void {
    for (const journal of [...this.watched.values()]) {
      const dir = this.home.processDir(journal.process_id);
      const pid = journal.pid ?? readStatus(join(dir, "pid")) ?? null;
      if (existsSync(join(dir, "exit")) || pid === null || !isAlive(pid)) this.collect(journal);
    }
  }

  /** The process ended (or vanished): its report goes to the outbox, then the journal says terminal. */
  private collect(journal: Journal): void {
    this.watched.delete(journal.process_id);
    const status = readStatus(join(this.home.processDir(journal.process_id), "exit"));
    const stopped = this.journal(journal.process_id)?.terminate_requested === true;
    if (status === undefined) {
      this.finish(journal, { state: "unknown", exit_code: null, reason: "the process ended without reporting its exit status (its wrapper was killed)" });
    } else if (stopped) {
      this.finish(journal, { state: "killed", exit_code: status, reason: "svc asked to stop it: its call was canceled", exit_signal: "SIGTERM" });
    } else {
      this.finish(journal, { state: "exited", exit_code: status, reason: "" });
    }
  }

  private finish(journal: Journal, end: { state: ProcessFinished["state"]; exit_code: number | null; reason: string; exit_signal?: string }): void {
    const current = this.journal(journal.process_id);
    if (!current || current.phase === "terminal") return;
    const dir = this.home.processDir(journal.process_id);
    const stdout = readHead(join(dir, "stdout"));
    const stderr = readHead(join(dir, "stderr"));
    const report: Report = {
      report_id: randomUUID(),
      event: {
        type: "process_finished",
        process_id: journal.process_id,
        exit_signal: null,
        ...end,
        started_at: journal.started_at,
        ended_at: new Date().toISOString(),
        result: { stdout: stdout.text, stderr: stderr.text, stdout_bytes: stdout.size, stderr_bytes: stderr.size, truncated: stdout.truncated || stderr.truncated },
      },
    };
    // Outbox first: a crash between the two writes reports twice, which the server settles by the process's state.
    this.home.putReport(report);
    this.home.writeJournal({ ...current, phase: "terminal" });
    this.events.reported(report);
  }
}

/** svcd's environment (less its own credential) with the process's over it, and where svcd keeps its files. */
function commandEnv(env: Record<string, string>, home: string): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  delete inherited["SVC_DAEMON_TOKEN"];
  return { ...inherited, ...env, SVC_HOME: home };
}

/** What svcd cannot run, said before anything starts. */
function preparationError(offer: ProcessOffer): string | undefined {
  if (offer.preparation_error) return offer.preparation_error;
  if (offer.io_mode === "pty") return "io_mode pty is not supported by this svcd yet; use pipe";
  if (offer.shell_selector === "cmd") return "the cmd shell exists only on Windows";
  if (offer.cwd && !isDirectory(offer.cwd)) return `the working directory ${offer.cwd} does not exist on this machine`;
  return undefined;
}

function shellOf(selector: string): string {
  return SHELLS[selector] ?? (process.env["SHELL"] || "sh");
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the pid was reused by another user's process, so ours is gone too.
    return false;
  }
}

function readStatus(path: string): number | undefined {
  try {
    const code = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

function readHead(path: string): { text: string; size: number; truncated: boolean } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { text: "", size: 0, truncated: false };
  }
  try {
    const size = statSync(path).size;
    const buffer = Buffer.alloc(Math.min(size, REPORT_OUTPUT_BYTES));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    // Cut on a byte boundary; a character split there decodes to U+FFFD, which is dropped.
    const text = buffer.subarray(0, read).toString("utf8").replace(/\uFFFD+$/, "");
    return { text, size, truncated: size > REPORT_OUTPUT_BYTES };
  } finally {
    closeSync(fd);
  }
}
