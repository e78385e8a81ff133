import { and, eq } from "drizzle-orm";
import type { AckStatus, ActionOffer, ProcessActionEvent, ProcessFinishedEvent, ProcessOffer, ProcessStartedEvent, RegisterDaemonRuntimeRequest, ReportEvent, RuntimeEndCode } from "@svc/protocol";
import { agents, machines, toolCalls } from "../../db/schema/index.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, notFound } from "../../platform/errors.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { decodeId, encodeId, newUuid } from "../../platform/ids.js";
import { putToSleep } from "../machines/sleep.js";
import { notifyDaemon } from "../machines/store.js";
import { announceMachineOffline } from "../machines/offline-webhooks.js";
import type { OrgCredentials } from "../secrets/org-credentials.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { TERMINAL_PROCESS_STATES, settleAction, settleProcess, type ProcessRow } from "../../runtime/store/processes.js";
import { lockAgent } from "../../runtime/store/journal.js";
import { completeToolCall } from "../../runtime/store/tool-calls.js";
import { reconcile } from "./reconcile.js";
import { actionResult, finishedResult, startedResult } from "./results.js";
import { transferFinished, transferOffer, transferStarted } from "./transfer-results.js";
import { clearFailure } from "./failures.js";
import type { SkillInstallService } from "./skill-installs.js";
import * as store from "./store.js";

/** How often a daemon heartbeats (the reference's 10 s); the lease is twelve of them. */
export const HEARTBEAT_MS = 10_000;
/** Offers sent per drain of a socket (the reference's 4). */
const OFFERS_PER_DRAIN = 4;
const TERMINATIONS_PER_DRAIN = 16;
/** Action offers per drain (the reference's 16). */
const ACTION_OFFERS_PER_DRAIN = 16;

/**
 * The machine daemon's side of svc (docs/architecture.md, "The daemon protocol"): who a daemon token is,
 * runtimes and their leases, offers, grants and reports. Every time decision uses the database clock.
 */
export function createDaemonService(deps: { db: Database; credentials: OrgCredentials; artifacts: ArtifactsService; skillInstalls: SkillInstallService }) {
  const { db } = deps;

  async function authenticate(tokenHash: string): Promise<DaemonPrincipal | null> {
    const found = await store.findDaemonByTokenHash(db.read, tokenHash);
    if (!found) return null;
    await store.touchToken(db.write, found.tokenId);
    return { tokenId: found.tokenId, machineId: found.machineId, orgId: found.orgId };
  }

  /** A runtime of the daemon's machine; another machine's is not found, an ended one is gone. */
  async function activeRuntime(daemon: DaemonPrincipal, runtimeId: string): Promise<store.RuntimeRow> {
    const runtime = await store.findRuntime(db.read, daemon.machineId, runtimeId);
    if (!runtime) throw notFound("daemon runtime");
    if (runtime.state !== "active") throw new AppError("gone", `this runtime ended (${runtime.stateReasonCode || "ended"}); register a new one`);
    return runtime;
  }

  async function register(daemon: DaemonPrincipal, body: RegisterDaemonRuntimeRequest) {
    return db.tx(async (tx) => {
      // Registrations of one machine serialize here, so at most one runtime is ever active.
      const machine = await store.lockLiveMachine(tx, daemon.machineId);
      if (!machine) throw notFound("machine");
      const changes = { daemonVersion: body.daemon_version, capacity: body.capacity ?? {}, observedPlatform: body.observed_platform ?? {} };
      const known = await store.findRuntimeByInstance(tx, daemon.machineId, body.daemon_instance_id);
      if (known && known.state === "ended" && ["replaced", "token_revoked", "machine_deleted"].includes(known.stateReasonCode)) {
        throw new AppError("gone", "this daemon instance was superseded; another daemon runs for this machine");
      }
      const replaced = await store.endRuntimes(tx, daemon.machineId, { code: "replaced", message: "another daemon instance registered for this machine" }, known?.id);
      const runtime = known
        ? await store.reviveRuntime(tx, known.id, daemon.tokenId, changes)
        : await store.insertRuntime(tx, {
            id: newUuid(),
            orgId: daemon.orgId,
            machineId: daemon.machineId,
            daemonTokenId: daemon.tokenId,
            daemonInstanceId: body.daemon_instance_id,
            ...changes,
            lastSeenAt: new Date(0),
            leaseExpiresAt: new Date(0),
          });
      // The lease comes from the database clock: renewed in the statement, not from the values above.
      const leased = (await store.renewLease(tx, runtime.id))!;
      const directives = await reconcile(tx, leased, body.processes);
      await clearFailure(tx, daemon.machineId);
      // The replaced runtime's socket (maybe on another replica) hears it and closes.
      if (replaced.length > 0) await notifyDaemon(tx, daemon.machineId);
      return { runtime: leased, directives };
    });
  }

  async function end(daemon: DaemonPrincipal, runtimeId: string, reason: { code: string; message: string }) {
    return db.tx(async (tx) => {
      const runtime = await store.findRuntime(tx, daemon.machineId, runtimeId);
      if (!runtime) throw notFound("daemon runtime");
      if (runtime.state !== "active") return runtime;
      const [ended] = await store.endRuntimes(tx, daemon.machineId, reason);
      await store.unleaseMachine(tx, ended ?? runtime);
      if (ended) await announceRuntimeEnd(tx, daemon, reason);
      return ended ?? runtime;
    });
  }

  /**
   * Ends the runtime for sleep and marks the machine asleep (modules/machines/sleep.ts): only a pool machine
   * whose provider can wake it, with no process work. BYO machines cannot be woken by svc, so they never sleep.
   */
  async function sleep(daemon: DaemonPrincipal, runtimeId: string): Promise<store.RuntimeRow> {
    await activeRuntime(daemon, runtimeId);
    return db.tx(async (tx) => {
      const outcome = await putToSleep(tx, daemon.machineId);
      if (!outcome.asleep) throw outcome.code === "gone" ? notFound("machine") : new AppError(outcome.code, outcome.message);
      return outcome.runtime ?? (await store.findRuntime(tx, daemon.machineId, runtimeId))!;
    });
  }

  /** Renews the lease; the end code when the runtime may not go on. */
  async function heartbeat(daemon: DaemonPrincipal, runtimeId: string): Promise<RuntimeEndCode | null> {
    const renewed = await db.tx((tx) => store.renewLease(tx, runtimeId));
    return renewed ? null : endCode(daemon, runtimeId);
  }

  /**
   * Whether the runtime may go on: its token active, its machine live, itself current. A runtime whose
   * credential or machine is gone is ended here, so the machine reads offline at once.
   */
  async function endCode(daemon: DaemonPrincipal, runtimeId: string): Promise<RuntimeEndCode | null> {
    const code: RuntimeEndCode | null = (await store.machineDeleted(db.read, daemon.machineId))
      ? "machine_deleted"
      : (await store.tokenRevoked(db.read, daemon.tokenId))
        ? "token_revoked"
        : null;
    const runtime = await store.findRuntime(db.read, daemon.machineId, runtimeId);
    if (code) {
      if (runtime?.state === "active") await end(daemon, runtimeId, { code, message: code === "token_revoked" ? "the daemon token was revoked" : "the machine was deleted" });
      return code;
    }
    if (!runtime) return "ended";
    if (runtime.state === "active") return null;
    return runtime.stateReasonCode === "replaced" ? "superseded" : "ended";
  }

  /**
   * Up to four queued processes for the runtime's machine, with their secret environment resolved now;
   * `skip` names (by public id) those already offered on the connection.
   */
  async function offers(daemon: DaemonPrincipal, skip: readonly string[]): Promise<ProcessOffer[]> {
    const skipped = skip.map((id) => decodeId("process", id)).filter((id): id is string => id !== null);
    const queued = await store.queuedProcesses(db.read, daemon.machineId, skipped, OFFERS_PER_DRAIN);
    if (queued.length === 0) return [];
    return db.tx(async (tx) => Promise.all(queued.map((p) => offerOf(tx, p))));
  }

  /** Running processes whose call was canceled: the daemon terminates them and reports them killed. */
  async function terminations(daemon: DaemonPrincipal): Promise<string[]> {
    return (await store.abandonedRunning(db.read, daemon.machineId, TERMINATIONS_PER_DRAIN)).map((p) => encodeId("process", p.id));
  }

  async function offerOf(tx: Tx, process: Awaited<ReturnType<typeof store.queuedProcesses>>[number]): Promise<ProcessOffer> {
    const offer: ProcessOffer = {
      process_id: encodeId("process", process.id),
      // The CHECK constraint processes_io_mode admits only the protocol's modes.
      io_mode: process.ioMode as ProcessOffer["io_mode"],
      command: process.command,
      shell_selector: process.shellSelector,
      cwd: process.cwd,
      env: { ...process.env },
      wait_ms: process.waitMs,
      timeout_seconds: 0,
    };
    if (process.kind !== "command") return { ...offer, ...(await transferOffer(tx, process)) };
    for (const [name, secretId] of Object.entries(process.secretEnv)) {
      try {
        const material = await deps.credentials.openOrgSecret(tx, process.orgId, secretId);
        if (material.kind !== "generic") throw notFound("secret");
        offer.env[name] = material.value;
      } catch {
        offer.preparation_error = `the secret for ${name} could not be read (deleted, or not a generic org secret)`;
      }
    }
    return offer;
  }

  async function accept(daemon: DaemonPrincipal, runtimeId: string, publicProcessId: string): Promise<{ accepted: boolean; reason?: string }> {
    const processId = decodeId("process", publicProcessId);
    if (!processId) return { accepted: false, reason: "no such process" };
    return db.tx(async (tx) => {
      const runtime = await store.findRuntime(tx, daemon.machineId, runtimeId);
      if (runtime?.state !== "active") return { accepted: false, reason: "this runtime ended" };
      const granted = await store.grantProcess(tx, daemon.machineId, processId, runtimeId);
      return granted ? { accepted: true } : { accepted: false, reason: "the process is no longer waiting to run (taken, or its call was canceled)" };
    });
  }

  /**
   * Applies a process's end once: the process and its call complete in one transaction. A report for a
   * process already ended is acknowledged without effect, so a report sent again after a lost
   * acknowledgement or a daemon restart never completes anything twice.
   */
  async function report(daemon: DaemonPrincipal, event: ReportEvent): Promise<AckStatus> {
    if (event.type === "process_finished") return finished(daemon, event);
    if (event.type === "process_started") return started(daemon, event);
    return actionReported(daemon, event);
  }

  async function finished(daemon: DaemonPrincipal, event: ProcessFinishedEvent): Promise<AckStatus> {
    const processId = decodeId("process", event.process_id);
    const process = processId ? await store.findProcess(db.read, daemon.machineId, processId) : undefined;
    if (!process) return "permanent_reject";
    if (TERMINAL_PROCESS_STATES.has(process.state)) return "cleanup_only";
    if (process.state === "queued") return "permanent_reject";
    // A call that returned early (state running) keeps its result: the end changes only the process, and
    // no result (nor an artifact for it) is made.
    const answers = (await waitingCall(db.read, process)) !== undefined;
    const outcome = event.state === "exited" ? ("succeeded" as const) : ("failed" as const);
    const answer = () => (process.kind === "command" ? finishedResult(deps.artifacts, process, event) : transferFinished(db.read, process, event));
    const result = answers ? await answer() : { outcome, prepared: { artifacts: [], blocks: [] } };
    const applied = await db.tx(async (tx) => {
      const settled = await settleProcess(tx, process, {
        state: event.state,
        exitCode: event.exit_code,
        exitSignal: event.exit_signal,
        reason: event.reason,
        startedAt: event.started_at ? new Date(event.started_at) : null,
        endedAt: new Date(event.ended_at),
        outputBytes: event.result.stdout_bytes + event.result.stderr_bytes,
      }, { outcome: result.outcome, blocks: result.prepared.blocks });
      if (settled) await deps.artifacts.recordArtifacts(tx, result.prepared, { orgId: process.orgId, projectId: await projectOf(tx, process.agentId), agentId: process.agentId });
      return settled;
    });
    return applied ? "committed" : "cleanup_only";
  }

  /**
   * The initial wait ended with the process running: its call, still waiting, completes with the output so
   * far (`state: running`). The process stays running; its end later changes only the process row.
   */
  async function started(daemon: DaemonPrincipal, event: ProcessStartedEvent): Promise<AckStatus> {
    const processId = decodeId("process", event.process_id);
    const process = processId ? await store.findProcess(db.read, daemon.machineId, processId) : undefined;
    if (!process || process.state === "queued") return "permanent_reject";
    if (TERMINAL_PROCESS_STATES.has(process.state)) return "cleanup_only";
    const prepared = process.kind === "command" ? await startedResult(deps.artifacts, process, event) : transferStarted(process);
    return db.tx(async (tx) => {
      const agent = await lockAgent(tx, process.agentId);
      const call = agent ? await waitingCall(tx, process) : undefined;
      if (!agent || !call) return "cleanup_only";
      await deps.artifacts.recordArtifacts(tx, prepared, { orgId: process.orgId, projectId: agent.projectId, agentId: process.agentId });
      await tx.commitWith(() => completeToolCall(tx, agent, call, "succeeded", prepared.blocks, { wake: "process_started" }));
      return "committed";
    });
  }

  /** An action's outcome completes its call, once; a report for an action already ended changes nothing. */
  async function actionReported(daemon: DaemonPrincipal, event: ProcessActionEvent): Promise<AckStatus> {
    const actionId = decodeId("processAction", event.process_action_id);
    const found = actionId ? await store.findAction(db.read, daemon.machineId, actionId) : undefined;
    if (!found || encodeId("process", found.process.id) !== event.process_id) return "permanent_reject";
    // A read re-offered after a restart may be reported while queued again; its first report answers it.
    if (found.action.state !== "accepted" && found.action.state !== "queued") return "cleanup_only";
    const state = event.type === "process_action_applied" ? "applied" : event.type === "process_action_failed" ? "failed" : "unknown";
    const settled = await db.tx((tx) => settleAction(tx, found.action, state, event.reason ?? "", actionResult(found.process, found.action, event)));
    return settled ? "committed" : "cleanup_only";
  }

  /** Up to 16 actions the machine's daemon may take now (one per process, in order), skipping those offered on this connection. */
  async function actionOffers(daemon: DaemonPrincipal, skip: readonly string[]): Promise<ActionOffer[]> {
    const skipped = skip.map((id) => decodeId("processAction", id)).filter((id): id is string => id !== null);
    const rows = await store.queuedActions(db.read, daemon.machineId, skipped, ACTION_OFFERS_PER_DRAIN);
    return rows.map(({ action, process }) => ({
      process_id: encodeId("process", process.id),
      process_action_id: encodeId("processAction", action.id),
      // The CHECK constraint process_actions_kind admits only the protocol's kinds.
      action_kind: action.kind as ActionOffer["action_kind"],
      seq: action.seq,
      payload: action.payload,
    }));
  }

  async function acceptAction(daemon: DaemonPrincipal, runtimeId: string, publicActionId: string): Promise<{ accepted: boolean; reason?: string; process_state?: string }> {
    const actionId = decodeId("processAction", publicActionId);
    if (!actionId) return { accepted: false, reason: "no such action" };
    return db.tx(async (tx) => {
      const runtime = await store.findRuntime(tx, daemon.machineId, runtimeId);
      if (runtime?.state !== "active") return { accepted: false, reason: "this runtime ended" };
      const granted = await store.grantAction(tx, daemon.machineId, actionId, runtimeId);
      return granted
        ? { accepted: true, process_state: granted.process.state }
        : { accepted: false, reason: "the action is no longer waiting (taken, another action of its process comes first, or its call was canceled)" };
    });
  }

  return { authenticate, activeRuntime, register, end, sleep, heartbeat, endCode, offers, terminations, accept, report, actionOffers, acceptAction, ...deps.skillInstalls };
}

async function waitingCall(tx: Tx | Database["read"], process: ProcessRow) {
  const [call] = await tx.select().from(toolCalls).where(and(eq(toolCalls.id, process.toolCallId), eq(toolCalls.state, "waiting")));
  return call;
}

async function projectOf(tx: Tx, agentId: string): Promise<string> {
  const [agent] = await tx.select({ projectId: agents.projectId }).from(agents).where(eq(agents.id, agentId));
  return agent!.projectId;
}

export type DaemonService = ReturnType<typeof createDaemonService>;

/** The daemon ended its runtime (it is stopping): `machine.offline` to webhooks, in the same transaction. */
async function announceRuntimeEnd(tx: Tx, daemon: DaemonPrincipal, reason: { code: string; message: string }): Promise<void> {
  const [machine] = await tx.select({ id: machines.id, orgId: machines.orgId, displayName: machines.displayName }).from(machines).where(eq(machines.id, daemon.machineId));
  if (machine) await announceMachineOffline(tx, machine, reason.message || reason.code);
}
