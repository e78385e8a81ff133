import { and, eq, gt, isNull, lt, ne, or, sql } from "drizzle-orm";
import { machines } from "../../db/schema/index.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import type { MaintenanceTask } from "../../maintenance.js";
import { enqueueWebhookEvents } from "../webhooks/enqueue.js";

const BATCH = 100;

/** `machine.offline` to webhooks (docs/webhooks.md), in the transaction that records the machine going away. */
export async function announceMachineOffline(tx: Tx, machine: { id: string; orgId: string; displayName: string }, reason: string): Promise<void> {
  await enqueueWebhookEvents(tx, {
    orgId: machine.orgId,
    projectId: null,
    type: "machine.offline",
    data: { machine_id: encodeId("machine", machine.id), name: machine.displayName, reason },
  });
}

/**
 * Maintenance task: a connected machine whose daemon's lease ran out (no heartbeat for 120 s) is offline
 * without any request saying so; this sends its `machine.offline` once per lapsed lease, marking the lease
 * announced in the same transaction. A sleeping pool machine is not offline. One transaction per machine.
 */
export function machineOfflineWebhooks(db: Database): MaintenanceTask {
  return {
    name: "machine-offline-webhooks",
    async run() {
      const lapsed = await db.read
        .select({ id: machines.id, orgId: machines.orgId, displayName: machines.displayName })
        .from(machines)
        .where(
          and(
            lt(machines.leaseExpiresAt, sql`statement_timestamp()`),
            // A lease that lapsed long ago (before svc sent webhooks, or while maintenance was down for a day) is old news.
            gt(machines.leaseExpiresAt, sql`statement_timestamp() - interval '1 day'`),
            isNull(machines.asleepSince),
            or(isNull(machines.offlineAnnouncedLease), ne(machines.offlineAnnouncedLease, machines.leaseExpiresAt)),
          ),
        )
        .limit(BATCH);
      let announced = 0;
      for (const machine of lapsed) {
        await db.tx(async (tx) => {
          const [marked] = await tx
            .update(machines)
            .set({ offlineAnnouncedLease: sql`${machines.leaseExpiresAt}` })
            .where(
              and(
                eq(machines.id, machine.id),
                lt(machines.leaseExpiresAt, sql`statement_timestamp()`),
                or(isNull(machines.offlineAnnouncedLease), ne(machines.offlineAnnouncedLease, machines.leaseExpiresAt)),
              ),
            )
            .returning({ id: machines.id });
          if (!marked) return;
          await announceMachineOffline(tx, machine, "its daemon stopped sending heartbeats");
          announced += 1;
        });
      }
      return announced;
    },
  };
}
