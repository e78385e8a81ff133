/**
 * The load of the scale-out benchmark, shared by its shapes and its kill run: input senders and readers through
 * the balancer, over agents whose steps one SSE stream each counts.
 */
import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { sleep } from "./lib.js";
import { loop, timed, type Connections, type Recorder, type Steps, type Target } from "./load-clients.js";
import { owned, sendInputs } from "./load.js";
import type { Deployment } from "./scale-deployment.js";

/** Agents one input sender feeds in turn: enough senders that inputs never wait on a sender. */
export const AGENTS_PER_SENDER = 4;
const LAUNCH_STEPS_TIMEOUT_MS = 120_000;

/** Agents on a shape, ready: the project, its agents, their launch steps done and counted by one stream each. */
export interface Busy {
  deployment: Deployment;
  connections: Connections;
  target: Target;
  base: string;
  ids: string[];
  steps: Steps;
}

/** Waits (bounded) for every agent's launch step, then counts the steps done as the queue's start. */
export async function launchSteps(steps: Steps, agents: number): Promise<void> {
  const deadline = performance.now() + LAUNCH_STEPS_TIMEOUT_MS;
  while (steps.total() < agents && performance.now() < deadline) await sleep(50);
  if (steps.total() < agents) throw new Error(`only ${steps.total()}/${agents} launch steps within ${LAUNCH_STEPS_TIMEOUT_MS / 1000} s`);
  steps.settle();
}

/**
 * The load until `deadline`: one input sender per AGENTS_PER_SENDER agents, each agent kept two inputs ahead of its
 * steps, and `readers` closed-loop readers. `accepted` hears of every input svc took.
 */
export function drive(busy: Busy, clients: Recorder, deadline: number, readers: number, accepted?: (agent: number, text: string) => void): Array<Promise<unknown>> {
  const { connections, target, base, ids, steps } = busy;
  const senders = Math.max(1, Math.ceil(ids.length / AGENTS_PER_SENDER));
  return [
    ...Array.from({ length: senders }, (_, s) => sendInputs(clients, connections.open(), target, base, ids, steps, owned(s, senders, ids.length), deadline, accepted)),
    ...Array.from({ length: readers }, () => {
      const own = connections.open();
      return loop(deadline, () => read(clients, own, target, base, ids));
    }),
  ];
}

/** A page of 20 agents (40%), an agent's newest 50 events (40%), or /healthz (20%), through the balancer. */
function read(recorder: Recorder, dispatcher: Dispatcher, target: Target, base: string, ids: string[]) {
  const pick = Math.random();
  if (pick < 0.4) return timed(recorder, "list agents", dispatcher, target, `${base}/agents?limit=20`);
  if (pick < 0.8) {
    const id = ids[Math.floor(Math.random() * ids.length)]!;
    return timed(recorder, "events page", dispatcher, target, `${base}/agents/${id}/events?before_sequence=0&limit=50`);
  }
  return timed(recorder, "healthz", dispatcher, target, "/healthz");
}

/** Model steps recorded so far on the deployment's database: its `model_output` events. */
export async function modelOutputs(deployment: Deployment): Promise<number> {
  const [row] = await deployment.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_events WHERE event_kind = 'model_output'");
  return row?.n ?? 0;
}
