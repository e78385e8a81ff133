import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import type { ProcessActionClaim, ProcessClaim, ProcessFinishedEvent, ProcessOffer, Report } from "@svc/protocol";
import { reportId, type Home, type Journal } from "./home.js";
import { readSlice } from "./output.js";
import { withoutCredentials } from "./token.js";
import { TOKEN_FD, transferLaunch, type TransferAccess } from "./transfer.js";
import { WRAPPER, ptyHelper, signalGroup, signalOfStatus } from "./wrapper.js";

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
/** A finished process's output stays readable (read_process) this long after svc recorded its end… */
export const FINISHED_RETENTION_MS = 60 * 60 * 1000;
/** …and for at most this many finished processes, the most recent. */
const FINISHED_KEPT = 64;
const SWEEP_MS = 60_000;
/** A terminate that SIGTERM did not end within this long is followed by SIGKILL. */
const KILL_AFTER_MS = 5_000;

const SHELLS: Record<string, string> = { sh: "sh", bash: "bash", zsh: "zsh", pwsh: "pwsh", powershell: "pwsh" };

export interface SupervisorEvents {
  /** A report is in the outbox and should be sent. */
  reported(report: Report): void;
}

/** How a process stands by what svcd can see on this machine. */
export interface Standing {
  state: ProcessFinishedEvent["state"] | "running";
  exit_code: number | null;
}

export class Supervisor {
  private readonly watched = new Map<string, Journal>();
  /** Released processes svc stopped, by wrapper pid: their directory goes once the wrapper is gone (it still writes there). */
  private readonly releasing = new Map<string, number>();
  private readonly initialWaits = new Map<string, NodeJS.Timeout>();
  private readonly timer: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly home: Home,
    private readonly instanceId: string,
    private readonly events: SupervisorEvents,
    /** How upload_file and download_file reach svc (transfer.ts). */
    private readonly transferAccess?: TransferAccess,
  ) {
    this.timer = setInterval(() => this.pollAdopted(), ADOPTED_POLL_MS);
    this.sweeper = setInterval(() => this.sweepFinished(), SWEEP_MS);
    this.sweepFinished();
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    for (const wait of this.initialWaits.values()) clearTimeout(wait);
  }

  /** What svcd holds, for registration. Reads are not claimed: a read has no effect, so svc may simply offer it again. */
  claims(): ProcessClaim[] {
    return this.home.readJournals().map((journal) => ({
      process_id: journal.process_id,
      supervisor_instance_id: journal.supervisor_instance_id,
      phase: journal.phase,
      supervisor_live: journal.pid !== null && isAlive(journal.pid),
      execution_committed: journal.phase !== "prepared",
      action_admission_closed: false,
      resolved_action_seq: journal.resolved_action_seq ?? 0,
      actions: (journal.actions ?? []).flatMap((a): ProcessActionClaim[] =>
        a.action_kind === "read" ? [] : [{ process_action_id: a.process_action_id, seq: a.seq, action_kind: a.action_kind, position: a.position }],
      ),
    }));
  }

  journal(processId: string): Journal | undefined {
    return this.home.readJournal(processId);
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
      const mode = journal.offer.io_mode === "pty" ? ptyHelper()! : "pipe";
      const env = commandEnv(journal.offer.env, this.home.root);
      // A file transfer runs svcd's transfer program in place of a command (transfer.ts).
      const transfer = journal.offer.transfer && this.transferAccess ? transferLaunch({ ...journal.offer, transfer: journal.offer.transfer }, this.transferAccess, env, this.home.root) : undefined;
      const args = [transfer?.shell ?? shellOf(journal.offer.shell_selector), transfer?.command ?? journal.offer.command, join(dir, "exit"), join(dir, "pid"), join(dir, "stdin"), mode];
      // In a pty the terminal merges both streams into stdout.
      const child = spawn("/bin/sh", ["-c", WRAPPER, "svcd-process", ...args], {
        cwd: transfer?.cwd ?? (journal.offer.cwd || this.home.root),
        env: transfer?.env ?? env,
        // A transfer reads svcd's token from a pipe at descriptor 3 (transfer.ts); a command gets no such pipe.
        stdio: transfer ? ["ignore", out, err, "pipe"] : ["ignore", out, err],
        // Its own session and process group: a svcd killed by a signal to its group does not take the command with it.
        detached: true,
      });
      child.on("error", (error) => this.finish({ ...accepted, pid: null }, { state: "failed", exit_code: null, reason: `could not start the shell: ${error.message}` }));
      child.on("exit", () => this.collect({ ...accepted, pid: child.pid ?? null }));
      if (transfer) {
        const pipe = child.stdio[TOKEN_FD] as Writable;
        // A transfer that died before reading (EPIPE) reports its own failure through its status.
        pipe.on("error", () => {});
        pipe.end(transfer.token);
      }
      child.unref();
      if (child.pid !== undefined) this.home.writeJournal({ ...accepted, pid: child.pid });
      this.awaitInitialWait(journal.process_id, journal.offer.wait_ms);
    } finally {
      closeSync(out);
      closeSync(err);
    }
  }

  /** Follows a process found again after a restart, until it ends. */
  adopt(journal: Journal): void {
    if (journal.phase !== "accepted") return;
    this.watched.set(journal.process_id, journal);
    if (!journal.started_reported) {
      const elapsed = Date.now() - Date.parse(journal.started_at ?? new Date().toISOString());
      this.awaitInitialWait(journal.process_id, Math.max(0, journal.offer.wait_ms - elapsed));
    }
  }

  /** svc no longer wants the process (its call was canceled, or stop_process terminate): SIGTERM, then SIGKILL if it lingers. */
  terminate(processId: string): boolean {
    const pid = this.liveGroup(processId, (j) => ({ ...j, terminate_requested: true }));
    if (pid === undefined) return false;
    signalGroup(pid, "SIGTERM");
    setTimeout(() => {
      if (this.standing(processId).state === "running") signalGroup(pid, "SIGKILL");
    }, KILL_AFTER_MS).unref();
    return true;
  }

  /** stop_process interrupt: SIGINT to the process group, or Ctrl-C typed into its terminal in pty mode. */
  interrupt(processId: string, typeInTerminal: (processId: string) => void): boolean {
    const journal = this.journal(processId);
    const pid = this.liveGroup(processId, (j) => ({ ...j, interrupt_requested: true }));
    if (pid === undefined) return false;
    if (journal?.offer.io_mode === "pty") typeInTerminal(processId);
    else signalGroup(pid, "SIGINT");
    return true;
  }

  /** Forgets a process the server no longer wants anything of; one still running is stopped, since nobody follows it any more. */
  release(processId: string): void {
    const journal = this.journal(processId);
    this.watched.delete(processId);
    clearTimeout(this.initialWaits.get(processId));
    this.initialWaits.delete(processId);
    if (journal?.phase === "accepted" && this.standing(processId).state === "running") {
      const pid = journal.pid ?? readStatus(join(this.home.processDir(processId), "pid"));
      if (pid !== undefined && pid !== null && signalGroup(pid, "SIGTERM")) {
        this.releasing.set(processId, pid);
        return;
      }
    }
    this.home.forgetProcess(processId);
  }

  /** svc recorded the process's end: its output stays readable for FINISHED_RETENTION_MS. */
  finishAcknowledged(processId: string): void {
    this.home.updateJournal(processId, (j) => ({ ...j, finished_at: j.finished_at ?? new Date().toISOString() }));
  }

  /** Running, or how it ended (from its exit file), as svcd sees it now. */
  standing(processId: string): Standing {
    const journal = this.journal(processId);
    if (!journal) return { state: "unknown", exit_code: null };
    const dir = this.home.processDir(processId);
    const status = readStatus(join(dir, "exit"));
    if (status !== undefined) return endOf(journal, status);
    if (journal.phase === "terminal") return { state: "unknown", exit_code: null };
    const pid = journal.pid ?? readStatus(join(dir, "pid")) ?? null;
    return pid !== null && isAlive(pid) ? { state: "running", exit_code: null } : { state: "unknown", exit_code: null };
  }

  /** Puts a report in the outbox (durably) and hands it on to be sent. */
  emit(report: Report): void {
    this.home.putReport(report);
    this.events.reported(report);
  }

  /** The live process group of a running process, after recording `mark` in its journal. */
  private liveGroup(processId: string, mark: (journal: Journal) => Journal): number | undefined {
    const journal = this.journal(processId);
    if (!journal || journal.phase !== "accepted" || this.standing(processId).state !== "running") return undefined;
    this.home.writeJournal(mark(journal));
    const pid = journal.pid ?? readStatus(join(this.home.processDir(processId), "pid"));
    return pid ?? undefined;
  }

  /** When the initial wait ends with the process still running, the call returns with its output so far (process_started). */
  private awaitInitialWait(processId: string, waitMs: number): void {
    clearTimeout(this.initialWaits.get(processId));
    const timer = setTimeout(() => {
      this.initialWaits.delete(processId);
      const journal = this.journal(processId);
      if (!journal || journal.phase !== "accepted" || journal.started_reported) return;
      const dir = this.home.processDir(processId);
      // An exit file means its end is being collected: the finished report answers the call instead.
      if (existsSync(join(dir, "exit"))) return;
      const stdout = readSlice(join(dir, "stdout"), 0, REPORT_OUTPUT_BYTES);
      const stderr = readSlice(join(dir, "stderr"), 0, REPORT_OUTPUT_BYTES);
      const report: Report = {
        report_id: reportId(),
        event: {
          type: "process_started",
          process_id: processId,
          started_at: journal.started_at ?? new Date().toISOString(),
          observed_at: new Date().toISOString(),
          result: { stdout: stdout.text, stderr: stderr.text, stdout_cursor: stdout.next, stderr_cursor: stderr.next, truncated: stdout.dropped || stderr.dropped },
        },
      };
      this.home.putReport(report);
      this.home.writeJournal({ ...journal, started_reported: true });
      this.events.reported(report);
    }, waitMs);
    timer.unref();
    this.initialWaits.set(processId, timer);
  }

  private pollAdopted(): void {
    for (const [processId, pid] of [...this.releasing]) {
      if (isAlive(pid)) continue;
      this.releasing.delete(processId);
      this.home.forgetProcess(processId);
    }
    for (const journal of [...this.watched.values()]) {
      const dir = this.home.processDir(journal.process_id);
      const pid = journal.pid ?? readStatus(join(dir, "pid")) ?? null;
      if (existsSync(join(dir, "exit")) || pid === null || !isAlive(pid)) this.collect(journal);
    }
  }

  /** Finished processes svc recorded long enough ago, or beyond the newest FINISHED_KEPT, are forgotten. */
  private sweepFinished(): void {
    const finished = this.home
      .readJournals()
      .filter((j) => j.phase === "terminal" && j.finished_at !== undefined)
      .sort((a, b) => Date.parse(b.finished_at!) - Date.parse(a.finished_at!));
    finished.forEach((journal, index) => {
      if (index >= FINISHED_KEPT || Date.now() - Date.parse(journal.finished_at!) > FINISHED_RETENTION_MS) this.home.forgetProcess(journal.process_id);
    });
  }

  /** The process ended (or vanished): its report goes to the outbox, then the journal says terminal. */
  private collect(journal: Journal): void {
    this.watched.delete(journal.process_id);
    clearTimeout(this.initialWaits.get(journal.process_id));
    this.initialWaits.delete(journal.process_id);
    const current = this.journal(journal.process_id) ?? journal;
    const status = readStatus(join(this.home.processDir(journal.process_id), "exit"));
    if (status === undefined && current.terminate_requested) {
      this.finish(journal, { state: "killed", exit_code: null, reason: "svc asked to stop it; it did not end on SIGTERM and was killed", exit_signal: "SIGKILL" });
    } else if (status === undefined) {
      this.finish(journal, { state: "unknown", exit_code: null, reason: "the process ended without reporting its exit status (its wrapper was killed)" });
    } else {
      const end = endOf(current, status);
      const reason = end.state === "killed" ? (current.terminate_requested ? "svc asked to stop it (stop_process, or its call was canceled)" : "stop_process interrupted it") : "";
      this.finish(journal, { state: end.state, exit_code: status, reason, ...(end.exit_signal ? { exit_signal: end.exit_signal } : {}) });
    }
  }

  private finish(journal: Journal, end: { state: ProcessFinishedEvent["state"]; exit_code: number | null; reason: string; exit_signal?: string }): void {
    const current = this.journal(journal.process_id);
    if (!current || current.phase === "terminal") return;
    const dir = this.home.processDir(journal.process_id);
    const stdout = readHead(join(dir, "stdout"));
    const stderr = readHead(join(dir, "stderr"));
    const report: Report = {
      report_id: reportId(),
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

/**
 * A stop svc asked for that ended the process by a signal makes it `killed` (a terminate whatever its
 * status: a pty's `script` exits 0 after killing its session); anything else is an exit with its status.
 */
function endOf(journal: Journal, status: number): Standing & { state: ProcessFinishedEvent["state"]; exit_signal: string | null } {
  const signal = signalOfStatus(status);
  if (journal.terminate_requested) return { state: "killed", exit_code: status, exit_signal: signal ?? "SIGTERM" };
  if (journal.interrupt_requested && signal) return { state: "killed", exit_code: status, exit_signal: signal };
  return { state: "exited", exit_code: status, exit_signal: null };
}

/** svcd's environment (less its credentials) with the process's over it, and where svcd keeps its files. */
function commandEnv(env: Record<string, string>, home: string): NodeJS.ProcessEnv {
  return { ...withoutCredentials(process.env), ...env, SVC_HOME: home };
}

/** What svcd cannot run, said before anything starts. */
function preparationError(offer: ProcessOffer): string | undefined {
  if (offer.preparation_error) return offer.preparation_error;
  if (offer.io_mode === "pty" && !ptyHelper()) {
    return "io_mode pty needs util-linux `script` or Python 3.9+ on this machine, and neither was found; use io_mode pipe";
  }
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
