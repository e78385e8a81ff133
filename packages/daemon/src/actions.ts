import { constants, existsSync, openSync, readFileSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import type { ActionOffer, ProcessActionEvent, ProcessActionResult } from "@svc/protocol";
import { reportId, type ActionRecord, type Home } from "./home.js";
import { readSlice, streamSize } from "./output.js";
import type { Supervisor } from "./supervisor.js";

/*
 * Process actions (read_process, write_process, stop_process) as svcd applies them. svc grants one action
 * of a process at a time (FIFO by seq). Before an action has any effect its journal record says
 * `effect_committed`; once its report is in the outbox it says `terminal`. So after a crash svcd can tell
 * svc which actions may have had their effect, and svc never has one applied twice (reference design-brief.md §7).
 */

/** How long a write may wait for the process to take its input. */
const WRITE_TIMEOUT_MS = 10_000;
const READ_POLL_MS = 100;
const DEFAULT_READ_BYTES = 8192;

export class ActionRunner {
  constructor(
    private readonly home: Home,
    private readonly supervisor: Supervisor,
  ) {}

  /** Whether svcd already took this action on (its effect may have happened, or its report is pending). */
  known(processId: string, actionId: string): boolean {
    return (this.supervisor.journal(processId)?.actions ?? []).some((a) => a.process_action_id === actionId);
  }

  /** Applies a granted action and reports its outcome through the outbox. Never throws. */
  async apply(offer: ActionOffer): Promise<void> {
    const record: ActionRecord = { process_action_id: offer.process_action_id, seq: offer.seq, action_kind: offer.action_kind, payload: offer.payload, position: "effect_committed" };
    const held = this.home.updateJournal(offer.process_id, (j) => ({ ...j, actions: [...(j.actions ?? []).filter((a) => a.process_action_id !== record.process_action_id), record] }));
    if (!held || held.phase === "prepared") {
      return this.report(offer, "process_action_failed", { process_state: "unknown", exit_code: null }, "svcd holds no output or process for it any more (it finished long ago, or the daemon's home was replaced)");
    }
    let outcome: { type: ProcessActionEvent["type"]; result: ProcessActionResult; reason?: string };
    try {
      outcome = await this.run(offer);
    } catch (err) {
      outcome = { type: "process_action_failed", result: this.standing(offer.process_id), reason: `svcd could not apply it: ${(err as Error).message}` };
    }
    this.report(offer, outcome.type, outcome.result, outcome.reason);
  }

  /** svc recorded the action's report: its record goes, and its seq counts as resolved. */
  acknowledged(processId: string, actionId: string, seq: number): void {
    this.home.updateJournal(processId, (j) => ({
      ...j,
      actions: (j.actions ?? []).filter((a) => a.process_action_id !== actionId),
      resolved_action_seq: Math.max(j.resolved_action_seq ?? 0, seq),
    }));
  }

  forget(processId: string, actionId: string): void {
    this.home.updateJournal(processId, (j) => ({ ...j, actions: (j.actions ?? []).filter((a) => a.process_action_id !== actionId) }));
  }

  private report(offer: ActionOffer, type: ProcessActionEvent["type"], result: ProcessActionResult, reason?: string): void {
    const report = { report_id: reportId(), event: { type, process_id: offer.process_id, process_action_id: offer.process_action_id, ...(reason ? { reason } : {}), result } };
    this.supervisor.emit(report);
    this.home.updateJournal(offer.process_id, (j) => ({
      ...j,
      actions: (j.actions ?? []).map((a) => (a.process_action_id === offer.process_action_id ? { ...a, position: "terminal" as const } : a)),
    }));
  }

  private standing(processId: string): ProcessActionResult {
    const { state, exit_code } = this.supervisor.standing(processId);
    return { process_state: state, exit_code };
  }

  private async run(offer: ActionOffer): Promise<{ type: ProcessActionEvent["type"]; result: ProcessActionResult; reason?: string }> {
    const id = offer.process_id;
    const ended = () => this.supervisor.standing(id).state !== "running";
    switch (offer.action_kind) {
      case "read":
        return { type: "process_action_applied", result: await this.read(offer) };
      case "terminate":
        if (!ended()) this.supervisor.terminate(id);
        return { type: "process_action_applied", result: { ...this.standing(id), signal: "SIGTERM" } };
      case "interrupt":
        if (!ended()) this.supervisor.interrupt(id, (p) => void this.writeStdin(p, "\u0003").catch(() => undefined));
        return { type: "process_action_applied", result: { ...this.standing(id), signal: "SIGINT" } };
      case "write": {
        if (ended()) return { type: "process_action_failed", result: this.standing(id), reason: "the process has ended; it takes no more input" };
        const data = offer.payload.data ?? "";
        if (data.length > 0) {
          const written = await this.writeStdin(id, data);
          if (written !== "ok") return { type: written === "closed" ? "process_action_failed" : "process_action_unknown", result: this.standing(id), reason: describe(written) };
        }
        if (offer.payload.close_stdin) this.closeStdin(id);
        return { type: "process_action_applied", result: { ...this.standing(id), bytes_written: Buffer.byteLength(data, "utf8"), stdin_closed: offer.payload.close_stdin === true } };
      }
    }
  }

  /** Output from the cursors; with wait_ms, waits (bounded) for output past them or the process's end. */
  private async read(offer: ActionOffer): Promise<ProcessActionResult> {
    const dir = this.home.processDir(offer.process_id);
    const cursor = offer.payload.cursor ?? 0;
    const stderrCursor = offer.payload.stderr_cursor ?? 0;
    const deadline = Date.now() + (offer.payload.wait_ms ?? 0);
    const fresh = () => streamSize(join(dir, "stdout")) > cursor || streamSize(join(dir, "stderr")) > stderrCursor;
    while (Date.now() < deadline && !fresh() && this.supervisor.standing(offer.process_id).state === "running") {
      await new Promise((resolve) => setTimeout(resolve, READ_POLL_MS));
    }
    const maxBytes = offer.payload.max_bytes ?? DEFAULT_READ_BYTES;
    const stdout = readSlice(join(dir, "stdout"), cursor, maxBytes);
    const stderr = readSlice(join(dir, "stderr"), stderrCursor, maxBytes);
    return {
      ...this.standing(offer.process_id),
      stdout: stdout.text,
      stderr: stderr.text,
      stdout_cursor: stdout.next,
      stderr_cursor: stderr.next,
      truncated: stdout.dropped || stderr.dropped,
    };
  }

  /**
   * Writes to the process's stdin FIFO without blocking svcd: opened non-blocking (a FIFO nobody reads
   * refuses at once) and written through a libuv pipe, bounded by WRITE_TIMEOUT_MS.
   */
  private writeStdin(processId: string, data: string): Promise<"ok" | "closed" | "timeout" | "error"> {
    const path = join(this.home.processDir(processId), "stdin");
    if (!existsSync(path)) return Promise.resolve("closed");
    let fd: number;
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      return Promise.resolve("closed");
    }
    return new Promise((resolve) => {
      const pipe = new Socket({ fd, readable: false, writable: true });
      const done = (outcome: "ok" | "closed" | "timeout" | "error") => {
        clearTimeout(timer);
        pipe.destroy();
        resolve(outcome);
      };
      const timer = setTimeout(() => done("timeout"), WRITE_TIMEOUT_MS);
      pipe.on("error", (err: NodeJS.ErrnoException) => done(err.code === "EPIPE" ? "closed" : "error"));
      pipe.write(data, "utf8", (err) => (err ? undefined : done("ok")));
    });
  }

  /** close_stdin: the holder keeping the FIFO open goes, so the process reads end of input once svcd's own handle is closed. */
  private closeStdin(processId: string): void {
    const holder = Number.parseInt(readText(join(this.home.processDir(processId), "pid.holder")), 10);
    if (Number.isInteger(holder) && holder > 0) signalGroupMember(holder);
  }
}

function signalGroupMember(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone: stdin is closed
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function describe(outcome: "closed" | "timeout" | "error"): string {
  if (outcome === "closed") return "the process's standard input is closed; nothing was written";
  if (outcome === "timeout") return `the process did not take its input within ${WRITE_TIMEOUT_MS / 1000} s; some of it may have been written`;
  return "writing to the process's standard input failed; some of it may have been written";
}
