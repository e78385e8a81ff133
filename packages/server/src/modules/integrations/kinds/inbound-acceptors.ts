import type { Database } from "../../../platform/db/index.js";
import type { ArtifactsService } from "../../artifacts/service.js";
import type { KindCatalog } from "../capability-schemas.js";
import type { InboundAcceptor } from "../inbound-service.js";
import { discordAcceptor } from "./discord/interactions.js";
import { githubAcceptor } from "./github/webhooks.js";
import { slackAcceptor } from "./slack/inbound.js";

/** Each kind's per-integration work on a request the one receiver verified; composed with the HTTP app (app.ts). */
export function createInboundAcceptors(deps: { db: Database; artifacts: ArtifactsService; catalog: KindCatalog }): Record<string, InboundAcceptor> {
  return {
    slack_thread: slackAcceptor(deps),
    discord_thread: discordAcceptor(deps),
    github_pr: githubAcceptor(deps),
  };
}
