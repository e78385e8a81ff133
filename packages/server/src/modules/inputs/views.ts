import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { InputRow } from "../../runtime/store/inputs.js";

export function agentInputView(row: InputRow) {
  return {
    id: encodeId("agentInput", row.id),
    agent_id: encodeId("agent", row.agentId),
    state: row.state,
    delivery_mode: row.deliveryMode as "queued" | "steering" | "immediate",
    input_kind: row.inputKind as "content" | "control" | "interaction_response" | "config_change",
    ...(row.actorId ? { actor_id: encodeId("actor", row.actorId) } : {}),
    ...(row.inputIdempotencyKey !== null ? { input_idempotency_key: row.inputIdempotencyKey } : {}),
    content_blocks: row.contentBlocks as never[],
    queued_at: iso(row.queuedAt),
  };
}
