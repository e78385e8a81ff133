import type { Config } from "../../config.js";
import { createSlackWebApi } from "../../integrations/slack/web-api.js";
import type { Database } from "../../platform/db/index.js";
import type { Services } from "../../services.js";
import { createReceiptProcessor, type ReceiptProcessor } from "./inbound-processor.js";
import { slackReceiptHandlers } from "./inbound-slack.js";
import { createSlackBot } from "./slack-bot.js";

/** The receipt processor with every kind's handlers: the HTTP role kicks it, maintenance runs it on each tick. */
export function createIntegrationReceipts(
  db: Database,
  services: Pick<Services, "artifacts" | "secrets">,
  config: Pick<Config, "integrations" | "allowPrivateNetwork">,
  onError?: (err: unknown) => void,
): ReceiptProcessor {
  const api = createSlackWebApi({ apiUrl: config.integrations.slackApiUrl, policy: { allowPrivateNetwork: config.allowPrivateNetwork } });
  const bot = createSlackBot({ db, secrets: services.secrets, api });
  return createReceiptProcessor({ db, handlers: { slack_thread: slackReceiptHandlers({ db, artifacts: services.artifacts, bot }) }, onError });
}
