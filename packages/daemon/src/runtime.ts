import { randomUUID } from "node:crypto";
import { arch, hostname, platform } from "node:os";
import type { ActionOffer, DaemonFrame, ProcessDirective, ProcessOffer, Report, ServerFrame } from "@svc/protocol";
import WebSocket from "ws";
import { DaemonApi, Rejected, Superseded, TokenRefused, Unavailable } from "./api.js";
import { reportFailure } from "./failures.js";
import { SkillInstaller } from "./skills.js";
import type { Home } from "./home.js";
import { ActionRunner } from "./actions.js";
import { Supervisor } from "./supervisor.js";
import { FATAL_END_CODES, parseServerFrame } from "./protocol.js";

/*
 * One svcd run: register a runtime over HTTP (with claims for every process it holds), open the runtime's
 * WebSocket, heartbeat, take offers, run them and send reports, and when the socket drops register again
 * after a bounded, growing pause. It ends when asked to (SIGTERM: it ends its runtime first) or when svc
 * refuses its token or ends its runtime for good (revoked, machine deleted, replaced).
 */

export const DAEMON_VERSION = "0.1.0";
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/** Without any frame from svc for this long, the connection is taken for dead (svc pings every 20 s). */
const READ_TIMEOUT_MS = 70_000;
/** Reports not acknowledged are sent again after this long on the same connection. */
const RESEND_MS = 5_000;
const END_TIMEOUT_MS = 5_000;

export type RunOutcome = { kind: "stopped" } | { kind: "refused"; reason: string };

export interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export class DaemonRuntime {
  private readonly instanceId = randomUUID();
  private readonly supervisor: Supervisor;
  private readonly actions: ActionRunner;
  /** Action offers svcd asked to accept, until svc answers (offers are not durable: svc offers again). */
  private readonly pendingActions = new Map<string, ActionOffer>();
  private socket: WebSocket | undefined;
  private runtimeId: string | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private fatal: string | undefined;
  private readonly skills: SkillInstaller;
  /** The last refusal reported to svc, so a registration refused again and again is reported once. */
  private reportedRefusal: string | undefined;

  constructor(
    private readonly api: DaemonApi,
    private readonly home: Home,
    private readonly log: Log,
  ) {
    this.supervisor = new Supervisor(home, this.instanceId, { reported: (report) => this.send({ type: "report", payload: report }) }, { origin: api.origin, token: api.token });
    this.actions = new ActionRunner(home, this.supervisor);
    this.skills = new SkillInstaller(home.root, api, (report) => this.send({ type: "skill_report", payload: report }));
  }

  /** Runs until stopped or refused. */
  async run(): Promise<RunOutcome> {
    try {
      const who = await this.api.bootstrap();
      this.log.info(`svcd ${DAEMON_VERSION} for machine ${who.machine_id}`);
    } catch (err) {
      if (err instanceof TokenRefused) return this.refused(err.message);
      // svc not up yet: the loop below retries with backoff.
    }
    let failures = 0;
    while (!this.stopping && !this.fatal) {
      try {
        const registered = await this.register();
        failures = 0;
        if (this.stopping) break;
        await this.connect(registered.runtime.id);
      } catch (err) {
        if (err instanceof TokenRefused || err instanceof Superseded) return this.refused(err.message);
        if (!(err instanceof Unavailable)) throw err;
        this.log.warn(err.message);
        if (err instanceof Rejected) await this.reportRefusal(err.message);
      }
      if (this.stopping || this.fatal) break;
      failures += 1;
      await this.pause(Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(failures, 16)) * (0.5 + Math.random() / 2));
    }
    this.supervisor.stop();
    if (this.fatal) return this.refused(this.fatal);
    // Stopping: the runtime ends now rather than when its lease runs out, so the machine reads offline at once.
    if (this.runtimeId) {
      await Promise.race([this.api.end(this.runtimeId).catch((err: Error) => this.log.warn(`ending the runtime failed: ${err.message}`)), delay(END_TIMEOUT_MS)]);
    }
    return { kind: "stopped" };
  }

  /** SIGTERM: close the socket and let `run` end the runtime and return. Running commands go on. */
  stop(): void {
    this.stopping = true;
    this.wake?.();
    this.socket?.close(1000, "svcd stopping");
  }

  /** A registration svc refused for a reason waiting will not fix: the machine's failure_report says why (it still retries). */
  private async reportRefusal(message: string): Promise<void> {
    if (this.reportedRefusal === message) return;
    this.reportedRefusal = message;
    await reportFailure(this.api, { stage: "daemon_start", output: `svcd could not register with svc: ${message}`, version: DAEMON_VERSION });
  }

  private refused(reason: string): RunOutcome {
    this.supervisor.stop();
    return { kind: "refused", reason };
  }

  private async register() {
    const registered = await this.api.register({
      daemon_instance_id: this.instanceId,
      daemon_version: DAEMON_VERSION,
      observed_platform: { os: platform(), arch: arch(), hostname: hostname() },
      processes: this.supervisor.claims(),
    });
    this.runtimeId = registered.runtime.id;
    for (const directive of registered.reconciliation.processes) this.apply(directive);
    return registered;
  }

  /** The server's answer to a claim: never starts anything that was accepted before, nor applies an action twice. */
  private apply(directive: ProcessDirective): void {
    const journal = this.supervisor.journal(directive.process_id);
    if (!journal) return;
    if (directive.disposition === "close_preparation" || directive.disposition === "release") return this.supervisor.release(journal.process_id);
    if (directive.disposition === "start" && journal.phase === "prepared") this.supervisor.start(journal);
    else if (directive.disposition === "retain") this.supervisor.adopt(journal);
    for (const action of directive.actions) {
      // `apply` comes only for actions that never had an effect or may safely be repeated (a read, a terminate).
      if (action.disposition === "apply") void this.actions.apply({ process_id: directive.process_id, process_action_id: action.process_action_id, action_kind: action.action_kind, seq: action.seq, payload: action.payload ?? {} });
      else if (action.disposition === "release" || action.disposition === "settle") this.actions.forget(directive.process_id, action.process_action_id);
    }
  }

  /** One WebSocket session; resolves when it closes. */
  private connect(runtimeId: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping) return resolve();
      const socket = new WebSocket(this.api.socketUrl(runtimeId), { headers: { authorization: this.api.authorization }, handshakeTimeout: 15_000, maxPayload: 1024 * 1024 });
      this.socket = socket;
      let heartbeat: NodeJS.Timeout | undefined;
      let watchdog: NodeJS.Timeout | undefined;
      const resend = setInterval(() => this.flushOutbox(), RESEND_MS);
      const alive = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => socket.terminate(), READ_TIMEOUT_MS);
      };
      const beat = (afterMs: number) => {
        clearTimeout(heartbeat);
        heartbeat = setTimeout(() => this.send({ type: "heartbeat", payload: { daemon_instance_id: this.instanceId } }), afterMs);
      };
      socket.on("open", () => {
        this.log.info(`connected as runtime ${runtimeId}`);
        alive();
        beat(0);
        this.flushOutbox();
      });
      socket.on("ping", alive);
      socket.on("message", (data) => {
        alive();
        const frame = parseServerFrame(String(data));
        if (frame) this.handle(frame, beat);
      });
      socket.on("unexpected-response", (_request, response) => {
        const status = response.statusCode ?? 0;
        if (status === 401 || status === 403) this.fatal = `svc refused the token (HTTP ${status})`;
        socket.terminate();
      });
      socket.on("error", (err) => this.log.warn(`socket error: ${err.message}`));
      socket.on("close", () => {
        clearTimeout(heartbeat);
        clearTimeout(watchdog);
        clearInterval(resend);
        if (this.socket === socket) this.socket = undefined;
        resolve();
      });
    });
  }

  private handle(frame: ServerFrame, beat: (afterMs: number) => void): void {
    switch (frame.type) {
      case "heartbeat_ack":
        beat(frame.payload.next_heartbeat_after_ms);
        return;
      case "process_offer":
        this.offered(frame.payload);
        return;
      case "process_accept_ack": {
        const journal = this.supervisor.journal(frame.payload.process_id);
        if (!journal || journal.phase !== "prepared") return;
        if (frame.payload.accepted) this.supervisor.start(journal);
        else this.supervisor.release(journal.process_id);
        return;
      }
      case "process_terminate":
        this.supervisor.terminate(frame.payload.process_id);
        return;
      case "action_offer":
        // An action taken on before is never applied again: its report is pending or on its way.
        if (this.actions.known(frame.payload.process_id, frame.payload.process_action_id)) return;
        this.pendingActions.set(frame.payload.process_action_id, frame.payload);
        this.send({ type: "action_accept", payload: { process_id: frame.payload.process_id, process_action_id: frame.payload.process_action_id } });
        return;
      case "action_accept_ack": {
        const offer = this.pendingActions.get(frame.payload.process_action_id);
        this.pendingActions.delete(frame.payload.process_action_id);
        if (offer && frame.payload.accepted && !this.actions.known(offer.process_id, offer.process_action_id)) void this.actions.apply(offer);
        return;
      }
      case "report_ack":
        if (frame.payload.ack_status !== "transient_error") this.acknowledged(frame.payload.report_id);
        return;
      case "runtime_ended":
        if (FATAL_END_CODES.has(frame.payload.error_code)) this.fatal = `svc ended this runtime: ${frame.payload.error_code}`;
        this.log.warn(`svc ended the runtime: ${frame.payload.error_code}`);
        return;
      case "error":
        this.log.warn(`svc: ${frame.payload.error_code}: ${frame.payload.error}`);
        return;
      case "skill_offer":
        this.skills.offer(frame.payload);
        return;
    }
  }

  /** An offer already taken on is never prepared again: an accepted one is running or has run. */
  private offered(offer: ProcessOffer): void {
    const known = this.supervisor.journal(offer.process_id);
    if (known && known.phase !== "prepared") return;
    if (!known) this.supervisor.prepare(offer);
    this.send({ type: "process_accept", payload: { process_id: offer.process_id } });
  }

  private acknowledged(reportId: string): void {
    const report = this.home.reports().find((r) => r.report_id === reportId);
    this.home.dropReport(reportId);
    const event = report?.event;
    if (event?.type === "process_finished") this.supervisor.finishAcknowledged(event.process_id);
    else if (event && event.type !== "process_started") {
      const record = this.supervisor.journal(event.process_id)?.actions?.find((a) => a.process_action_id === event.process_action_id);
      this.actions.acknowledged(event.process_id, event.process_action_id, record?.seq ?? 0);
    }
  }

  private flushOutbox(): void {
    for (const report of this.home.reports()) this.send({ type: "report", payload: report satisfies Report });
  }

  private send(frame: DaemonFrame): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
