import type { Database } from "../../platform/db/index.js";
import type { Services } from "../../services.js";
import { createReceiptProcessor, type ReceiptProcessor } from "./inbound-processor.js";
import { slackReceiptHandlers } from "./inbound-slack.js";

/** The receipt processor with every kind's handlers: the HTTP role kicks it, maintenance runs it on each tick. */
export function createIntegrationReceipts(db: Database, services: Pick<Services, "artifacts">, onError?: (err: unknown) => void): ReceiptProcessor {
  return createReceiptProcessor({ db, handlers: { slack_thread: slackReceiptHandlers({ db, artifacts: services.artifacts }) }, onError });
}
