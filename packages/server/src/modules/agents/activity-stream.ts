import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { sseFrame, startSse } from "../../platform/http/sse.js";
import { withdrawnFrame, type AccessCheck, type AccessWatch } from "../../platform/http/access-watch.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { agentsInProjects } from "./store.js";
import { agentView } from "./views.js";

/*
 * A project's agents as they change (docs/agents.md, "Following a project's agents"): an `agent` frame, the
 * agent as the list shows it, whenever one of the project's agents changes what it is doing. The engine
 * writes nothing for it: the hints it already sends (events, tool calls, wakeups) name the agent; a process
 * with followers gathers the agents named for WINDOW_MS, reads those of a followed project in one
 * statement, and sends each follower the agents whose view changed since it last sent them. The stream
 * carries changes, not the list: a client reads the list when it connects, and again on a `resync` frame,
 * sent when hints may have been lost (the listening connection came back) or a read failed.
 */

const WINDOW_MS = 200;
const HEARTBEAT_MS = 25_000;
/** Agents read per statement when a window named many. */
const READ_BATCH = 500;
/** A client this far behind (bytes queued in its socket) is disconnected; it reconnects and reads the list. */
const MAX_QUEUED_BYTES = 1 << 20;
/** Views remembered per follower to leave out unchanged ones; the oldest is forgotten first. */
const REMEMBERED_VIEWS = 4096;

export interface ActivityStreamsOptions {
  db: Database;
  signals: AgentSignals;
  log: FastifyBaseLogger;
  /** How long hints are gathered before a read; tests may shorten it. */
  windowMs?: number;
  /** Quiet time after which a `: heartbeat` comment is sent. */
  heartbeatMs?: number;
  /** Re-checks each stream's caller while it is open (`follow`'s `access`). */
  accessWatch?: AccessWatch;
}

export interface ProjectScope {
  orgId: string;
  projectId: string;
}

export interface ActivityStreams {
  /**
   * Streams the project's agent changes on `reply` until the client leaves or the server stops; 503 before
   * anything is sent when hints cannot be subscribed to. `access` is asked while it is open, and the stream
   * ends with an `error` frame when the caller may no longer read the project's agents.
   */
  follow(reply: FastifyReply, project: ProjectScope, access?: AccessCheck): Promise<void>;
  /** Ends every open stream (server shutdown); resolves once all have stopped. */
  closeAll(): Promise<void>;
}

export function createActivityStreams(options: ActivityStreamsOptions): ActivityStreams {
  const { db, signals, log } = options;
  const windowMs = options.windowMs ?? WINDOW_MS;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const followers = new Map<string, Set<ProjectFollower>>();
  const named = new Set<string>();
  let window: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();
  let subscription: Promise<() => void> | undefined;
  let closing = false;

  const everyFollower = () => [...followers.values()].flatMap((set) => [...set]);

  const hinted = (agentId: string) => {
    if (followers.size === 0) return;
    named.add(agentId);
    window ??= setTimeout(readNamed, windowMs);
  };

  function readNamed(): void {
    window = undefined;
    const ids = [...named];
    named.clear();
    reading = reading.then(() => sendChanges(ids));
  }

  async function sendChanges(ids: string[]): Promise<void> {
    const projectIds = [...followers.keys()];
    if (projectIds.length === 0) return;
    try {
      for (let start = 0; start < ids.length; start += READ_BATCH) {
        for (const row of await agentsInProjects(db.read, projectIds, ids.slice(start, start + READ_BATCH))) {
          const data = JSON.stringify(agentView(row));
          for (const follower of followers.get(row.agent.projectId) ?? []) follower.send(row.agent.id, data);
        }
      }
    } catch (err) {
      log.warn({ err }, "project activity stream: reading the agents failed; followers read the list again");
      for (const follower of everyFollower()) follower.resync();
    }
  }

  // Hints may have been lost while the listening connection was down.
  signals.onReconnect(() => {
    for (const follower of everyFollower()) follower.resync();
  });

  const heartbeats = setInterval(() => {
    const now = Date.now();
    for (const follower of everyFollower()) follower.heartbeatIfQuiet(now, heartbeatMs);
  }, Math.max(1, Math.floor(heartbeatMs / 4)));
  heartbeats.unref();

  async function subscribe(): Promise<void> {
    subscription ??= signals.onAnyAgent(hinted);
    try {
      await subscription;
    } catch (err) {
      subscription = undefined;
      throw new AppError("service_unavailable", "the activity stream is temporarily unavailable", {}, err);
    }
  }

  return {
    async follow(reply, project, access) {
      if (closing) throw new AppError("service_unavailable", "the server is shutting down");
      await subscribe();
      reply.hijack();
      const follower = new ProjectFollower(reply.raw, reply.log);
      let set = followers.get(project.projectId);
      if (!set) followers.set(project.projectId, (set = new Set()));
      set.add(follower);
      const unwatch = access && options.accessWatch?.watch(access, (refusal) => follower.end(withdrawnFrame(refusal)));
      try {
        await follower.run();
      } finally {
        unwatch?.();
        set.delete(follower);
        if (set.size === 0 && followers.get(project.projectId) === set) followers.delete(project.projectId);
      }
    },

    async closeAll() {
      closing = true;
      clearInterval(heartbeats);
      clearTimeout(window);
      const all = everyFollower();
      for (const follower of all) follower.end();
      await Promise.all(all.map((follower) => follower.done));
      await reading;
      const unsubscribe = await subscription?.catch(() => undefined);
      unsubscribe?.();
    },
  };
}

/** One connection: the views it was last sent, by agent, and its socket. */
class ProjectFollower {
  private readonly sent = new Map<string, string>();
  private lastWriteAt = 0;
  private finish: () => void = () => {};
  readonly done = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(
    private readonly res: ServerResponse,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Writes the stream's head and resolves when the client leaves or `end` is called. */
  async run(): Promise<void> {
    this.res.on("close", this.finish);
    this.res.on("error", this.finish);
    startSse(this.res);
    this.write(": ok\n\n");
    await this.done;
    this.res.off("close", this.finish);
    this.res.off("error", this.finish);
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  send(agentId: string, data: string): void {
    if (this.sent.get(agentId) === data) return;
    // Re-inserted so that the map's first entry is the one sent longest ago.
    this.sent.delete(agentId);
    this.sent.set(agentId, data);
    if (this.sent.size > REMEMBERED_VIEWS) this.sent.delete(this.sent.keys().next().value!);
    this.write(sseFrame("agent", data));
  }

  resync(): void {
    this.sent.clear();
    this.write(sseFrame("resync", "{}"));
  }

  heartbeatIfQuiet(now: number, heartbeatMs: number): void {
    if (now - this.lastWriteAt >= heartbeatMs) this.write(": heartbeat\n\n");
  }

  /** Ends the stream, with `frame` last when given (its access was withdrawn). */
  end(frame?: string): void {
    if (frame) this.write(frame);
    this.finish();
  }

  private write(chunk: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.lastWriteAt = Date.now();
    this.res.write(chunk);
    if (this.res.writableLength > MAX_QUEUED_BYTES) {
      this.log.info("project activity stream: the client stopped reading; disconnecting");
      this.res.destroy();
    }
  }
}
