import type { Database } from "../../../../platform/db/index.js";
import { AppError } from "../../../../platform/errors.js";
import type { SlackWebApi } from "./web-api.js";
import type { SecretsService } from "../../../secrets/service.js";
import type { IntegrationRow } from "../../store.js";

export type SlackOk = { ok: true; [member: string]: unknown };

/**
 * Slack's Web API as an integration's bot: the bot token is read from the integration's credential on
 * every call (credentials are loaded live, so a rotation needs no config change). A refusal is
 * `upstream_unavailable` unless `tolerated` names its error code.
 */
export function createSlackBot(deps: { db: Database; secrets: Pick<SecretsService, "resolvePayload">; api: SlackWebApi }) {
  async function tokenOf(integration: IntegrationRow): Promise<string> {
    if (integration.credentialSecretId === null) throw new AppError("conflict", "the integration has no credential");
    const material = await deps.db.tx((tx) => deps.secrets.resolvePayload(tx, integration.orgId, integration.projectId, integration.credentialSecretId!));
    if (material.kind !== "slack_app_credentials") throw new AppError("conflict", "the integration's credential is not a slack_app_credentials secret");
    return material.access_token;
  }

  return {
    async call(integration: IntegrationRow, method: string, args: Record<string, string>, tolerated: readonly string[] = []): Promise<SlackOk | undefined> {
      const answer = await deps.api.call(method, args, await tokenOf(integration));
      if (answer.ok) return answer;
      if (tolerated.includes(answer.error)) return undefined;
      throw new AppError("upstream_unavailable", `Slack refused ${method}: ${answer.error}`);
    },
  };
}

export type SlackBot = ReturnType<typeof createSlackBot>;
