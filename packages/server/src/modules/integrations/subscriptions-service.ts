import type { Database, Tx } from "../../platform/db/index.js";
import { conflict, invalidRequest, notFound, stateConflict } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import type { KindCatalog } from "./capability-schemas.js";
import type { IntegrationKind, IntegrationKinds } from "./kind.js";
import { requireProject } from "../orgs/access.js";
import { invalid } from "./settings.js";
import { kindOf, requireIntegration } from "./service.js";
import type { IntegrationPath } from "./setup-service.js";
import * as store from "./store.js";
import * as subs from "./subscriptions-store.js";

/** At most this many agents subscribe to one conversation through one integration (reference docs: "Subscribe a conversation"). */
export const MAX_AGENTS_PER_CONVERSATION = 16;

/**
 * Subscriptions: one integration, one agent, one concrete conversation (reference docs:
 * integrations/overview). Listing needs project read, attaching and removing project manage. They
 * belong to the integration: a disconnect keeps them, deleting the integration or archiving the agent
 * removes them. Attachments to one integration are serialized by locking its row, so the limit holds.
 */
export function createSubscriptionsService(deps: { db: Database; kinds: IntegrationKinds; catalog: KindCatalog }) {
  const { db, kinds, catalog } = deps;

  return {
    /** `events` null selects every event; a repeated attachment takes the selection this request gives. */
    async create(principal: Principal, path: IntegrationPath, input: { agentId: string; conversation: Record<string, unknown>; events: string[] | null }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
        const integration = requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId, "update"));
        const kind = kindOf(kinds, integration.kind);
        return attach(tx, catalog, integration, { ...input, events: eventSelection(kind, input.events) }, "");
      });
    },

    async list(principal: Principal, path: IntegrationPath, page: PageRequest) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, path.orgId, path.projectId, "project.read");
        requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId));
        return subs.listSubscriptions(tx, path.integrationId, page);
      });
    },

    /** Stops forwarding; the agent, its tools and history stay. Works while disconnected too. */
    async remove(principal: Principal, path: IntegrationPath, subscriptionId: string) {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
        requireIntegration(await store.findIntegration(tx, path.orgId, path.projectId, path.integrationId));
        if (!(await subs.deleteSubscription(tx, path.integrationId, subscriptionId))) throw notFound("subscription");
      });
    },
  };
}

export type SubscriptionsService = ReturnType<typeof createSubscriptionsService>;

/**
 * The subscription's `events`, checked against the kind's list (reference docs: integrations/github,
 * "A PR subscription selects discussion_comment, review_comment and/or commit; omitting events selects all
 * three"), in the list's order; null selects every event. A kind without a list takes no selection.
 */
function eventSelection(kind: IntegrationKind, events: string[] | null): string[] | null {
  if (events === null) return null;
  const known = kind.subscriptionEvents ?? [];
  if (known.length === 0) throw invalid([{ path: "/events", message: `${kind.name} subscriptions forward every event and take no events filter` }]);
  const issues = events.flatMap((name, index) =>
    known.includes(name) ? [] : [{ path: `/events/${index}`, message: `is not an event of ${kind.name}; one of ${known.join(", ")}` }],
  );
  if (issues.length > 0) throw invalid(issues);
  return known.filter((name) => events.includes(name));
}

/**
 * Attaches `agentId` to the conversation, in the caller's transaction, which holds the integration row
 * locked. Repeating an active attachment answers it (`created: false`), with its event selection replaced
 * when `events` is given (undefined keeps it: a launch never changes what a person chose). Problems are
 * reported under `pointer`, where the attachment sits in the request body.
 */
async function attach(
  tx: Tx,
  catalog: KindCatalog,
  integration: store.IntegrationRow,
  input: { agentId: string; conversation: Record<string, unknown>; events?: string[] | null },
  pointer: string,
): Promise<{ created: boolean; subscription: subs.SubscriptionWithAgent }> {
  const kind = integration.kind;
  if (!catalog.hasCapability(kind, "conversation")) throw invalidRequest(`${kind} integrations do not accept subscriptions`);
  const issues = catalog.capabilityIssues(kind, "conversation", input.conversation, `${pointer}/conversation`);
  if (issues.length > 0) throw invalid(issues);
  const agent = await subs.shareAgent(tx, integration.orgId, integration.projectId, input.agentId);
  if (!agent) throw notFound("agent");
  if (agent.state !== "active") throw stateConflict("the agent is archived; archived agents cannot subscribe");
  const key = canonicalJson(input.conversation);
  const existing = await subs.findAttachment(tx, integration.id, key, input.agentId);
  if (existing) {
    const changed = input.events !== undefined && canonicalJson(input.events) !== canonicalJson(existing.events);
    const current = changed ? await subs.setEvents(tx, existing.id, input.events ?? null) : existing;
    return { created: false, subscription: { ...current, agentName: agent.name } };
  }
  if ((await subs.countConversationAgents(tx, integration.id, key)) >= MAX_AGENTS_PER_CONVERSATION) {
    throw conflict(`${MAX_AGENTS_PER_CONVERSATION} agents already subscribe to this conversation through this integration`);
  }
  const subscription = await subs.insertSubscription(tx, {
    id: newUuid(),
    orgId: integration.orgId,
    projectId: integration.projectId,
    integrationId: integration.id,
    agentId: input.agentId,
    conversation: input.conversation,
    conversationKey: key,
    events: input.events ?? null,
  });
  return { created: true, subscription: { ...subscription, agentName: agent.name } };
}

/** JSON with object members in sorted order: one text per conversation, however its members were written. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** For agent archival, inside its transaction: the agent's subscriptions end (an archived agent forwards nothing). */
export async function endAgentSubscriptions(tx: Tx, agentId: string): Promise<void> {
  await subs.deleteAgentSubscriptions(tx, agentId);
}

/**
 * For an agent launch with `subscriptions`, inside its transaction, after the agent row is written: the
 * same rules as the subscriptions API, problems reported under `pointer` (`/subscriptions/<n>`).
 */
export async function attachAtLaunch(
  tx: Tx,
  catalog: KindCatalog,
  principal: Principal,
  agent: { orgId: string; projectId: string; id: string },
  input: { integrationId: string | null; conversation: Record<string, unknown> },
  pointer: string,
): Promise<void> {
  await requireProject(tx, principal, agent.orgId, agent.projectId, "project.manage");
  // A non-canonical id (null) names no integration, like an unknown one.
  const integration = input.integrationId === null ? undefined : await store.findIntegration(tx, agent.orgId, agent.projectId, input.integrationId, "update");
  if (!integration) throw invalid([{ path: `${pointer}/integration_id`, message: "is not an integration of this project" }]);
  await attach(tx, catalog, integration, { agentId: agent.id, conversation: input.conversation }, pointer);
}

/**
 * For a launch the integration itself makes (a mention, a schedule), inside its transaction, with the
 * integration row locked: the API's rules, without a caller to authorize.
 */
export async function attachForIntegration(tx: Tx, catalog: KindCatalog, integration: store.IntegrationRow, agentId: string, conversation: Record<string, unknown>): Promise<void> {
  await attach(tx, catalog, integration, { agentId, conversation }, "");
}
