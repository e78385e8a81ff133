import { sql, type SQL } from "drizzle-orm";
import type { Bus } from "../platform/bus.js";
import type { Tx } from "../platform/db/index.js";

/**
 * Per-agent hints carried over the bus. Each kind uses one channel for all agents, so a process holds
 * one LISTEN per kind however many agents it follows, and dispatches locally by agent id. Every hint
 * means "re-read the database"; losing one delays, never loses, work (DESIGN.md rule 2). Hints about a
 * change are sent inside its transaction (PostgreSQL delivers a NOTIFY only on commit), most of them
 * as part of the statement that makes the change (`notifyIn`).
 */

const CHANNELS = {
  events: "svc_agent_events",
  toolCalls: "svc_tool_calls",
  deltas: "svc_model_deltas",
  wakeups: "svc_agent_wakeups",
  control: "svc_worker_control",
  /** Sent by database triggers (migration 0005) when grants, provider configs or secrets change. */
  modelAccess: "svc_model_access",
} as const;

/** NOTIFY payloads are capped at 8000 bytes; deltas larger than this are split before publishing. */
export const MAX_SIGNAL_PAYLOAD = 7000;

export interface ToolCallSignal {
  toolCallId: string;
  state: string;
}

type Listener<T> = (value: T) => void;

export interface AgentSignals {
  /** On commit: tool calls of the agent changed state (one statement for all of them; none for an empty list). */
  toolCallsChanged(tx: Tx, agentId: string, signals: ToolCallSignal[]): Promise<void>;
  /** On commit: the runtime working on this agent should stop what it is doing. */
  cancel(tx: Tx, agentId: string): Promise<void>;
  /** Immediately, no transaction: a live preview, lost when nobody listens. */
  publishDelta(agentId: string, envelope: unknown): Promise<void>;

  onEvents(agentId: string, listener: Listener<void>): Promise<() => void>;
  onToolCall(agentId: string, listener: Listener<ToolCallSignal>): Promise<() => void>;
  onDelta(agentId: string, listener: Listener<unknown>): Promise<() => void>;
  onWakeup(listener: Listener<string>): Promise<() => void>;
  /**
   * Any agent's timeline or tool calls changed, or it was woken: the agent's id, for views of many agents
   * (a project's activity stream). Every process that follows one sees every agent's hints.
   */
  onAnyAgent(listener: Listener<string>): Promise<() => void>;
  onCancel(listener: Listener<string>): Promise<() => void>;
  /** Model grants, provider configs or secrets changed somewhere: cached endpoints are stale. */
  onModelAccessChanged(listener: () => void): Promise<() => void>;
  /** Called when notifications may have been missed; listeners should re-read. */
  onReconnect(listener: () => void): void;
}

export function createAgentSignals(bus: Bus): AgentSignals {
  const perAgent = new Map<string, Map<string, Set<Listener<unknown>>>>();
  /** Per channel, listeners told the agent id of every message (onAnyAgent). */
  const anyAgent = new Map<string, Set<Listener<string>>>();
  const subscribed = new Map<string, Promise<unknown>>();

  async function ensureChannel(channel: string, decode: (payload: string) => { agentId: string; value: unknown } | null) {
    let ready = subscribed.get(channel);
    if (!ready) {
      ready = bus.subscribe(channel, (payload) => {
        const message = decode(payload);
        if (!message) return;
        for (const listener of perAgent.get(channel)?.get(message.agentId) ?? []) listener(message.value);
        for (const listener of anyAgent.get(channel) ?? []) listener(message.agentId);
      });
      subscribed.set(channel, ready);
      ready.catch(() => subscribed.delete(channel));
    }
    await ready;
  }

  async function listen<T>(channel: string, agentId: string, listener: Listener<T>, decode: (payload: string) => { agentId: string; value: unknown } | null) {
    await ensureChannel(channel, decode);
    let agents = perAgent.get(channel);
    if (!agents) perAgent.set(channel, (agents = new Map()));
    let listeners = agents.get(agentId);
    if (!listeners) agents.set(agentId, (listeners = new Set()));
    const entry = listener as Listener<unknown>;
    listeners.add(entry);
    return () => {
      listeners.delete(entry);
      if (listeners.size === 0) agents.delete(agentId);
    };
  }

  async function listenAny(channel: string, listener: Listener<string>, decode: (payload: string) => { agentId: string; value: unknown } | null) {
    await ensureChannel(channel, decode);
    let listeners = anyAgent.get(channel);
    if (!listeners) anyAgent.set(channel, (listeners = new Set()));
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }

  const plain = (payload: string) => ({ agentId: payload, value: undefined });
  const json = (payload: string) => {
    try {
      const message = JSON.parse(payload) as { a: string; v: unknown };
      return { agentId: message.a, value: message.v };
    } catch {
      return null;
    }
  };
  const ALL = "*";
  // Workers and the control channel listen for every agent: the decoder files every message under one key.
  const onWakeup = (listener: Listener<string>) => listen<string>(CHANNELS.wakeups, ALL, listener, (payload) => ({ agentId: ALL, value: payload }));

  return {
    toolCallsChanged: async (tx, agentId, signals) => {
      if (signals.length > 0) await tx.execute(sql`SELECT ${notifyIn.toolCalls(agentId, signals)}`);
    },
    cancel: async (tx, agentId) => void (await tx.execute(sql`SELECT pg_notify(${CHANNELS.control}, ${agentId}::text)`)),
    publishDelta: (agentId, envelope) => bus.publish(CHANNELS.deltas, JSON.stringify({ a: agentId, v: envelope })),
    onEvents: (agentId, listener) => listen(CHANNELS.events, agentId, listener, plain),
    onToolCall: (agentId, listener) => listen(CHANNELS.toolCalls, agentId, listener, json),
    onDelta: (agentId, listener) => listen(CHANNELS.deltas, agentId, listener, json),
    onWakeup,
    onAnyAgent: async (listener) => {
      const stops = [
        await listenAny(CHANNELS.events, listener, plain),
        await listenAny(CHANNELS.toolCalls, listener, json),
        await onWakeup(listener),
      ];
      return () => stops.forEach((stop) => stop());
    },
    onCancel: (listener) => listen<string>(CHANNELS.control, ALL, listener, (payload) => ({ agentId: ALL, value: payload })),
    onModelAccessChanged: (listener) => listen<string>(CHANNELS.modelAccess, ALL, () => listener(), (payload) => ({ agentId: ALL, value: payload })),
    onReconnect: (listener) => bus.onReconnect(listener),
  };
}

/**
 * The same hints as SQL expressions, for statements that write and notify at once: a NOTIFY issued
 * inside a transaction is delivered only when it commits, so it costs no statement of its own.
 */
export const notifyIn = {
  events: (agentId: string): SQL => sql`pg_notify(${CHANNELS.events}, ${agentId}::text)`,
  wakeup: (agentId: string): SQL => sql`pg_notify(${CHANNELS.wakeups}, ${agentId}::text)`,
  /** A wakeup hint for the agent whose id is `agentIdColumn`, an expression of the statement (one per row). */
  wakeupOf: (agentIdColumn: SQL): SQL => sql`pg_notify(${CHANNELS.wakeups}, ${agentIdColumn}::text)`,
  /** A cancel for the agent whose id is `agentIdColumn`, an expression of the statement (one per row). */
  cancelOf: (agentIdColumn: SQL): SQL => sql`pg_notify(${CHANNELS.control}, ${agentIdColumn}::text)`,
  /** One notification per payload, in order, as a count (0 for an empty list). */
  toolCalls: (agentId: string, signals: ToolCallSignal[]): SQL =>
    eachOf(CHANNELS.toolCalls, signals.map((v) => JSON.stringify({ a: agentId, v }))),
  deltas: (agentId: string, envelopes: unknown[]): SQL => eachOf(CHANNELS.deltas, envelopes.map((v) => JSON.stringify({ a: agentId, v }))),
};

function eachOf(channel: string, payloads: string[]): SQL {
  if (payloads.length === 0) return sql`0`;
  return sql`(SELECT count(pg_notify(${channel}, p)) FROM json_array_elements_text(${JSON.stringify(payloads)}::json) AS p)`;
}
