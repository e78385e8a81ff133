import type { Database } from "../../../../platform/db/index.js";
import { AppError } from "../../../../platform/errors.js";
import { isUuid } from "../../../../platform/ids.js";
import { findInteractionById, type InteractionForm, type InteractionRow } from "../../../../runtime/store/interactions.js";
import { upsertIntegrationActor } from "../../../actors/service.js";
import { ALLOW, answerInteraction } from "../../../interactions/service.js";
import type { ReceiptRow } from "../../inbound-store.js";
import { findAssignment } from "../../launch-store.js";
import type { SlackBot } from "./bot.js";
import { escapeMrkdwn, postingRules, type PostingRules } from "./mrkdwn.js";
import type { IntegrationRow } from "../../store.js";

/**
 * The Slack interaction handler (reference docs: integrations/slack, "Questions and approvals"): an open
 * question or approval is posted to the agent's assigned thread with buttons, and a click answers it through
 * the same path as the API, attributed to the clicker's `integration` actor. Only a one-question form can
 * be answered by one click; any other form asks for an answer in svc or a reply in the thread.
 */

/** Button action ids; the value is `<interaction id>:<option index>`. */
export const ANSWER_ACTION = "svc_answer_";
/** Slack's limits: a button's text, a section's text, and the buttons of one actions block. */
const MAX_BUTTON_TEXT = 75;
const MAX_SECTION_TEXT = 3000;
const MAX_BUTTONS = 25;

interface Deps {
  db: Database;
  bot: SlackBot;
}

/** Posts the interaction the receipt names to the conversation captured when it opened, unless it is settled already. */
export async function postInteraction(deps: Deps, receipt: ReceiptRow, integration: IntegrationRow): Promise<void> {
  const { interaction_id: interactionId, conversation } = receipt.payload as { interaction_id: string; conversation: { channel_id: string; thread_ts: string } };
  const interaction = await deps.db.tx((tx) => findInteractionById(tx, interactionId));
  if (!interaction || interaction.state !== "open") return;
  const { text, blocks } = interactionMessage(interaction, postingRules(integration.settings));
  await deps.bot.call(integration, "chat.postMessage", { channel: conversation.channel_id, thread_ts: conversation.thread_ts, text, blocks: JSON.stringify(blocks) });
}

/** The agent's words (title, context, prompts) are escaped as its posts are (mrkdwn.ts); button labels are plain_text, which Slack never parses. */
function interactionMessage(interaction: InteractionRow, rules: PostingRules): { text: string; blocks: object[] } {
  const form = interaction.request as unknown as InteractionForm;
  const agents = (text: string) => escapeMrkdwn(text, rules);
  const lines = [`*${agents(form.title)}*`, ...(form.context ?? []).map((item) => agents(`${item.label}: ${item.value}`))];
  const [only] = form.questions;
  const clickable = form.questions.length === 1 && only!.options.length > 0 && only!.options.length <= MAX_BUTTONS && !only!.multiple;
  lines.push(...form.questions.map((question) => agents(question.prompt)));
  if (!clickable) lines.push(only?.options.length ? "Answer this in svc." : "Reply in this thread to answer.");
  // Cut to Slack's limit without leaving half an escape (every literal & is escaped, so a trailing & starts one).
  const text = lines.join("\n").slice(0, MAX_SECTION_TEXT).replace(/&[a-z]*$/, "");
  const blocks: object[] = [{ type: "section", text: { type: "mrkdwn", text } }];
  if (clickable) {
    const buttons = only!.options.map((option, index) => ({
      type: "button",
      action_id: `${ANSWER_ACTION}${index}`,
      text: { type: "plain_text", text: option.label.slice(0, MAX_BUTTON_TEXT) || `Option ${index + 1}` },
      value: `${interaction.id}:${index}`,
      ...(interaction.interactionKind === "permission" ? { style: index === ALLOW ? "primary" : "danger" } : {}),
    }));
    blocks.push({ type: "actions", elements: buttons });
  }
  return { text, blocks };
}

/**
 * A click on an answer button: answers the interaction if it is open and belongs to an agent this
 * integration assigned to the clicked message's channel. First writer wins: a click on a settled
 * interaction changes nothing, and the message then says it is settled.
 */
export async function answerByClick(deps: Deps, receipt: ReceiptRow, integration: IntegrationRow, value: string): Promise<void> {
  const [interactionId, index] = value.split(":");
  if (!interactionId || !isUuid(interactionId) || !/^\d{1,2}$/.test(index ?? "")) return;
  const payload = receipt.payload as { team_id: string; user_id: string; container?: { channel_id?: unknown; message_ts?: unknown } };
  const interaction = await deps.db.tx((tx) => findInteractionById(tx, interactionId));
  if (!interaction) return;
  const assignment = await deps.db.tx((tx) => findAssignment(tx, interaction.agentId, integration.id));
  const channel = payload.container?.channel_id;
  if (!assignment || typeof channel !== "string" || assignment.conversation["channel_id"] !== channel) return;
  const messageTs = payload.container?.message_ts;
  const settled = () => (typeof messageTs === "string" ? markSettled(deps, integration, channel, messageTs) : Promise.resolve());
  if (interaction.state !== "open") return settled();
  try {
    await answerInteraction(deps.db, {
      orgId: integration.orgId,
      agentId: interaction.agentId,
      interactionId,
      answers: [{ option_indices: [Number(index)] }],
      actorOf: (tx) => upsertIntegrationActor(tx, integration.orgId, integration.projectId, { tenantId: payload.team_id, userId: payload.user_id }),
    });
  } catch (err) {
    // Settled by another answer, or an option the form lacks: the click changes nothing.
    if (!(err instanceof AppError) || (err.code !== "idempotency_key_conflict" && err.code !== "invalid_request")) throw err;
    await settled();
  }
}

async function markSettled(deps: Deps, integration: IntegrationRow, channel: string, ts: string): Promise<void> {
  const text = "This was already answered or withdrawn; the first answer stands.";
  await deps.bot.call(integration, "chat.update", { channel, ts, text, blocks: JSON.stringify([{ type: "section", text: { type: "mrkdwn", text } }]) }, ["message_not_found", "cant_update_message"]);
}
