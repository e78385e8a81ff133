import pg from "pg";
import type { NotificationTransport } from "./types.js";

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * LISTEN on a dedicated connection (a pooled one would drop its LISTENs when returned). When that
 * connection fails it is re-opened with capped backoff, every channel is listened to again, and the
 * reconnect handlers run so subscribers re-read what they may have missed. NOTIFY goes through the pool.
 */
export function createListener(url: string, pool: pg.Pool): NotificationTransport & { close(): Promise<void> } {
  const channels = new Map<string, (payload: string) => void>();
  const reconnectHandlers: Array<() => void> = [];
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;

  function connect(): Promise<pg.Client> {
    if (client) return Promise.resolve(client);
    connecting ??= open().finally(() => (connecting = undefined));
    return connecting;
  }

  async function open(): Promise<pg.Client> {
    const next = new pg.Client({ connectionString: url });
    next.on("notification", (message) => channels.get(message.channel)?.(message.payload ?? ""));
    next.on("error", () => lost(next));
    next.on("end", () => lost(next));
    await next.connect();
    for (const channel of channels.keys()) await next.query(`LISTEN ${quote(channel)}`);
    client = next;
    return next;
  }

  function lost(which: pg.Client, attempt = 0): void {
    if (client !== which && attempt === 0) return;
    client = undefined;
    which.removeAllListeners();
    void which.end().catch(() => {});
    if (closed || retryTimer) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempt);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (closed) return;
      connect().then(
        () => reconnectHandlers.forEach((handler) => handler()),
        () => lost(which, attempt + 1),
      );
    }, delay);
    retryTimer.unref();
  }

  // One query at a time on the listening connection: node-postgres queues overlapping ones, but that
  // use is deprecated (and warns), and subscriptions often come in bursts (a worker's channels at start).
  let subscriptions: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const next = subscriptions.then(work, work);
    subscriptions = next.catch(() => {});
    return next;
  };

  return {
    async listen(channel, deliver) {
      channels.set(channel, deliver);
      await inTurn(async () => (await connect()).query(`LISTEN ${quote(channel)}`));
    },
    async unlisten(channel) {
      channels.delete(channel);
      await inTurn(async () => client?.query(`UNLISTEN ${quote(channel)}`)).catch(() => {});
    },
    async notify(channel, payload) {
      await pool.query("SELECT pg_notify($1, $2)", [channel, payload]);
    },
    onReconnect(handler) {
      reconnectHandlers.push(handler);
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      current?.removeAllListeners();
      await current?.end().catch(() => {});
    },
  };
}

function quote(channel: string): string {
  if (!/^[a-z0-9_]{1,63}$/.test(channel)) throw new Error(`invalid notification channel "${channel}"`);
  return `"${channel}"`;
}
