import type { Tx } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { TERMINAL_PROCESS_STATES, abandonProcess, type ProcessRow } from "../../runtime/store/processes.js";
import type { Disposition, ProcessClaim, ProcessDirective } from "./schemas.js";
import * as store from "./store.js";

/*
 * Reconciliation at registration (design brief §7): the daemon says what it holds for each process, svc
 * answers what to do with it. The rules keep "an accepted process never runs twice, a finished one is never
 * lost" across daemon restarts:
 *
 *   daemon phase   svc's process          directive           why
 *   prepared       queued                 close_preparation   svc never granted it; it will be offered again
 *   prepared       running (granted)      start               granted, but the daemon never started it (it starts only after writing `accepted`)
 *   accepted       running                retain              it runs, or ran: the daemon follows it and reports its end
 *   terminal       running                retain              its report is in the daemon's outbox and comes next
 *   any            ended, or unknown      release             nothing left to do; a report still in the outbox is acknowledged without effect
 *
 * A process svc believes is running on the machine that no registering daemon claims was lost with the
 * daemon's home: its call completes as failed with that reason, and it is never offered again.
 */

export async function reconcile(tx: Tx, signals: AgentSignals, runtime: store.RuntimeRow, claims: readonly ProcessClaim[]): Promise<ProcessDirective[]> {
  const ids = claims.map((c) => decodeId("process", c.process_id)).filter((id): id is string => id !== null);
  const known = new Map((await store.processesOfMachine(tx, runtime.machineId, ids)).map((p) => [p.id, p]));
  const directives: ProcessDirective[] = [];
  const rebind: string[] = [];
  const start: string[] = [];
  for (const claim of claims) {
    const id = decodeId("process", claim.process_id);
    const process = id ? known.get(id) : undefined;
    const disposition = decide(claim, process);
    if (disposition === "retain") rebind.push(process!.id);
    if (disposition === "start") start.push(process!.id);
    directives.push({ process_id: claim.process_id, supervisor_instance_id: claim.supervisor_instance_id, disposition, actions: [] });
  }
  await store.bindProcessesToRuntime(tx, rebind, runtime.id);
  await store.bindProcessesToRuntime(tx, start, runtime.id, "running");
  for (const lost of await store.liveProcessesNotIn(tx, runtime.machineId, [...rebind, ...start])) await settleLost(tx, signals, lost);
  return directives;
}

function decide(claim: ProcessClaim, process: ProcessRow | undefined): Disposition {
  if (!process || TERMINAL_PROCESS_STATES.has(process.state)) return "release";
  if (claim.phase === "preparing" || claim.phase === "prepared") return process.state === "queued" ? "close_preparation" : "start";
  // accepted or terminal: the daemon started it. A process svc still has queued was never granted, so the
  // daemon's claim is wrong; releasing it keeps svc's record the one that counts.
  return process.state === "queued" ? "release" : "retain";
}

async function settleLost(tx: Tx, signals: AgentSignals, process: ProcessRow): Promise<void> {
  await abandonProcess(
    tx,
    signals,
    process,
    "The machine's daemon restarted without any record of this process (its home directory was lost or replaced), so " +
      "its outcome is unknown. It was not run again.",
  );
}
