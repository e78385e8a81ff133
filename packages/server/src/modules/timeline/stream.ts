import { once } from "node:events";
import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { sseFrame, startSse } from "../../platform/http/sse.js";
import { withdrawnFrame, type AccessCheck, type AccessWatch } from "../../platform/http/access-watch.js";
import type { AgentSignals, ToolCallSignal } from "../../runtime/signals.js";
import { loadEventsBySequence, type AgentScope } from "./views.js";

/*
 * The live timeline over Server-Sent Events (reference design-brief.md §5). The database is the only source of
 * saved events: a stream subscribes to the agent's hints first, then reads every event after its
 * cursor, and reads again whenever a hint says something was committed. Because the subscription
 * exists before the first read, an event committed at any moment is either in a read or announced by
 * a hint that causes one; the cursor makes each event go out exactly once, in sequence order. Hints
 * are coalesced into one flag, so a burst of commits costs a few reads, not one per commit.
 *
 * Followers of one agent usually wake together and stand at the same cursor, so their reads are
 * shared: a follower joins a read of the same agent and cursor that is already running, provided that
 * read started after the follower's latest hint (it then sees the commit the hint announced). The
 * frames of a page are serialized once for all of them.
 *
 * Tool-call updates and model-output deltas are live-only: they travel in the hint itself, are queued
 * (bounded; the excess is dropped, as losing a preview is harmless) and are never replayed.
 */

const HEARTBEAT_MS = 25_000;
/** Events read per query; a full page is followed by another read at once. */
const PAGE_SIZE = 100;
const QUEUE_LIMIT = 4096;
/** A client that takes longer than this to accept more bytes is disconnected. */
const DRAIN_TIMEOUT_MS = 30_000;
/** Model calls whose final output this stream has sent; later deltas of them are stale previews. */
const REMEMBERED_CONTEXTS = 1024;

export interface EventStreamsOptions {
  db: Database;
  signals: AgentSignals;
  /** Quiet time after which a `: heartbeat` comment is sent; tests shorten it. */
  heartbeatMs?: number;
  /** Counts the streams open in this process (a metrics gauge). */
  subscribers?: { inc(): void; dec(): void };
  /** Re-checks each stream's caller while it is open (FollowOptions.access). */
  accessWatch?: AccessWatch;
}

export interface FollowOptions {
  /** The last sequence the client has; events after it are sent. */
  after: number;
  /** Whether to send `model_output_delta` previews. */
  deltas: boolean;
  /**
   * The first frame's data (`event: snapshot`), read once the stream has subscribed to the agent's hints,
   * so that any change after it reaches the client as a frame; absent, no snapshot is sent.
   */
  snapshot?: () => Promise<unknown>;
  /** Whether the caller may still read the agent; asked while the stream is open, which ends with an `error` frame when not. */
  access?: AccessCheck;
}

export interface EventStreams {
  /**
   * Streams `agent`'s timeline on `reply` until the client leaves or the server stops. Rejects with a
   * 503 before anything is sent when the hints cannot be subscribed to; afterwards it never rejects.
   */
  follow(reply: FastifyReply, agent: AgentScope, options: FollowOptions): Promise<void>;
  /** Ends every open stream (server shutdown); resolves once all have stopped. */
  closeAll(): Promise<void>;
}

export function createEventStreams(options: EventStreamsOptions): EventStreams {
  const { signals } = options;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const reads = new SharedReads(options.db);
  const running = new Map<Follower, Promise<void>>();
  let closing = false;

  // Followers asleep when a hint comes read without waking their loops. Their reads start together, once
  // every follower the hint reached has its hint (the bus hands one hint to all of them in one pass), so
  // followers at the same cursor share one read.
  const hinted: Follower[] = [];
  const readHinted = () => {
    for (const follower of hinted.splice(0)) follower.readWhileAsleep();
  };
  const readSoon = (follower: Follower) => {
    if (hinted.push(follower) === 1) queueMicrotask(readHinted);
  };

  // Hints may have been lost while the listening connection was down: every stream re-reads.
  signals.onReconnect(() => {
    for (const follower of running.keys()) follower.eventsCommitted();
  });

  // One ticker for every stream, rather than a timer per stream armed again after each write: with a
  // thousand followers of an agent, re-arming a thousand timers on every event delayed the last frames.
  const heartbeats = setInterval(() => {
    const now = Date.now();
    for (const follower of running.keys()) follower.heartbeatIfQuiet(now);
  }, Math.max(1, Math.floor(heartbeatMs / 4)));
  heartbeats.unref();

  return {
    async follow(reply, agent, followOptions) {
      if (closing) throw new AppError("service_unavailable", "the server is shutting down");
      const follower = new Follower(reply.raw, reply.log, heartbeatMs, reads, agent, readSoon);
      const unsubscribe: Array<() => void> = [];
      try {
        unsubscribe.push(await signals.onEvents(agent.id, () => follower.eventsCommitted()));
        unsubscribe.push(await signals.onToolCall(agent.id, (signal) => follower.toolCallChanged(signal)));
        if (followOptions.deltas) unsubscribe.push(await signals.onDelta(agent.id, (delta) => follower.deltaArrived(delta)));
      } catch (err) {
        for (const stop of unsubscribe) stop();
        throw new AppError("service_unavailable", "the event stream is temporarily unavailable", {}, err);
      }
      let first = "";
      try {
        // Read before the response starts, so that a failure is an ordinary error answer.
        if (followOptions.snapshot) first = sseFrame("snapshot", JSON.stringify(await followOptions.snapshot()));
      } catch (err) {
        for (const stop of unsubscribe) stop();
        throw err;
      }
      reply.hijack();
      options.subscribers?.inc();
      if (followOptions.access && options.accessWatch) unsubscribe.push(options.accessWatch.watch(followOptions.access, (refusal) => follower.end(withdrawnFrame(refusal))));
      const done = follower.run(followOptions.after, first).finally(() => {
        options.subscribers?.dec();
        running.delete(follower);
        for (const stop of unsubscribe) stop();
      });
      running.set(follower, done);
      await done;
    },

    async closeAll() {
      closing = true;
      clearInterval(heartbeats);
      const all = [...running.entries()];
      for (const [follower] of all) follower.stop.abort();
      await Promise.all(all.map(([, done]) => done));
    },
  };
}

/** A page of saved events, serialized once for every follower that reads it. */
interface EventPage {
  events: Array<{ sequence: number; frame: string; finishesContext?: string }>;
  full: boolean;
}

/** A follower waiting for a page: it writes the page out as soon as the page is loaded. */
interface PageReceiver {
  receive(page: EventPage): void;
  /** The read failed: the follower sends an error frame and ends. */
  fail(err: unknown): void;
}

/**
 * Single-flight reads of saved events. `clock` counts hints; a read remembers the count when it
 * started, and a follower may join it only if no hint reached that follower after that moment. The
 * page is handed to every follower that joined in one synchronous pass, as a broadcast loop would
 * write it: a thousand followers resuming one by one took three times as long to write it out.
 */
class SharedReads {
  private clock = 0;
  private readonly inflight = new Map<string, { startedAt: number; receivers: PageReceiver[]; done: Promise<void> }>();

  constructor(private readonly db: Database) {}

  /** Marks a hint's arrival; the value orders it against reads. */
  tick(): number {
    return ++this.clock;
  }

  /** Resolves once `receiver` was given the page of events after `after`, or told that the read failed; never rejects. */
  read(receiver: PageReceiver, agent: AgentScope, after: number, notBefore: number): Promise<void> {
    const key = `${agent.id}:${after}`;
    const running = this.inflight.get(key);
    if (running && running.startedAt >= notBefore) {
      running.receivers.push(receiver);
      return running.done;
    }
    const receivers = [receiver];
    const forget = () => {
      if (this.inflight.get(key) === entry) this.inflight.delete(key);
    };
    const entry = {
      startedAt: this.clock,
      receivers,
      done: this.load(agent, after).then(
        (page) => {
          // Forgotten first: a follower asking after this moment needs a read of its own.
          forget();
          for (const each of receivers) each.receive(page);
        },
        (err: unknown) => {
          forget();
          for (const each of receivers) each.fail(err);
        },
      ),
    };
    this.inflight.set(key, entry);
    return entry.done;
  }

  private async load(agent: AgentScope, after: number): Promise<EventPage> {
    const events = await loadEventsBySequence(this.db.read, agent, { after, limit: PAGE_SIZE });
    return {
      events: events.map((event) => ({
        sequence: event.sequence,
        frame: sseFrame(event.event_kind, JSON.stringify(event), String(event.sequence)),
        ...(event.event_kind === "model_output" ? { finishesContext: event.model_call_context_id } : {}),
      })),
      full: events.length === PAGE_SIZE,
    };
  }
}

/** One connection: its cursor, its pending work and the loop that writes it out. */
class Follower implements PageReceiver {
  readonly stop = new AbortController();
  private eventsPending = true;
  private readonly toolCalls: ToolCallSignal[] = [];
  private readonly deltas: unknown[] = [];
  private dropped = 0;
  private readonly finishedContexts = new Set<string>();
  private wakeUp: (() => void) | null = null;
  private lastWriteAt = 0;
  /** When the latest hint for this follower arrived, on the shared reads' clock. */
  private lastHint = 0;
  /** The last sequence written out. */
  private cursor = 0;
  /** The last page read was full: more events follow it at once. */
  private pageWasFull = false;
  /** The write of the page `receive` was given, when the socket did not take it at once. */
  private pageWrite: Promise<void> | undefined;
  /** A read started while the loop was asleep (`readWhileAsleep`); the loop waits for it before its own. */
  private reading: Promise<void> | undefined;
  /** Why the last read failed; the loop then sends an error frame and ends the stream. */
  private readFailure: { err: unknown } | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly log: FastifyBaseLogger,
    private readonly heartbeatMs: number,
    private readonly reads: SharedReads,
    private readonly agent: AgentScope,
    private readonly readSoon: (follower: Follower) => void,
  ) {}

  /** Ends the stream with `frame` last (its access was withdrawn). */
  end(frame: string): void {
    void this.write(frame);
    this.stop.abort();
  }

  /** Wakes the loop to send a heartbeat when nothing was written for `heartbeatMs`. */
  heartbeatIfQuiet(now: number): void {
    if (now - this.lastWriteAt >= this.heartbeatMs) this.wakeUp?.();
  }

  eventsCommitted(): void {
    this.lastHint = this.reads.tick();
    this.eventsPending = true;
    if (this.wakeUp !== null && this.reading === undefined) this.readSoon(this);
    else this.wakeUp?.();
  }

  /**
   * The common case of a hint: the loop is asleep with nothing else to send, so the page is read and
   * written (`receive`, in the shared read's pass) without resuming the loop; a thousand followers of an
   * agent then cost one pass over their sockets, not a thousand resumptions. Anything more (a full page,
   * a slow socket, another hint, live frames, a failure) wakes the loop.
   */
  readWhileAsleep(): void {
    if (this.wakeUp === null || this.reading !== undefined || !this.eventsPending || this.stop.signal.aborted) {
      this.wakeUp?.();
      return;
    }
    this.eventsPending = false;
    this.reading = this.reads.read(this, this.agent, this.cursor, this.lastHint);
  }

  toolCallChanged(signal: ToolCallSignal): void {
    this.enqueue(this.toolCalls, signal);
  }

  deltaArrived(delta: unknown): void {
    this.enqueue(this.deltas, delta);
  }

  private enqueue<T>(queue: T[], item: T): void {
    if (queue.length >= QUEUE_LIMIT) {
      this.dropped++;
      return;
    }
    queue.push(item);
    this.wakeUp?.();
  }

  /** Runs once subscribed: only reads that start from now on may be shared. `first` goes out before any event. */
  async run(after: number, first: string): Promise<void> {
    const { res } = this;
    this.lastHint = this.reads.tick();
    const onGone = () => this.stop.abort();
    res.on("close", onGone);
    res.on("error", onGone);
    const onAbort = () => this.wakeUp?.();
    this.stop.signal.addEventListener("abort", onAbort, { once: true });
    startSse(res);
    await this.write(`: ok\n\n${first}`);
    this.cursor = after;
    while (!this.stop.signal.aborted) {
      if (this.reading) await this.reading;
      if (this.readFailure) {
        this.log.warn({ err: this.readFailure.err }, "event stream: reading the timeline failed");
        await this.write(sseFrame("error", JSON.stringify({ error: "the event stream is temporarily unavailable", code: "service_unavailable" })));
        break;
      }
      await this.pageWritten();
      // Previews that arrived before this read go out before the events it finds: a model call's last
      // previews are committed with its output, and their hint comes first. Later ones wait a round,
      // when an output already sent makes them stale.
      const previews = this.takePreviews();
      if (previews) await this.write(previews);
      if (this.eventsPending || this.pageWasFull) {
        // Cleared before reading: a hint arriving during the read asks for another one.
        this.eventsPending = false;
        await this.reads.read(this, this.agent, this.cursor, this.lastHint);
        if (this.readFailure) continue;
        await this.pageWritten();
      }
      if (this.toolCalls.length > 0) {
        let updates = "";
        for (const signal of this.toolCalls.splice(0)) {
          updates += sseFrame("tool_call_update", JSON.stringify({ tool_call_id: signal.toolCallId, state: signal.state }));
        }
        await this.write(updates);
      }
      // Nothing may await between this check and the wait, or a wake-up could be missed.
      if (this.stop.signal.aborted || this.eventsPending || this.pageWasFull || this.toolCalls.length > 0 || this.deltas.length > 0) continue;
      if (Date.now() - this.lastWriteAt >= this.heartbeatMs) await this.write(": heartbeat\n\n");
      else await this.sleep();
    }
    res.off("close", onGone);
    res.off("error", onGone);
    this.stop.signal.removeEventListener("abort", onAbort);
    if (this.dropped > 0) this.log.debug({ dropped: this.dropped }, "event stream: live frames dropped on a full queue");
    if (!res.destroyed && !res.writableEnded) res.end();
  }

  /** A page `receive` wrote that the socket did not take at once. */
  private async pageWritten(): Promise<void> {
    const writing = this.pageWrite;
    this.pageWrite = undefined;
    if (writing) await writing;
  }

  fail(err: unknown): void {
    this.readFailure = { err };
    this.readDone();
  }

  /** After a read started while asleep: the loop wakes only when there is more to do than that page. */
  private readDone(): void {
    if (this.reading === undefined) return;
    this.reading = undefined;
    const more = this.readFailure || this.pageWrite || this.pageWasFull || this.eventsPending || this.toolCalls.length > 0 || this.deltas.length > 0;
    if (more) this.wakeUp?.();
  }

  /** Writes a page as soon as it is loaded, in the shared read's pass over every follower that joined it. */
  receive(page: EventPage): void {
    // A read that began before a model call's output committed can still return that output: the
    // previews that came with the commit are queued by now and must precede it, or they would be stale.
    let out = page.events.length > 0 ? this.takePreviews() : "";
    for (const event of page.events) {
      out += event.frame;
      if (event.finishesContext !== undefined) this.rememberFinished(event.finishesContext);
      this.cursor = event.sequence;
    }
    this.pageWasFull = page.full;
    if (out) {
      try {
        this.pageWrite = this.write(out);
      } catch (err) {
        // One broken connection must not keep the page from the followers after it in the pass.
        this.log.info({ err }, "event stream: writing failed; disconnecting");
        this.stop.abort();
      }
    }
    this.readDone();
  }

  private rememberFinished(contextId: string): void {
    this.finishedContexts.add(contextId);
    // Sets iterate in insertion order: the first entry is the oldest.
    if (this.finishedContexts.size > REMEMBERED_CONTEXTS) this.finishedContexts.delete(this.finishedContexts.values().next().value!);
  }

  /** The queued previews as frames, leaving out the stale ones. */
  private takePreviews(): string {
    let frames = "";
    for (const delta of this.deltas.splice(0)) {
      if (!this.isStale(delta)) frames += sseFrame("model_output_delta", JSON.stringify(delta));
    }
    return frames;
  }

  /** A delta of a model call whose final output was already sent: the output replaced the preview. */
  private isStale(delta: unknown): boolean {
    const contextId = typeof delta === "object" && delta !== null ? (delta as { model_call_context_id?: unknown }).model_call_context_id : undefined;
    return typeof contextId === "string" && this.finishedContexts.has(contextId);
  }

  /**
   * Writes with backpressure: a slow client is waited for, up to DRAIN_TIMEOUT_MS, then dropped. The
   * usual case (the socket took the bytes) returns no promise: a thousand followers of one agent
   * write one after another, and each await between them would delay the frames of all the others.
   */
  private write(chunk: string): Promise<void> | undefined {
    if (this.stop.signal.aborted) return undefined;
    this.lastWriteAt = Date.now();
    if (this.res.write(chunk)) return undefined;
    return this.drain();
  }

  private async drain(): Promise<void> {
    try {
      await once(this.res, "drain", { signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(DRAIN_TIMEOUT_MS)]) });
    } catch {
      if (!this.stop.signal.aborted) this.log.info("event stream: the client stopped reading; disconnecting");
      this.stop.abort();
      this.res.destroy();
    }
  }

  /**
   * Waits for a hint, a live frame, the end of the stream or the heartbeat ticker. Nothing is armed per
   * wait: the abort listener is registered once in `run`, and the ticker is shared by every stream.
   */
  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = () => {
        this.wakeUp = null;
        resolve();
      };
    });
  }
}
