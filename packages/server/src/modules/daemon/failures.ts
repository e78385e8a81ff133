import { and, eq, isNull, sql } from "drizzle-orm";
import { Type } from "typebox";
import { machines } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { component } from "../../platform/http/components.js";

/*
 * Failures a machine's daemon reports (`POST /daemon/failures`, reference operation recordMachineFailure):
 * the machine's most recent one is kept in one slot, `machines.failure_report`, overwritten by the next and
 * cleared when a daemon of the machine registers again (it recovered). The machine view shows it as
 * `failure_report` (reference schema MachineFailureReport).
 */

/**
 * The reference's stages, and svc's `daemon_start`: svcd could not start or register for a reason that
 * waiting will not fix (its home unusable, its registration refused).
 */
export const FAILURE_STAGES = ["startup_script", "daemon_install", "daemon_update", "daemon_uninstall", "daemon_uninstalled", "daemon_start"] as const;
export type FailureStage = (typeof FAILURE_STAGES)[number];

/** The output kept: the reference's request body is at most 4,097 characters, the last 4,096 and one more that says "there was more". */
export const OUTPUT_TAIL_CHARS = 4096;

export interface FailureInput {
  stage: FailureStage;
  exit_status?: number;
  daemon_version?: string;
  target_version?: string;
  output: string;
}

export interface FailureReport {
  stage: FailureStage;
  exit_status?: number;
  output_tail: string;
  output_truncated: boolean;
  daemon_version?: string;
  target_version?: string;
  reported_at: string;
}

/** Records the report on the daemon's machine, stamped with the database clock. */
export async function recordFailure(db: AppDb | Tx, daemon: DaemonPrincipal, input: FailureInput): Promise<void> {
  const report: Omit<FailureReport, "reported_at"> = {
    stage: input.stage,
    ...(input.exit_status === undefined ? {} : { exit_status: input.exit_status }),
    output_tail: input.output.slice(-OUTPUT_TAIL_CHARS),
    output_truncated: input.output.length > OUTPUT_TAIL_CHARS,
    ...(input.daemon_version === undefined ? {} : { daemon_version: input.daemon_version }),
    ...(input.target_version === undefined ? {} : { target_version: input.target_version }),
  };
  const reportedAt = sql`to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  await db
    .update(machines)
    .set({ failureReport: sql`${JSON.stringify(report)}::jsonb || jsonb_build_object('reported_at', ${reportedAt})` })
    .where(and(eq(machines.id, daemon.machineId), isNull(machines.deletedAt)));
}

/** A daemon of the machine registered: the failure it reported is over. Other uses of the column (a pool machine's start failure) stay. */
export async function clearFailure(tx: Tx, machineId: string): Promise<void> {
  await tx
    .update(machines)
    .set({ failureReport: null })
    .where(and(eq(machines.id, machineId), sql`${machines.failureReport}->>'stage' IS NOT NULL`));
}

/** The reference's MachineFailureReport, for the machine view (modules/machines/schemas.ts). */
export const MachineFailureReport = component("MachineFailureReport", Type.Object(
  {
    stage: Type.Enum([...FAILURE_STAGES]),
    exit_status: Type.Optional(Type.Integer()),
    output_tail: Type.String(),
    output_truncated: Type.Boolean(),
    daemon_version: Type.Optional(Type.String()),
    target_version: Type.Optional(Type.String()),
    reported_at: Type.String({ format: "date-time" }),
  },
  {
    additionalProperties: false,
    description: "The machine's most recent failure its daemon reported (POST /daemon/failures); cleared when a daemon of the machine registers again.",
  },
));

/** The machine view's `failure_report`: a daemon's report, or nothing (the column also holds a pool machine's start failure, which has no stage). */
export function failureReportView(stored: Record<string, unknown> | null): { failure_report?: FailureReport } {
  if (!stored || typeof stored["stage"] !== "string") return {};
  return { failure_report: stored as unknown as FailureReport };
}
