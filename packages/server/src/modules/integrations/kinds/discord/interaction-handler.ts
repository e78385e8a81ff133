import type { DiscordBot } from "./bot.js";
import type { ComponentClick, ComponentHandler } from "../../inbound.js";
import type { Database } from "../../../../platform/db/index.js";
import { AppError } from "../../../../platform/errors.js";
import { isUuid } from "../../../../platform/ids.js";
import { findInteractionById, type InteractionForm, type InteractionRow } from "../../../../runtime/store/interactions.js";
import { upsertIntegrationActor } from "../../../actors/service.js";
import { ALLOW, answerInteraction } from "../../../interactions/service.js";
import type { ReceiptRow } from "../../inbound-store.js";
import { findAssignment } from "../../launch-store.js";
import type { IntegrationRow } from "../../store.js";

/**
 * The Discord interaction handler (reference docs: integrations/discord, "Questions, approvals and profile
 * menus"): an open question or approval is posted to the agent's assigned thread with buttons, and a click,
 * signed by Discord and received on the interactions endpoint, answers it through the same path as the API,
 * attributed to the clicker's `integration` actor. Only a one-question form can be answered by one click;
 * any other form asks for an answer in svc or a reply in the thread.
 */

/** Button custom ids: `svc_answer:<interaction id>:<option index>`. */
const ANSWER_PREFIX = "svc_answer:";
/** Discord's limits (Discord docs: "Message Components"): a message's content, a button's label, buttons per row and rows per message. */
const MAX_CONTENT = 2000;
const MAX_LABEL = 80;
const BUTTONS_PER_ROW = 5;
const MAX_BUTTONS = 25;
/** Discord's component types and button styles. */
const ACTION_ROW = 1;
const BUTTON = 2;
const SECONDARY = 2;
const SUCCESS = 3;
const DANGER = 4;
const SETTLED = "This was already answered or withdrawn; the first answer stands.";

/** Posts the interaction the receipt names to the thread captured when it opened, unless it is settled already. */
export async function postDiscordInteraction(deps: { db: Database; bot: DiscordBot }, receipt: ReceiptRow, integration: IntegrationRow): Promise<void> {
  const { interaction_id: interactionId, conversation } = receipt.payload as { interaction_id: string; conversation: { thread_id?: unknown } };
  if (typeof conversation.thread_id !== "string") throw new AppError("invalid_request", "the interaction's conversation is not a Discord thread");
  const interaction = await deps.db.tx((tx) => findInteractionById(tx, interactionId));
  if (!interaction || interaction.state !== "open") return;
  const { content, components } = interactionMessage(interaction);
  await deps.bot.postMessage(integration, conversation.thread_id, { content, components });
}

function interactionMessage(interaction: InteractionRow): { content: string; components: object[] } {
  const form = interaction.request as unknown as InteractionForm;
  const [only] = form.questions;
  const clickable = form.questions.length === 1 && only!.options.length > 0 && only!.options.length <= MAX_BUTTONS && !only!.multiple;
  const lines = [formText(form)];
  if (!clickable) lines.push(only?.options.length ? "Answer this in svc." : "Reply in this thread to answer.");
  const content = lines.join("\n").slice(0, MAX_CONTENT);
  if (!clickable) return { content, components: [] };
  const buttons = only!.options.map((option, index) => ({
    type: BUTTON,
    custom_id: `${ANSWER_PREFIX}${interaction.id}:${index}`,
    label: option.label.slice(0, MAX_LABEL) || `Option ${index + 1}`,
    style: interaction.interactionKind === "permission" ? (index === ALLOW ? SUCCESS : DANGER) : SECONDARY,
  }));
  const rows: object[] = [];
  for (let start = 0; start < buttons.length; start += BUTTONS_PER_ROW) rows.push({ type: ACTION_ROW, components: buttons.slice(start, start + BUTTONS_PER_ROW) });
  return { content, components: rows };
}

/** The form as Discord markdown: the title in bold, its context, then each question. */
function formText(form: InteractionForm): string {
  return [`**${form.title}**`, ...(form.context ?? []).map((item) => `${item.label}: ${item.value}`), ...form.questions.map((question) => question.prompt)].join("\n");
}

/**
 * Answer buttons' clicks, through the interactions endpoint: a click answers the interaction if it is open
 * and belongs to an agent this integration assigned to the clicked channel, and the message then shows
 * who answered what. First writer wins: a click on a settled interaction changes nothing and says so.
 * Not this seam's custom id: undefined.
 */
export function discordAnswerHandler(deps: { db: Database }): ComponentHandler {
  return async (click) => {
    const parsed = parseCustomId(click.customId);
    if (!parsed) return undefined;
    const interaction = await deps.db.tx((tx) => findInteractionById(tx, parsed.interactionId));
    if (!interaction || !(await assignedHere(deps.db, click, interaction))) return { kind: "reply", content: "This action is no longer available." };
    if (interaction.state !== "open") return { kind: "reply", content: SETTLED };
    const form = interaction.request as unknown as InteractionForm;
    try {
      await answerInteraction(deps.db, {
        orgId: click.integration.orgId,
        agentId: interaction.agentId,
        interactionId: interaction.id,
        answers: [{ option_indices: [parsed.index] }],
        actorOf: (tx) => upsertIntegrationActor(tx, click.integration.orgId, click.integration.projectId, { tenantId: click.tenantId, userId: click.userId }),
      });
    } catch (err) {
      // Settled by another answer since it was read, or an option the form lacks: the click changes nothing.
      if (!(err instanceof AppError) || (err.code !== "idempotency_key_conflict" && err.code !== "invalid_request")) throw err;
      return { kind: "reply", content: SETTLED };
    }
    const label = form.questions[0]?.options[parsed.index]?.label ?? `option ${parsed.index + 1}`;
    return { kind: "update", content: `${formText(form)}\nAnswered by <@${click.userId}>: ${label}`.slice(0, MAX_CONTENT) };
  };
}

function parseCustomId(customId: string): { interactionId: string; index: number } | undefined {
  if (!customId.startsWith(ANSWER_PREFIX)) return undefined;
  const [interactionId, index] = customId.slice(ANSWER_PREFIX.length).split(":");
  if (!interactionId || !isUuid(interactionId) || !/^\d{1,2}$/.test(index ?? "")) return undefined;
  return { interactionId, index: Number(index) };
}

/** Whether this integration assigned the interaction's agent the thread the click came from. */
async function assignedHere(db: Database, click: ComponentClick, interaction: InteractionRow): Promise<boolean> {
  const assignment = await db.tx((tx) => findAssignment(tx, interaction.agentId, click.integration.id));
  return assignment !== undefined && assignment.conversation["thread_id"] === click.channelId;
}
