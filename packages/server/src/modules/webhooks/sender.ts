import type { Bus } from "../../platform/bus.js";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { Database } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { outboundPost } from "../../platform/net/outbound-http.js";
import type { OutboundPolicy } from "../../platform/net/outbound.js";
import type { MaintenanceTask } from "../../maintenance.js";
import { WEBHOOK_CHANNEL } from "./channel.js";
import { destinationProblem } from "./destination.js";
import { secretAad } from "./service.js";
import { signatureHeader } from "./signing.js";
import * as store from "./store.js";
import { createDrain } from "../../platform/drain.js";

/**
 * Seconds to wait after each failed attempt (Standard Webhooks' suggested schedule): after the eighth
 * attempt fails, the delivery has failed.
 */
export const RETRY_SCHEDULE_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;
/** An endpoint whose deliveries have failed without a success for this long is disabled. */
export const DISABLE_AFTER_SECONDS = 5 * 24 * 3600;
/** The whole attempt's deadline: connecting, sending, and the answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A claim keeps other senders off a row this long; beyond the attempt's deadline, so it ends first. */
const LEASE_SECONDS = 15;
const BATCH = 16;
/** The longest the sender sleeps before looking again for retries it set; maintenance's tick finds them anyway. */
const MAX_SLEEP_MS = 60_000;
/** An endpoint's answer is read up to this much (only its status matters) and its error text shown up to this much. */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_ERROR_CHARS = 500;

export interface WebhookSender {
  /** Sends one batch of due deliveries; answers how many (also a maintenance task). */
  runDue(): Promise<number>;
  /** Starts sending now, in the background; at most one run at a time. */
  kick(): void;
  /** Kicks on every NOTIFY of new deliveries, and after notifications may have been lost. */
  follow(bus: Pick<Bus, "subscribe" | "onReconnect">): Promise<void>;
  /** Stops following and waits for the run in flight (each attempt ends within its deadline). */
  stop(): Promise<void>;
}

export interface SenderDeps {
  db: Database;
  cipher: EnvelopeCipher;
  outbound: OutboundPolicy;
  onError?: (err: unknown) => void;
}

/**
 * The webhook sender (docs/webhooks.md): claims due deliveries by the database clock with `FOR UPDATE
 * SKIP LOCKED` (so any number of processes may run one), POSTs each outside any transaction, signed with
 * every secret still signing, and records the outcome. Retries are rows with a later `next_attempt_at`,
 * never in-process loops; the sender sets one timer for the soonest, a hint like a notification.
 */
export function createWebhookSender(deps: SenderDeps): WebhookSender {
  const { db, cipher, outbound } = deps;
  let unfollow: (() => Promise<void>) | undefined;
  const drain = createDrain({ runDue: () => runDue(), batch: BATCH, maxSleepMs: MAX_SLEEP_MS, onError: deps.onError });
  const wakeIn = (ms: number) => drain.wakeIn(ms);


  async function attempt(delivery: store.ClaimedDelivery): Promise<void> {
    const key = { id: delivery.id, endpointId: delivery.endpoint_id, attempts: delivery.attempts };
    const outcome = await send(delivery);
    if (outcome.ok) {
      await db.tx((tx) => store.recordSuccess(tx, key, outcome.statusCode));
      return;
    }
    const retryInSeconds = RETRY_SCHEDULE_SECONDS[delivery.attempts - 1] ?? null;
    await db.tx(async (tx) => {
      const { failingTooLong } = await store.recordFailure(tx, key, { statusCode: outcome.statusCode, error: outcome.error, retryInSeconds }, DISABLE_AFTER_SECONDS);
      if (failingTooLong) {
        const reason = `disabled by svc: every delivery failed for ${DISABLE_AFTER_SECONDS / 86400} days (last: ${outcome.error})`;
        await store.updateEndpoint(tx, delivery.endpoint_id, { disabled: true, disabledReason: reason.slice(0, MAX_ERROR_CHARS) });
        await store.failPendingOf(tx, delivery.endpoint_id, "the endpoint was disabled after five days of failures");
      }
    });
  }

  async function send(delivery: store.ClaimedDelivery): Promise<{ ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string }> {
    const problem = await destinationProblem(delivery.url, outbound).catch((err: unknown) => String(err));
    if (problem) return { ok: false, statusCode: null, error: `url ${problem}` };
    const secrets = [delivery.secret, ...(delivery.previous_secret ? [delivery.previous_secret] : [])].map((envelope) =>
      cipher.open(envelope, secretAad(delivery.endpoint_id)).toString(),
    );
    const webhookId = encodeId("webhookMessage", delivery.message_id);
    const body = JSON.stringify({ type: delivery.event_type, timestamp: new Date(delivery.occurred_at_ms).toISOString(), data: delivery.data });
    const timestamp = delivery.now_seconds;
    try {
      const answer = await outboundPost(
        delivery.url,
        body,
        {
          headers: {
            "content-type": "application/json",
            "user-agent": "svc-webhooks",
            "webhook-id": webhookId,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signatureHeader(secrets, webhookId, timestamp, body),
          },
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          maxBytes: MAX_ANSWER_BYTES,
        },
        outbound,
      );
      if (answer.status >= 200 && answer.status < 300) return { ok: true, statusCode: answer.status };
      return { ok: false, statusCode: answer.status, error: `answered ${answer.status}` };
    } catch (err) {
      // A body larger than the cap still answered: only its status matters, which the error does not carry.
      return { ok: false, statusCode: null, error: (err as Error).message.slice(0, MAX_ERROR_CHARS) || "the request failed" };
    }
  }

  async function runDue(): Promise<number> {
    const claimed = await db.tx((tx) => store.claimDue(tx, BATCH, LEASE_SECONDS));
    // One batch's attempts run side by side, so one slow endpoint (up to its 10 s) does not hold the others.
    await Promise.all(claimed.map((delivery) => attempt(delivery).catch((err: unknown) => deps.onError?.(err))));
    if (claimed.length < BATCH) {
      const next = await store.msUntilNextDue(db.read);
      if (next !== null) wakeIn(next);
    }
    return claimed.length;
  }

  const sender: WebhookSender = {
    runDue,
    kick: () => drain.kick(),
    async follow(bus) {
      unfollow = await bus.subscribe(WEBHOOK_CHANNEL, () => sender.kick());
      bus.onReconnect(() => sender.kick());
      sender.kick();
    },
    async stop() {
      await unfollow?.();
      await drain.stop();
    },
  };
  return sender;
}

/** How long settled deliveries are kept for the deliveries list. */
export const KEEP_SETTLED_DAYS = 30;
const SWEEP_BATCH = 500;

/**
 * The maintenance task that sends what lost notifications and timers left (a bounded batch per tick) and
 * deletes settled deliveries older than KEEP_SETTLED_DAYS.
 */
export function webhookDeliveriesTask(db: Database, sender: Pick<WebhookSender, "runDue">): MaintenanceTask {
  return {
    name: "webhook-deliveries",
    run: async () => (await sender.runDue()) + (await db.tx((tx) => store.sweepSettled(tx, KEEP_SETTLED_DAYS, SWEEP_BATCH))),
  };
}
