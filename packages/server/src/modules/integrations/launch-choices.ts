import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { integrationLaunchChoices } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { findProfile } from "../agent-profiles/service.js";
import type { IntegrationRow } from "./store.js";
import { canonicalJson } from "./subscriptions-service.js";

export type ChoiceRow = typeof integrationLaunchChoices.$inferSelect;
const c = integrationLaunchChoices;

/** Menus expire after an hour (reference docs: integrations/slack, "Start agents from mentions"). */
export const CHOICE_TTL_SECONDS = 60 * 60;

export interface NewChoice {
  integration: IntegrationRow;
  sourceEventId: string;
  conversation: Record<string, unknown>;
  profileIds: string[];
  person: { tenantId: string; userId: string };
  text: string;
  /**
   * One open chooser per conversation: while one is unanswered and unexpired there, a mention gets that
   * one instead of a new one (its `sourceEventId` is the earlier mention's). Concurrent mentions in the
   * conversation are serialized by a transaction-scoped advisory lock, so two processes cannot both open one.
   */
  onePerConversation?: boolean;
}

/**
 * Kind-neutral: the chooser a mention opens, once per source event (a redelivery finds the same one),
 * with the offered profiles' names for the menu; profiles deleted since the launcher was saved are left out.
 */
export async function openChoice(db: Database, input: NewChoice): Promise<{ choice: ChoiceRow; options: Array<{ profileId: string; name: string }> }> {
  const { integration } = input;
  return db.tx(async (tx) => {
    const open = input.onePerConversation ? await openInConversation(tx, integration.id, input.conversation, input.sourceEventId) : undefined;
    if (open) return { choice: open, options: await optionsOf(tx, integration, open) };
    await tx
      .insert(c)
      .values({
        id: newUuid(),
        orgId: integration.orgId,
        integrationId: integration.id,
        sourceEventId: input.sourceEventId,
        conversation: input.conversation,
        profileIds: input.profileIds,
        personTenantId: input.person.tenantId,
        personUserId: input.person.userId,
        text: input.text,
        expiresAt: dbSecondsFromNow(CHOICE_TTL_SECONDS),
      })
      .onConflictDoNothing();
    const [choice] = await tx
      .select()
      .from(c)
      .where(and(eq(c.integrationId, integration.id), eq(c.sourceEventId, input.sourceEventId)));
    return { choice: choice!, options: await optionsOf(tx, integration, choice!) };
  });
}

/** The offered profiles that still exist, with their names, in the launcher's order. */
async function optionsOf(tx: Tx, integration: IntegrationRow, choice: ChoiceRow): Promise<Array<{ profileId: string; name: string }>> {
  const options: Array<{ profileId: string; name: string }> = [];
  for (const profileId of choice.profileIds) {
    const profile = await findProfile(tx, integration.orgId, integration.projectId, profileId);
    if (profile) options.push({ profileId, name: profile.name });
  }
  return options;
}

/**
 * Under the conversation's lock: another mention's chooser still open there (unanswered, unexpired by the
 * database clock). This mention's own chooser (a redelivery) is not another's: it is found by its event.
 */
async function openInConversation(tx: Tx, integrationId: string, conversation: Record<string, unknown>, sourceEventId: string): Promise<ChoiceRow | undefined> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`launch_choices:${integrationId}:${canonicalJson(conversation)}`}))`);
  const [open] = await tx
    .select()
    .from(c)
    .where(
      and(
        eq(c.integrationId, integrationId),
        sql`${c.conversation} = ${JSON.stringify(conversation)}::jsonb`,
        sql`${c.sourceEventId} <> ${sourceEventId}`,
        isNull(c.chosenEvent),
        sql`${c.expiresAt} > ${dbNow}`,
      ),
    )
    .orderBy(asc(c.createdAt), asc(c.id))
    .limit(1);
  return open;
}

export async function markChoicePosted(db: Database, choiceId: string, postedTs: string): Promise<void> {
  await db.tx((tx) => tx.update(c).set({ postedTs }).where(eq(c.id, choiceId)));
}

/**
 * Takes the pick of `profileId` by click `event`: the first pick of an unexpired menu wins; the winning
 * click's retry gets the choice again (to finish its launch), any other click gets nothing.
 */
export async function takeChoice(tx: Tx, integrationId: string, choiceId: string, profileId: string, event: string): Promise<ChoiceRow | undefined> {
  const [taken] = await tx
    .update(c)
    .set({ chosenProfileId: profileId, chosenEvent: event })
    .where(
      and(
        eq(c.id, choiceId),
        eq(c.integrationId, integrationId),
        sql`${c.profileIds} ? ${profileId}`,
        sql`(${c.chosenEvent} IS NULL AND ${c.expiresAt} > ${dbNow}) OR (${c.chosenEvent} = ${event} AND ${c.chosenProfileId} = ${profileId})`,
      ),
    )
    .returning();
  return taken;
}

/** Deletes menus a day past their expiry, at most `limit`: a pick can no longer reach them. */
export async function sweepExpiredChoices(tx: Tx, limit: number): Promise<number> {
  const old = tx
    .select({ id: c.id })
    .from(c)
    .where(sql`${c.expiresAt} < ${dbNow} - interval '1 day'`)
    .limit(limit);
  const deleted = await tx.delete(c).where(sql`${c.id} IN (${old})`).returning({ id: c.id });
  return deleted.length;
}
