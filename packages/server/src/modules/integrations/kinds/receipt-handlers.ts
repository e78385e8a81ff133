import type { Config } from "../../config.js";
import { createDiscordBot } from "./kinds/discord/bot.js";
import { createSlackWebApi } from "./kinds/slack/web-api.js";
import type { Database } from "../../platform/db/index.js";
import type { Services } from "../../services.js";
import { createReceiptProcessor, type ReceiptProcessor } from "./inbound-processor.js";
import { discordReceiptHandlers } from "./kinds/discord/receipts.js";
import { githubReceiptHandlers } from "./kinds/github/receipts.js";
import { slackReceiptHandlers } from "./kinds/slack/receipts.js";
import { createSlackBot } from "./kinds/slack/bot.js";

/** The receipt processor with every kind's handlers: the HTTP role kicks it, maintenance runs it on each tick. */
export function createIntegrationReceipts(
  db: Database,
  services: Pick<Services, "artifacts" | "secrets">,
  config: Pick<Config, "integrations" | "allowPrivateNetwork">,
  onError?: (err: unknown) => void,
): ReceiptProcessor {
  const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const api = createSlackWebApi({ apiUrl: config.integrations.slackApiUrl, policy });
  const bot = createSlackBot({ db, secrets: services.secrets, api });
  const discord = createDiscordBot({ db, secrets: services.secrets, apiUrl: config.integrations.discordApiUrl, policy });
  const handlers = {
    slack_thread: slackReceiptHandlers({ db, artifacts: services.artifacts, bot }),
    discord_thread: discordReceiptHandlers({ db, artifacts: services.artifacts, bot: discord }),
    github_pr: githubReceiptHandlers({ db, artifacts: services.artifacts }),
  };
  return createReceiptProcessor({ db, handlers, onError });
}
