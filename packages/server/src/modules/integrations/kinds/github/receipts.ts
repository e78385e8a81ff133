import type { Database } from "../../../../platform/db/index.js";
import { decodeId, encodeId } from "../../../../platform/ids.js";
import type { ArtifactsService } from "../../../artifacts/service.js";
import { deliverToSubscribers, type ConversationDelivery } from "../../conversation-inputs.js";
import { HOLD_LIFETIME_SECONDS, ReceiptHeld, type ReceiptHandler } from "../../inbound-processor.js";
import { launchForConversation } from "../../launch-service.js";
import type { KindCatalog } from "../../capability-schemas.js";
import type { IntegrationRow } from "../../store.js";
import type { PullRequestEventName } from "./kind.js";

type Deps = { db: Database; artifacts: ArtifactsService; catalog: KindCatalog };

interface Launcher {
  trigger: "pull_request_opened" | "mention";
  scope_kind: "installation" | "repository";
  scope_ref: string;
  slots: Array<{ key: string; agent_profile_id: string }>;
}

/** The pull request a delivery is about, and what a person did there; checked member by member (the payload is GitHub's). */
interface PullRequestEvent {
  conversation: { repository_id: number; pull_request: number };
  /** The writer (or, for new commits, the pusher): a human account (a Bot account's events are dropped before this is built). */
  person: { tenantId: string; userId: string };
  /** The delivery's own identity: its comment, review, pull request or pushed head, so redeliveries add nothing. */
  messageKey: string;
  text: string;
  /** Comments and reviews steer; a pull request opened or new commits queue (reference docs: integrations/github). */
  delivery: ConversationDelivery;
  /** GitHub's `action`: pull_request's `opened` is the launcher's trigger, its `synchronize` never is. */
  action: string;
  /** The subscription event it is; none for the pull request's opening, which every subscriber hears. */
  event: PullRequestEventName | undefined;
  /** When GitHub says the pull request was opened (its `created_at`), if it says. */
  openedAt: Date | undefined;
}

/**
 * GitHub's event actions that become agent input (reference docs: integrations/github, "Configure
 * incoming PR work"): new comments and submitted reviews, a pull request opened, and its synchronization
 * (new commits pushed to its head); edits do not.
 */
const INPUT_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  issue_comment: ["created"],
  pull_request_review_comment: ["created"],
  pull_request_review: ["submitted"],
  pull_request: ["opened", "synchronize"],
};
/**
 * The subscription event each delivery is (reference docs: integrations/github: "Submitted reviews arrive
 * as review_comment; commits come from PR synchronization events").
 */
const SUBSCRIPTION_EVENTS: Readonly<Record<string, PullRequestEventName>> = {
  issue_comment: "discussion_comment",
  pull_request_review_comment: "review_comment",
  pull_request_review: "review_comment",
  "pull_request:synchronize": "commit",
};
/** A commit sha as GitHub writes it: SHA-1, or SHA-256 in repositories that use it. */
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * `github_pr` receipts by event kind (reference docs: integrations/github, "Configure incoming PR work"):
 * a pull request opened (trigger pull_request_opened) or a comment mentioning bot_mention on a pull
 * request (trigger mention) launches each launcher slot's profile with that pull request assigned; every human
 * comment or review on a pull request steers its subscribed agents, and a pull request opened or synchronized
 * (new commits) is queued for them. Bots, the App itself among them, never do either.
 */
export function githubReceiptHandlers(deps: Deps): Record<string, ReceiptHandler> {
  const handle: ReceiptHandler = async (receipt, integration) => {
    const event = eventOf(receipt.eventKind, receipt.payload, integration);
    if (!event) return;
    const launched = await launchSlots(deps, integration, receipt.eventKind, event, receipt.providerEventId);
    // The pull request's other subscribers hear it too; the agents it launched have it as their opening input.
    const delivered = await deliverToSubscribers(deps, integration, { ...event, exceptAgentIds: launched }, event.delivery);
    if (delivered.subscribers === 0 && awaitsLaunch(integration, receipt.eventKind, event, receipt.receivedAt)) {
      throw new ReceiptHeld(`no agent subscribes to ${event.conversation.repository_id}#${event.conversation.pull_request} yet; its launch on opening has not happened`);
    }
  };
  return { issue_comment: handle, pull_request_review_comment: handle, pull_request_review: handle, pull_request: handle };
}

/**
 * When this delivery is the launcher's trigger, in its scope, launches one agent per slot (reference docs:
 * integrations/github, `slots: [{key, agent_profile_id}]`), each with the pull request assigned and a
 * subscription to it. Each slot owns the pull request on its own: a slot that launched there once does
 * not launch again, whatever the other slots did. Answers the agents launched (or found, on a redelivery).
 */
async function launchSlots(deps: Deps, integration: IntegrationRow, eventKind: string, event: PullRequestEvent, deliveryId: string): Promise<string[]> {
  const launcher = integration.settings["launcher"] as Launcher | undefined;
  if (!launcher || !inScope(launcher, integration, event)) return [];
  const triggered =
    launcher.trigger === "pull_request_opened" ? eventKind === "pull_request" && event.action === "opened" : eventKind !== "pull_request" && mentions(event.text, integration.botMention);
  if (!triggered) return [];
  const launched: string[] = [];
  // Settings are validated against the catalog (at most 10 slots), so this loop is bounded.
  for (const slot of launcher.slots) {
    const profileId = decodeId("agentProfile", slot.agent_profile_id);
    if (!profileId) continue;
    const outcome = await launchForConversation(deps, {
      integration,
      profileId,
      conversation: event.conversation,
      person: event.person,
      text: event.text,
      key: `github:${encodeId("integration", integration.id)}:${deliveryId}:${slot.key}`,
      owner: slot.key,
    });
    if (outcome.launched) launched.push(outcome.agentId);
  }
  return launched;
}

/**
 * Whether a delivery nobody subscribes to may be early rather than unwanted: the launcher launches on a
 * pull request's opening, covers this one, and it was opened recently enough that its opening may not
 * have been handled yet (another process may still be launching, or GitHub delivered it later). Such a
 * delivery is held (ReceiptHeld) instead of dropped, and reaches the launched agents once they exist.
 */
function awaitsLaunch(integration: IntegrationRow, eventKind: string, event: PullRequestEvent, receivedAt: Date): boolean {
  const launcher = integration.settings["launcher"] as Launcher | undefined;
  if (launcher?.trigger !== "pull_request_opened" || !inScope(launcher, integration, event)) return false;
  if (eventKind === "pull_request" && event.action === "opened") return false;
  return event.openedAt !== undefined && receivedAt.getTime() - event.openedAt.getTime() < HOLD_LIFETIME_SECONDS * 1000;
}

function inScope(launcher: Launcher, integration: IntegrationRow, event: PullRequestEvent): boolean {
  if (launcher.scope_kind === "repository") return launcher.scope_ref === String(event.conversation.repository_id);
  return launcher.scope_ref === integration.providerAccountRef;
}

/** A mention of the App as GitHub renders it: `@<slug>[bot]`, or `@<slug>` alone, not followed by more of a login. */
function mentions(text: string, botMention: string | null): boolean {
  if (!botMention) return false;
  const slug = botMention.replace(/^@/, "").replace(/\[bot\]$/, "");
  const escaped = slug.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w@/-])@${escaped}(\\[bot\\])?(?![\\w-])`, "i").test(text);
}

function eventOf(eventKind: string, payload: Record<string, unknown>, integration: IntegrationRow): PullRequestEvent | undefined {
  const action = stringOf(payload["action"]);
  if (!INPUT_ACTIONS[eventKind]?.includes(action)) return undefined;
  const repository = objectOf(payload["repository"]);
  const repositoryId = positiveOf(repository["id"]);
  const fullName = typeof repository["full_name"] === "string" ? repository["full_name"] : `repository ${repositoryId}`;
  const pr = eventKind === "issue_comment" ? objectOf(payload["issue"]) : objectOf(payload["pull_request"]);
  // An issue_comment on an issue that is not a pull request is unrelated (reference docs: integrations/github).
  if (eventKind === "issue_comment" && !("pull_request" in pr)) return undefined;
  const number = positiveOf(pr["number"]);
  const item = itemOf(eventKind, action, payload, pr);
  const user = objectOf(item.user);
  const userId = positiveOf(user["id"]) ?? user["login"];
  if (!repositoryId || !number || !item.id || user["type"] === "Bot" || (typeof userId !== "string" && typeof userId !== "number")) return undefined;
  // A review submitted without a body (an approval alone) carries nothing for the agent; its comments arrive on their own.
  if (eventKind === "pull_request_review" && item.body === "") return undefined;
  const login = typeof user["login"] === "string" ? user["login"] : String(userId);
  const what = { repository: fullName, number, login, title: stringOf(pr["title"]), body: item.body, path: item.path, head: String(item.id) };
  return {
    conversation: { repository_id: repositoryId, pull_request: number },
    person: { tenantId: integration.providerAccountRef ?? "", userId: String(userId) },
    messageKey: `${eventKind}:${action === "synchronize" ? `synchronize:${item.id}` : item.id}`,
    text: textOf(eventKind, action, what),
    delivery: eventKind === "pull_request" ? "queued" : "steering",
    action,
    event: SUBSCRIPTION_EVENTS[eventKind] ?? SUBSCRIPTION_EVENTS[`${eventKind}:${action}`],
    openedAt: timeOf(pr["created_at"]),
  };
}

/**
 * What the delivery carries: its identity, who wrote it and what. A synchronization's identity is the head
 * it moved to (its `after`) and its writer the pusher (`sender`); a pull request's is the pull request.
 */
function itemOf(eventKind: string, action: string, payload: Record<string, unknown>, pr: Record<string, unknown>) {
  if (action === "synchronize") {
    const after = stringOf(payload["after"]);
    return { id: SHA.test(after) ? after : undefined, user: payload["sender"], body: "", path: "" };
  }
  const item = eventKind === "pull_request" ? pr : objectOf(eventKind === "pull_request_review" ? payload["review"] : payload["comment"]);
  return { id: positiveOf(item["id"]), user: item["user"], body: typeof item["body"] === "string" ? item["body"].trim() : "", path: stringOf(item["path"]) };
}

function textOf(eventKind: string, action: string, e: { repository: string; number: number; login: string; title: string; body: string; path: string; head: string }): string {
  const where = `${e.repository}#${e.number}${e.title ? ` (${e.title})` : ""}`;
  const said = e.body === "" ? "(no description)" : e.body;
  // The new head sha is what the inline_comment tool's commit_id needs.
  if (action === "synchronize") return `@${e.login} pushed commits to pull request ${where}; its head is now ${e.head}.`;
  if (eventKind === "pull_request") return `@${e.login} opened pull request ${where}:\n\n${said}`;
  if (eventKind === "pull_request_review") return `@${e.login} reviewed pull request ${where}:\n\n${said}`;
  if (eventKind === "pull_request_review_comment") return `@${e.login} commented on ${e.path || "the diff"} in pull request ${where}:\n\n${said}`;
  return `@${e.login} commented on pull request ${where}:\n\n${said}`;
}

const objectOf = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const positiveOf = (value: unknown): number | undefined => (typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined);
const stringOf = (value: unknown): string => (typeof value === "string" ? value : "");
/** GitHub's ISO 8601 times (`2026-11-29T01:50:00Z`); anything else is no time. */
const timeOf = (value: unknown): Date | undefined => {
  const time = typeof value === "string" ? Date.parse(value) : NaN;
  return Number.isNaN(time) ? undefined : new Date(time);
};
