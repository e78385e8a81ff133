import type { Disposition, ProcessActionDirective, ProcessClaim, ProcessDirective } from "@svc/protocol";
import type { Tx } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import { encodeId } from "../../platform/ids.js";
import { TERMINAL_PROCESS_STATES, abandonProcess, settleAction, type ProcessActionRow, type ProcessRow } from "../../runtime/store/processes.js";
import { textBlock } from "../../runtime/store/tool-calls.js";
import * as store from "./store.js";

/*
 * Reconciliation at registration (reference design-brief.md §7): the daemon says what it holds for each process, svc
 * answers what to do with it. The rules keep "an accepted process never runs twice, a finished one is never
 * lost" across daemon restarts:
 *
 *   daemon phase   svc's process          directive           why
 *   prepared       queued                 close_preparation   svc never granted it; it will be offered again
 *   prepared       running (granted)      start               granted, but the daemon never started it (it starts only after writing `accepted`)
 *   accepted       running                retain              it runs, or ran: the daemon follows it and reports its end
 *   terminal       running                retain              its report is in the daemon's outbox and comes next
 *   terminal       ended (not unknown)    retain              the daemon keeps its output for read_process a while
 *   any            ended, or unknown      release             nothing left to do; a report still in the outbox is acknowledged without effect
 *
 * And for each action svc has granted (`accepted`) on a process the daemon holds:
 *
 *   daemon's claim      directive / svc                  why
 *   terminal            retain                           its report is in the outbox and comes next
 *   effect_committed    apply (read, terminate)          it may have run; running it again changes nothing
 *   effect_committed    release; svc settles `unknown`   a write or an interrupt may have had its effect: never applied twice
 *   none                svc queues it again              the daemon never took it on (reads are never claimed: they have no effect)
 *
 * and an action the daemon claims that svc no longer has open is released.
 *
 * A process svc believes is running on the machine that no registering daemon claims was lost with the
 * daemon's home: its call completes as failed with that reason, and it is never offered again.
 */

export async function reconcile(tx: Tx, runtime: store.RuntimeRow, claims: readonly ProcessClaim[]): Promise<ProcessDirective[]> {
  const ids = claims.map((c) => decodeId("process", c.process_id)).filter((id): id is string => id !== null);
  const known = new Map((await store.processesOfMachine(tx, runtime.machineId, ids)).map((p) => [p.id, p]));
  const directives: ProcessDirective[] = [];
  const rebind: string[] = [];
  const start: string[] = [];
  const accepted = await store.acceptedActions(tx, [...known.keys()]);
  for (const claim of claims) {
    const id = decodeId("process", claim.process_id);
    const process = id ? known.get(id) : undefined;
    const disposition = decide(claim, process);
    if (disposition === "retain" && !TERMINAL_PROCESS_STATES.has(process!.state)) rebind.push(process!.id);
    if (disposition === "start") start.push(process!.id);
    const actions = disposition === "retain" || disposition === "start" ? await reconcileActions(tx, claim, accepted.filter((a) => a.processId === process!.id)) : [];
    directives.push({ process_id: claim.process_id, supervisor_instance_id: claim.supervisor_instance_id, disposition, actions });
  }
  await store.bindProcessesToRuntime(tx, rebind, runtime.id);
  await store.bindProcessesToRuntime(tx, start, runtime.id, "running");
  for (const lost of await store.liveProcessesNotIn(tx, runtime.machineId, [...rebind, ...start])) await settleLost(tx, lost);
  return directives;
}

function decide(claim: ProcessClaim, process: ProcessRow | undefined): Disposition {
  if (!process) return "release";
  if (TERMINAL_PROCESS_STATES.has(process.state)) return claim.phase === "terminal" && process.state !== "unknown" ? "retain" : "release";
  if (claim.phase === "preparing" || claim.phase === "prepared") return process.state === "queued" ? "close_preparation" : "start";
  // accepted or terminal: the daemon started it. A process svc still has queued was never granted, so the
  // daemon's claim is wrong; releasing it keeps svc's record the one that counts.
  return process.state === "queued" ? "release" : "retain";
}

async function settleLost(tx: Tx, process: ProcessRow): Promise<void> {
  await abandonProcess(
    tx,
    process,
    "The machine's daemon restarted without any record of this process (its home directory was lost or replaced), so " +
      "its outcome is unknown. It was not run again.",
  );
}

async function reconcileActions(tx: Tx, claim: ProcessClaim, accepted: ProcessActionRow[]): Promise<ProcessActionDirective[]> {
  const claimed = new Map(claim.actions.map((a) => [decodeId("processAction", a.process_action_id), a]));
  const directives: ProcessActionDirective[] = [];
  for (const action of accepted) {
    const held = claimed.get(action.id);
    claimed.delete(action.id);
    const named = { process_action_id: encodeId("processAction", action.id), seq: action.seq, action_kind: action.kind as ProcessActionDirective["action_kind"] };
    if (held?.position === "terminal") directives.push({ ...named, disposition: "retain" });
    else if (held && (action.kind === "read" || action.kind === "terminate")) directives.push({ ...named, disposition: "apply", payload: action.payload });
    else if (held || (action.kind !== "read" && action.seq <= claim.resolved_action_seq)) {
      const reason =
        "The machine's daemon restarted while applying this action, so whether it had its effect is unknown. It was not applied again; " +
        "read the process's output to see where it stands.";
      await settleAction(tx, action, "unknown", reason, { outcome: "failed", blocks: [textBlock(reason)] });
      if (held) directives.push({ ...named, disposition: "release" });
    } else await store.requeueAction(tx, action.id);
  }
  for (const [id, rest] of claimed) {
    if (id) directives.push({ process_action_id: rest.process_action_id, seq: rest.seq, action_kind: rest.action_kind, disposition: "release" });
  }
  return directives;
}
