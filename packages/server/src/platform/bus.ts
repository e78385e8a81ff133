import type { NotificationTransport } from "./db/index.js";

export type BusHandler = (payload: string) => void;

/**
 * Hints between processes over PostgreSQL LISTEN/NOTIFY. A hint says "go and re-read": it carries no
 * state that matters and may be lost (a reconnect reports that). A hint about a change is a NOTIFY inside
 * the change's transaction (see runtime/signals.ts), which PostgreSQL delivers only on commit. Many
 * in-process subscribers share one LISTEN per channel.
 */
export interface Bus {
  subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>>;
  publish(channel: string, payload?: string): Promise<void>;
  /** Runs after notifications may have been missed (a lost listening connection came back). */
  onReconnect(handler: () => void): void;
}

export function createBus(transport: NotificationTransport, onError: (err: unknown) => void = () => {}): Bus {
  const subscribers = new Map<string, Set<BusHandler>>();

  function deliver(channel: string, payload: string): void {
    for (const handler of subscribers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (err) {
        onError(err);
      }
    }
  }

  const bus: Bus = {
    async subscribe(channel, handler) {
      let handlers = subscribers.get(channel);
      if (!handlers) {
        handlers = new Set();
        subscribers.set(channel, handlers);
        handlers.add(handler);
        try {
          await transport.listen(channel, (payload) => deliver(channel, payload));
        } catch (err) {
          subscribers.delete(channel);
          throw err;
        }
      } else {
        handlers.add(handler);
      }
      return async () => {
        const current = subscribers.get(channel);
        if (!current?.delete(handler) || current.size > 0) return;
        subscribers.delete(channel);
        await transport.unlisten(channel);
      };
    },

    publish(channel, payload = "") {
      return transport.notify(channel, payload);
    },

    onReconnect(handler) {
      transport.onReconnect(handler);
    },
  };
  return bus;
}
