import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { ActionKind, ActionPayload, ProcessOffer, Report } from "@svc/protocol";

/*
 * svcd's durable state under `--home`. Every file is written whole to a temporary name, synced, then renamed
 * over the old one, so a crash (kill -9, power loss) leaves the old content or the new, never half of one:
 *
 *   processes/<prc_…>/journal.json   what svcd promised about the process (phase, the offer, the pid)
 *   processes/<prc_…>/stdout|stderr  the process's output, written by the process itself (byte cursors are offsets in them)
 *   processes/<prc_…>/stdin          a FIFO: the process's standard input, which write_process writes to
 *   processes/<prc_…>/pid|holder     the wrapper's pid (its process group) and the pid of the stdin holder
 *   processes/<prc_…>/exit           its exit status, written by the wrapper shell when it ends
 *   outbox/<report id>.json          reports not yet acknowledged by the server
 */

/** `prepared`: accepted by svcd, not yet by the server, never started. `accepted`: the server granted it; it was started or is about to be. `terminal`: its report is in the outbox. */
export type JournalPhase = "prepared" | "accepted" | "terminal";

/** An action svcd took on: `effect_committed` is written before its effect, `terminal` once its report is in the outbox. */
export interface ActionRecord {
  process_action_id: string;
  seq: number;
  action_kind: ActionKind;
  payload: ActionPayload;
  position: "effect_committed" | "terminal";
}

export interface Journal {
  process_id: string;
  /** The daemon instance that prepared it. */
  supervisor_instance_id: string;
  phase: JournalPhase;
  offer: ProcessOffer;
  pid: number | null;
  started_at: string | null;
  /** svc asked to stop it (its call was canceled, or stop_process): its end is reported as killed. */
  terminate_requested?: boolean;
  /** stop_process interrupt: an end by a signal after it is reported as killed. */
  interrupt_requested?: boolean;
  /** The initial wait ended with the process running, and its process_started report was written. */
  started_reported?: boolean;
  /** When svc acknowledged its end; its output is kept for reads for a while after (see Supervisor). */
  finished_at?: string;
  actions?: ActionRecord[];
  /** The highest action seq whose report svc acknowledged. */
  resolved_action_seq?: number;
}

export class Home {
  readonly processes: string;
  readonly outbox: string;

  constructor(readonly root: string) {
    this.processes = join(root, "processes");
    this.outbox = join(root, "outbox");
    mkdirSync(this.processes, { recursive: true });
    mkdirSync(this.outbox, { recursive: true });
  }

  processDir(processId: string): string {
    return join(this.processes, safeName(processId));
  }

  writeJournal(journal: Journal): void {
    const dir = this.processDir(journal.process_id);
    mkdirSync(dir, { recursive: true });
    writeAtomically(join(dir, "journal.json"), JSON.stringify(journal));
  }

  readJournal(processId: string): Journal | undefined {
    return readJson<Journal>(join(this.processDir(processId), "journal.json"));
  }

  /** Reads the journal, changes it, writes it whole; nothing when there is none. */
  updateJournal(processId: string, change: (journal: Journal) => Journal): Journal | undefined {
    const current = this.readJournal(processId);
    if (!current) return undefined;
    const next = change(current);
    this.writeJournal(next);
    return next;
  }

  readJournals(): Journal[] {
    const journals: Journal[] = [];
    for (const name of readdirSync(this.processes)) {
      const journal = readJson<Journal>(join(this.processes, name, "journal.json"));
      if (journal) journals.push(journal);
      // A directory without a journal was being created when svcd died: nothing was promised for it.
      else rmSync(join(this.processes, name), { recursive: true, force: true });
    }
    return journals;
  }

  forgetProcess(processId: string): void {
    rmSync(this.processDir(processId), { recursive: true, force: true });
  }

  putReport(report: Report): void {
    writeAtomically(join(this.outbox, `${safeName(report.report_id)}.json`), JSON.stringify(report));
  }

  reports(): Report[] {
    return readdirSync(this.outbox)
      .filter((name) => name.endsWith(".json"))
      .sort()
      .flatMap((name) => readJson<Report>(join(this.outbox, name)) ?? []);
  }

  dropReport(reportId: string): void {
    rmSync(join(this.outbox, `${safeName(reportId)}.json`), { force: true });
  }
}

/** Report ids sort in the order they were made, so the outbox is sent oldest first (a start before its end). */
export function reportId(): string {
  return `${Date.now().toString(36).padStart(10, "0")}-${randomUUID()}`;
}

export function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** Ids come from the server; only their safe characters ever name a file. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_");
}
