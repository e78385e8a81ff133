import type { Bus } from "../../platform/bus.js";
import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import type { IntegrationRow } from "./store.js";
import * as receipts from "./inbound-store.js";
import { sweepExpiredChoices } from "./launch-choices.js";
import { announceIntegrationFailure } from "./failure-webhook.js";
import { createDrain } from "../../platform/drain.js";

/** Handles one kind of receipt. Its effects must be idempotent on the receipt: a crash after them handles it again. */
export type ReceiptHandler = (receipt: receipts.ReceiptRow, integration: IntegrationRow) => Promise<void>;
/** Handlers by integration kind, then by the receipt's event_kind. */
export type ReceiptHandlers = Readonly<Record<string, Readonly<Record<string, ReceiptHandler>>>>;

/**
 * Thrown by a handler whose event depends on work another receipt has not finished yet (a pull request's
 * new commits before the launch its opening makes): the receipt is kept, not failed, and tried again.
 */
export class ReceiptHeld extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReceiptHeld";
  }
}

/** A receipt that failed this many times stays failed (reference docs: "Inbound events retry automatically with a bounded budget"). */
export const MAX_RECEIPT_ATTEMPTS = 5;
/**
 * How long a held receipt waits for what it depends on, from when it was received. The receipt it waits
 * for retries within this: five attempts, each at most a two-minute lease, with pauses of 10 to 80 s in
 * between, take at most 12.5 minutes. Later, what it waited for is not coming.
 */
export const HOLD_LIFETIME_SECONDS = 15 * 60;
/** The longest pause between tries of a held receipt; the pause grows with its age up to this. */
const HOLD_MAX_DELAY_SECONDS = 30;
const BATCH = 20;
const SWEEP_BATCH = 500;
/** How long a claimed receipt is kept from other processes; longer than any handler's provider calls. */
const LEASE_SECONDS = 120;
/** Announced on commit of every stored receipt, by a trigger (migration 0021_integration_receipts_notify). */
const RECEIPTS_CHANNEL = "svc_integration_receipts";

export interface ReceiptProcessor {
  /** Handles one batch of due receipts and deletes settled ones past keeping; answers how many (a maintenance task). */
  runDue(): Promise<number>;
  /** Starts handling now, in the background; at most one run at a time. */
  kick(): void;
  /**
   * Kicks whenever a receipt is stored, by any process (an inbound request, the Gateway, a routed
   * interaction, a schedule's firing), and after notifications may have been lost.
   */
  follow(bus: Pick<Bus, "subscribe" | "onReconnect">): Promise<void>;
  /** Waits for the run in flight; no new run starts. */
  stop(): Promise<void>;
}

/**
 * The kind-neutral receipt processor: claims due receipts by the database clock, hands each to its
 * kind's handler outside any transaction (handlers call providers), and records the outcome. A provider's
 * rate limit retries after its Retry-After; other failures back off, up to MAX_RECEIPT_ATTEMPTS.
 */
export function createReceiptProcessor(deps: { db: Database; handlers: ReceiptHandlers; onError?: (err: unknown) => void }): ReceiptProcessor {
  const { db, handlers } = deps;
  let unfollow: (() => Promise<void>) | undefined;
  const drain = createDrain({ runDue: () => runDue(), batch: BATCH, onError: deps.onError });
  /** Kicks this process when a held receipt is next due (a hint: maintenance's tick finds it anyway). */
  const wakeIn = (ms: number) => drain.wakeIn(ms);

  async function hold(receipt: receipts.ReceiptRow, held: ReceiptHeld): Promise<void> {
    const limits = { lifetimeSeconds: HOLD_LIFETIME_SECONDS, maxDelaySeconds: HOLD_MAX_DELAY_SECONDS };
    const waitMs = await db.tx((tx) => receipts.holdReceipt(tx, receipt.id, limits, `${held.message}; gave up after ${HOLD_LIFETIME_SECONDS / 60} minutes`));
    if (waitMs !== null) wakeIn(Math.max(waitMs, 0));
  }

  async function handleOne(receipt: receipts.ReceiptRow, integration: IntegrationRow): Promise<void> {
    const handler = handlers[integration.kind]?.[receipt.eventKind];
    try {
      if (!handler) throw new AppError("invalid_request", `no handler for ${integration.kind} ${receipt.eventKind} events`);
      if (integration.state !== "active") throw new AppError("conflict", "the integration was disconnected before the event was handled");
      await handler(receipt, integration);
      await db.tx(async (tx) => {
        await receipts.markProcessed(tx, receipt.id);
        if (integration.runtimeFailureMessage !== null) await receipts.clearRuntimeFailure(tx, integration.id);
      });
    } catch (err) {
      if (err instanceof ReceiptHeld) return hold(receipt, err);
      const retry = retryIn(err, receipt.attempts);
      await db.tx(async (tx) => {
        await receipts.markFailure(tx, receipt.id, (err as Error).message, retry);
        // The provider failing is the integration's condition, shown on Get integration until a success clears it.
        if (retry !== null && isProviderFailure(err)) {
          await announceIntegrationFailure(tx, integration, (err as Error).message);
          await receipts.recordRuntimeFailure(tx, integration.id, (err as Error).message, retry);
        }
      });
      if (!(err instanceof AppError)) deps.onError?.(err);
    }
  }

  async function runDue(): Promise<number> {
    const claimed = await db.tx((tx) => receipts.claimDue(tx, BATCH, LEASE_SECONDS));
    for (const { receipt, integration } of claimed) await handleOne(receipt, integration);
    return claimed.length;
  }

  const processor: ReceiptProcessor = {
    async runDue() {
      const handled = await runDue();
      const swept = await db.tx(async (tx) => (await receipts.sweepSettled(tx, SWEEP_BATCH)) + (await sweepExpiredChoices(tx, SWEEP_BATCH)));
      return handled + swept;
    },
    kick: () => drain.kick(),
    async follow(bus) {
      unfollow = await bus.subscribe(RECEIPTS_CHANNEL, () => processor.kick());
      bus.onReconnect(() => processor.kick());
    },
    async stop() {
      await unfollow?.();
      await drain.stop();
    },
  };
  return processor;
}

function isProviderFailure(err: unknown): boolean {
  return err instanceof AppError && (err.code === "rate_limited" || err.code === "upstream_unavailable");
}

/** Seconds to the next try, or null when the receipt has no tries left or can never succeed. */
function retryIn(err: unknown, attempts: number): number | null {
  if (attempts >= MAX_RECEIPT_ATTEMPTS) return null;
  if (err instanceof AppError) {
    if (err.code === "rate_limited") return Number(err.details["retryAfterSeconds"] ?? 30);
    if (err.code !== "upstream_unavailable" && err.code !== "service_unavailable") return null;
  }
  return 10 * 2 ** (attempts - 1);
}
