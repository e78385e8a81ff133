import { and, eq, sql } from "drizzle-orm";
import { agents, processes, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import type { ProcessRow } from "../../runtime/store/processes.js";
import type { TransferMemory } from "../../db/schema/daemon.js";

/** SQL of the daemon transfer routes (transfer-service.ts). */

type Db = AppDb | Tx;

export interface TransferRow {
  process: ProcessRow;
  callState: string;
  callOutcome: string | null;
  projectId: string;
}

/** The process of a tool call that runs on `machineId`, with its call's state and its agent's project. `lock` takes the process row. */
export async function findTransfer(db: Db, machineId: string, toolCallId: string, lock = false): Promise<TransferRow | undefined> {
  const query = db
    .select({ process: processes, callState: toolCalls.state, callOutcome: toolCalls.outcome, projectId: agents.projectId })
    .from(processes)
    .innerJoin(toolCalls, eq(toolCalls.id, processes.toolCallId))
    .innerJoin(agents, eq(agents.id, processes.agentId))
    .where(and(eq(processes.toolCallId, toolCallId), eq(processes.machineId, machineId)));
  const [row] = lock ? await query.for("update", { of: processes }) : await query;
  return row;
}

/** Records the artifact an upload became on its process, so its report can answer the call with it. */
export async function setUploadedArtifact(tx: Tx, processId: string, artifactId: string): Promise<void> {
  await tx
    .update(processes)
    .set({ transfer: sql`coalesce(${processes.transfer}, '{}'::jsonb) || jsonb_build_object('artifact_id', ${artifactId}::text)`, updatedAt: dbNow })
    .where(eq(processes.id, processId));
}

/** Records what a memory upload wrote (its digest and version) on its process: once per call, and for its report. */
export async function setUploadedMemory(tx: Tx, processId: string, memory: TransferMemory): Promise<void> {
  await tx
    .update(processes)
    .set({ transfer: sql`coalesce(${processes.transfer}, '{}'::jsonb) || jsonb_build_object('memory', ${JSON.stringify(memory)}::jsonb)`, updatedAt: dbNow })
    .where(eq(processes.id, processId));
}
