import type { Tx } from "../platform/db/index.js";
import { markResolved, type InputRow } from "../modules/inputs/store.js";
import { appendEvent, openTurn, type AgentRow, type TurnRow } from "../modules/timeline/journal.js";
import type { AgentSignals } from "./signals.js";

/**
 * Admits waiting content inputs into a new turn (design brief §3.2): each becomes an opening
 * `agent_input` event keyed `agent_input:<input uuid>`, and the input is resolved. Every admission
 * opens a turn; steering admits all waiting steering inputs together, queued exactly one.
 */
export async function admitInputs(tx: Tx, signals: AgentSignals, agent: AgentRow, inputs: InputRow[]): Promise<TurnRow> {
  const turn = await openTurn(tx, agent.id);
  for (const input of inputs) {
    const event = await appendEvent(tx, signals, agent, {
      turnId: turn.id,
      kind: "agent_input",
      agentInputId: input.id,
      opening: true,
      semantic: true,
      marks: "prompt",
      idempotencyKey: `agent_input:${input.id}`,
    });
    await markResolved(tx, input.id, event.id);
  }
  return turn;
}
