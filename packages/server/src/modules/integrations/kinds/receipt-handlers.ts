import type { Config } from "../../../config.js";
import { createDiscordBot } from "./discord/bot.js";
import { createSlackWebApi } from "./slack/web-api.js";
import type { Database } from "../../../platform/db/index.js";
import type { Services } from "../../../services.js";
import { createReceiptProcessor, type ReceiptProcessor } from "../inbound-processor.js";
import { discordReceiptHandlers } from "./discord/receipts.js";
import { githubReceiptHandlers } from "./github/receipts.js";
import { slackReceiptHandlers } from "./slack/receipts.js";
import { createSlackBot } from "./slack/bot.js";

/** The receipt processor with every kind's handlers: the HTTP role kicks it, maintenance runs it on each tick. */
export function createIntegrationReceipts(
  db: Database,
  services: Pick<Services, "artifacts" | "secrets" | "integrations">,
  config: Pick<Config, "integrations" | "allowPrivateNetwork">,
  onError?: (err: unknown) => void,
): ReceiptProcessor {
  const { catalog } = services.integrations;
  const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const api = createSlackWebApi({ apiUrl: config.integrations.slackApiUrl, policy });
  const bot = createSlackBot({ db, secrets: services.secrets, api });
  const discord = createDiscordBot({ db, secrets: services.secrets, apiUrl: config.integrations.discordApiUrl, policy });
  const handlers = {
    slack_thread: slackReceiptHandlers({ db, artifacts: services.artifacts, catalog, bot }),
    discord_thread: discordReceiptHandlers({ db, artifacts: services.artifacts, catalog, bot: discord }),
    github_pr: githubReceiptHandlers({ db, artifacts: services.artifacts, catalog }),
  };
  return createReceiptProcessor({ db, handlers, onError });
}
