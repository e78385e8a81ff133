import { sql } from "drizzle-orm";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { enqueueWebhookEvents } from "../webhooks/enqueue.js";

/**
 * `integration.failed` to webhooks (docs/webhooks.md), in the transaction that records the integration's
 * runtime failure and before it: sent when a run of failures begins (no failure was recorded yet), not at
 * every retry of the same outage.
 */
export async function announceIntegrationFailure(
  tx: Tx,
  integration: { id: string; orgId: string; projectId: string; kind: string; name: string },
  message: string,
): Promise<void> {
  await enqueueWebhookEvents(
    tx,
    {
      orgId: integration.orgId,
      projectId: integration.projectId,
      type: "integration.failed",
      data: {
        integration_id: encodeId("integration", integration.id),
        project_id: encodeId("project", integration.projectId),
        kind: integration.kind,
        name: integration.name,
        message,
      },
    },
    sql`NOT EXISTS (SELECT 1 FROM integrations i WHERE i.id = ${integration.id} AND i.runtime_failure_message IS NOT NULL)`,
  );
}
