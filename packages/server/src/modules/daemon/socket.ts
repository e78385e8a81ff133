import { DaemonFrame, type RuntimeEndCode, type ServerFrame } from "@svc/protocol";
import type { FastifyBaseLogger } from "fastify";
import type { WebSocket } from "ws";
import type { Bus } from "../../platform/bus.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { parseJsonWithin } from "../../platform/http/json-depth.js";
import { validatorCompiler } from "../../platform/http/validation.js";
import { DAEMON_WORK_CHANNEL } from "../../runtime/store/processes.js";
import { DAEMON_CHANNEL } from "../machines/store.js";
import { HEARTBEAT_MS, type DaemonService } from "./service.js";

/*
 * The server's end of a runtime's WebSocket (reference design-brief.md §7). Frames are JSON `{type, payload}`, at most
 * 1 MiB, handled one at a time in order. svc pings every 20 s and drops a daemon silent for 70 s. A hint on
 * `svc_daemon_work` (work queued for the machine) makes the session offer work; one on
 * `svc_machine_daemons` (token revoked, machine deleted, runtime replaced) makes it check that it may go
 * on, and otherwise send `runtime_ended` and close. Every heartbeat re-checks both, so a lost hint costs at
 * most one heartbeat interval.
 */

const PING_MS = 20_000;
const READ_TIMEOUT_MS = 70_000;
/** Close codes in the private range: the runtime ended, or the daemon broke the protocol. */
const CLOSE_ENDED = 4000;
const CLOSE_PROTOCOL = 4002;

const checkFrame = validatorCompiler({ schema: DaemonFrame, httpPart: "body", method: "GET", url: "/daemon/runtimes/socket" }) as (value: unknown) => boolean;

/** The sessions of this process by machine, and one LISTEN per channel for all of them. */
export function createDaemonHub(bus: Bus, log: FastifyBaseLogger) {
  const sessions = new Map<string, Set<DaemonSession>>();
  let listening: Promise<Array<() => Promise<void>>> | undefined;
  const each = (machineId: string, run: (session: DaemonSession) => void) => sessions.get(machineId)?.forEach(run);
  const all = (run: (session: DaemonSession) => void) => sessions.forEach((set) => set.forEach(run));

  function listen() {
    if (!listening) {
      listening = Promise.all([bus.subscribe(DAEMON_CHANNEL, (id) => each(id, (s) => s.recheck())), bus.subscribe(DAEMON_WORK_CHANNEL, (id) => each(id, (s) => s.drain()))]);
      // Hints may have been missed while the listening connection was away.
      bus.onReconnect(() =>
        all((s) => {
          s.recheck();
          s.drain();
        }),
      );
    }
    return listening;
  }

  return {
    async add(session: DaemonSession): Promise<void> {
      await listen();
      let set = sessions.get(session.machineId);
      if (!set) sessions.set(session.machineId, (set = new Set()));
      set.add(session);
    },
    remove(session: DaemonSession): void {
      const set = sessions.get(session.machineId);
      set?.delete(session);
      if (set?.size === 0) sessions.delete(session.machineId);
    },
    /** On shutdown: every socket closes; its daemon reconnects to another replica, or to svc when it is back. */
    async close(): Promise<void> {
      all((s) => s.close(1001, "svc is shutting down"));
      for (const unsubscribe of (await listening) ?? []) await unsubscribe().catch((err: unknown) => log.warn({ err }, "unlisten failed"));
    },
  };
}

export type DaemonHub = ReturnType<typeof createDaemonHub>;

export class DaemonSession {
  readonly machineId: string;
  private readonly offered = new Set<string>();
  private readonly offeredActions = new Set<string>();
  private readonly terminated = new Set<string>();
  private readonly offeredSkills = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private readonly ping: NodeJS.Timeout;
  private silence: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly daemon: DaemonPrincipal,
    private readonly runtimeId: string,
    private readonly service: DaemonService,
    private readonly hub: DaemonHub,
    private readonly log: FastifyBaseLogger,
  ) {
    this.machineId = daemon.machineId;
    this.ping = setInterval(() => socket.ping(), PING_MS);
    this.heard();
    socket.on("message", (data, isBinary) => {
      this.heard();
      if (isBinary) return this.close(CLOSE_PROTOCOL, "frames are JSON text");
      this.enqueue(() => this.handle(String(data)));
    });
    socket.on("pong", () => this.heard());
    socket.on("close", () => this.dispose());
    socket.on("error", (err) => log.warn({ err, runtimeId }, "daemon socket error"));
  }

  async start(): Promise<void> {
    await this.hub.add(this);
    if (this.closed) this.hub.remove(this);
    else this.drain();
  }

  /**
   * Offers queued work not yet offered on this connection, and asks once per connection to terminate
   * processes whose call was canceled (a cancel sends no hint: the next heartbeat finds them).
   */
  drain(): void {
    this.enqueue(async () => {
      for (const offer of await this.service.offers(this.daemon, [...this.offered])) {
        this.offered.add(offer.process_id);
        this.send({ type: "process_offer", payload: offer });
      }
      for (const offer of await this.service.actionOffers(this.daemon, [...this.offeredActions])) {
        this.offeredActions.add(offer.process_action_id);
        this.send({ type: "action_offer", payload: offer });
      }
      for (const processId of await this.service.terminations(this.daemon)) {
        if (this.terminated.has(processId)) continue;
        this.terminated.add(processId);
        this.send({ type: "process_terminate", payload: { process_id: processId } });
      }
      for (const offer of await this.service.skillOffers(this.daemon, [...this.offeredSkills])) {
        this.offeredSkills.add(offer.request_id);
        this.send({ type: "skill_offer", payload: offer });
      }
    });
  }

  recheck(): void {
    this.enqueue(async () => this.endIf(await this.service.endCode(this.daemon, this.runtimeId)));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    this.dispose();
  }

  private async handle(text: string): Promise<void> {
    let frame: unknown;
    try {
      frame = parseJsonWithin(text);
    } catch {
      frame = undefined;
    }
    if (!checkFrame(frame)) return this.send({ type: "error", payload: { error_code: "invalid_request", error: "not a daemon frame: {type, payload} of heartbeat, process_accept, action_accept, report or skill_report" } });
    const parsed = frame as DaemonFrame;
    if (parsed.type === "skill_report") return this.service.skillReport(this.daemon, parsed.payload);
    if (parsed.type === "action_accept") {
      const answer = await this.service.acceptAction(this.daemon, this.runtimeId, parsed.payload.process_action_id);
      // Refused: it may be offered again on this connection once it is its turn.
      if (!answer.accepted) this.offeredActions.delete(parsed.payload.process_action_id);
      return this.send({ type: "action_accept_ack", payload: { ...parsed.payload, ...answer } });
    }
    const { type, payload } = parsed;
    if (type === "heartbeat") {
      const code = await this.service.heartbeat(this.daemon, this.runtimeId);
      if (code) return this.endIf(code);
      this.send({ type: "heartbeat_ack", payload: { next_heartbeat_after_ms: HEARTBEAT_MS } });
      // A lost work hint is made up here.
      return this.drain();
    }
    if (type === "process_accept") {
      const answer = await this.service.accept(this.daemon, this.runtimeId, payload.process_id);
      return this.send({ type: "process_accept_ack", payload: { process_id: payload.process_id, ...answer } });
    }
    if (type === "report") {
      const ackStatus = await this.service.report(this.daemon, payload.event);
      this.send({ type: "report_ack", payload: { report_id: payload.report_id, ack_status: ackStatus } });
    }
  }

  private endIf(code: RuntimeEndCode | null): void {
    if (!code) return;
    this.send({ type: "runtime_ended", payload: { error_code: code } });
    this.close(CLOSE_ENDED, code);
  }

  /** One frame or hint at a time, in order; a failure is answered as transient and the session goes on. */
  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.closed) return;
      try {
        await work();
      } catch (err) {
        this.log.warn({ err, runtimeId: this.runtimeId }, "daemon frame failed");
        this.send({ type: "error", payload: { error_code: "service_unavailable", error: "svc could not handle the frame; it will be retried" } });
      }
    });
  }

  private heard(): void {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => this.close(CLOSE_PROTOCOL, "no frame or pong for 70 s"), READ_TIMEOUT_MS);
  }

  private send(frame: ServerFrame): void {
    if (!this.closed && this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    clearTimeout(this.silence);
    this.hub.remove(this);
  }
}
