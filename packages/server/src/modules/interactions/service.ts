import type { Static } from "typebox";
import { AppError, invalidRequest, notFound } from "../../platform/errors.js";
import type { Database, Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { jsonDigest } from "../../platform/json.js";
import { markWakeup } from "../../runtime/wakeups.js";
import { resolveInputActor } from "../actors/service.js";
import { requireAgent } from "../agents/access.js";
import { insertInput } from "../../runtime/store/inputs.js";
import { appendEvent, lockAgent, type AgentRow } from "../../runtime/store/journal.js";
import { completeToolCall, setToolCallState, textBlock } from "../../runtime/store/tool-calls.js";
import { findToolCall } from "../tools/store.js";
import type { InteractionAnswer, ResolveAgentInteractionRequest } from "./schemas.js";
import * as store from "../../runtime/store/interactions.js";

type Answer = Static<typeof InteractionAnswer>;
type ResolveBody = Static<typeof ResolveAgentInteractionRequest>;

/** Option 0 of a permission request allows the call, option 1 denies it. */
export const ALLOW = 0;

export function createInteractionsService(deps: { db: Database }) {
  const { db } = deps;

  async function list(principal: Principal, orgId: string, projectId: string, agentId: string, state: string | undefined, page: { limit: number; cursor?: string }) {
    const { agent } = await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.read");
    const rows = await store.listInteractions(db.read, agentId, state, { ...page, sort: "created_at" });
    return { agent, rows };
  }

  /** The API's answer: the caller needs agent.operate, and the answer is attributed to the caller (or its `actor`). */
  async function resolve(principal: Principal, orgId: string, projectId: string, agentId: string, interactionId: string, body: ResolveBody) {
    await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.operate");
    return answerInteraction(db, { orgId, agentId, interactionId, answers: body.answers, actorOf: (tx) => resolveInputActor(tx, principal, orgId, projectId, body.actor) });
  }

  return { list, resolve };
}

export type InteractionsService = ReturnType<typeof createInteractionsService>;

/**
 * Answers an interaction, for the API and for an integration's buttons alike. First writer wins (reference
 * design-brief.md §3.5): the answer is recorded as an `interaction_response` input in the interaction's
 * turn and moves its tool call on. The same answers again replay; other answers, or an interaction that
 * was canceled, are `idempotency_key_conflict` (409).
 */
export async function answerInteraction(
  db: Database,
  request: { orgId: string; agentId: string; interactionId: string; answers: Answer[]; actorOf: (tx: Tx) => Promise<{ id: string } | null> },
) {
  const { orgId, agentId, interactionId } = request;
  return db.tx(async (tx) => {
    const agent = await lockAgent(tx, agentId);
    if (!agent) throw notFound("agent");
    const interaction = await store.findInteraction(tx, agentId, interactionId);
    if (!interaction) throw notFound("interaction");
    const resolution = { answers: request.answers.map(normalizeAnswer) };
    if (interaction.state === "resolved") {
      if (jsonDigest(interaction.resolution) === jsonDigest(resolution)) return { agent, interaction };
      throw new AppError("idempotency_key_conflict", "the interaction was already resolved with different answers");
    }
    if (interaction.state === "canceled") throw new AppError("idempotency_key_conflict", "the interaction was canceled");
    checkAnswers(interaction.request as unknown as store.InteractionForm, request.answers);
    const actor = await request.actorOf(tx);
    const input = await insertInput(tx, {
      orgId,
      agentId,
      inputKind: "interaction_response",
      deliveryMode: "immediate",
      state: "resolved",
      actorId: actor?.id ?? null,
      interactionId: interaction.id,
      idempotencyScope: "interaction_response",
      inputIdempotencyKey: interaction.id,
      requestDigest: jsonDigest(resolution),
      contentBlocks: [],
    });
    await appendEvent(tx, agent, { turnId: interaction.turnId, kind: "agent_input", agentInputId: input.id, semantic: true });
    const resolved = await store.settle(tx, interaction.id, { state: "resolved", resolution, resolvedByInputId: input.id });
    await applyResolution(tx, agent, resolved, resolution.answers);
    await markWakeup(tx, agentId, "interaction_resolved");
    return { agent, interaction: resolved };
  });
}

async function applyResolution(tx: Tx, agent: AgentRow, interaction: store.InteractionRow, answers: Answer[]): Promise<void> {
  const call = await findToolCall(tx, agent.id, interaction.toolCallId);
  if (!call || call.state === "completed") return;
  if (interaction.interactionKind === "permission") {
    const [answer] = answers;
    if (answer!.option_indices[0] === ALLOW) {
      await setToolCallState(tx, call, "ready");
    } else {
      const reason = answer!.text?.trim();
      await completeToolCall(tx, agent, call, "denied", [textBlock(reason ? `Permission denied: ${reason}` : "Permission denied.")]);
    }
    return;
  }
  const form = interaction.request as unknown as store.InteractionForm;
  const value = form.questions.map((question, index) => {
    const answer = answers[index]!;
    return {
      question: question.prompt,
      selected: answer.option_indices.map((i) => question.options[i]!.label),
      ...(answer.text ? { text: answer.text } : {}),
    };
  });
  await completeToolCall(tx, agent, call, "succeeded", [{ type: "structured_data", value: { answers: value } }]);
}

function normalizeAnswer(answer: Answer): Answer {
  return { option_indices: [...answer.option_indices], ...(answer.text !== undefined && answer.text !== "" ? { text: answer.text } : {}) };
}

/** One answer per question; indices name existing options; one option unless `multiple`; text only where an option allows it. */
function checkAnswers(form: store.InteractionForm, answers: Answer[]): void {
  if (answers.length !== form.questions.length) {
    throw invalidRequest(`expected ${form.questions.length} answer(s), one per question, got ${answers.length}`);
  }
  form.questions.forEach((question, q) => {
    const answer = answers[q]!;
    for (const index of answer.option_indices) {
      if (index >= question.options.length) throw invalidRequest(`answers[${q}]: option ${index} does not exist; the question has ${question.options.length} options`);
    }
    if (!question.multiple && answer.option_indices.length > 1) throw invalidRequest(`answers[${q}]: the question takes exactly one option`);
    if (answer.text && !answer.option_indices.some((i) => question.options[i]!.allows_text)) {
      throw invalidRequest(`answers[${q}]: text is only accepted with an option that allows text`);
    }
  });
}
