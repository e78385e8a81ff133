import type { DaemonApi } from "./api.js";

/*
 * `POST /daemon/failures` (reference operation recordMachineFailure): svcd tells svc why it cannot start or
 * register when waiting will not fix it (its home unusable, its registration refused), so the machine's
 * owner sees the reason in the machine's `failure_report` instead of only "offline". Best effort and
 * bounded: svc may be the thing that is down.
 */

const TIMEOUT_MS = 5_000;
/** The body carries the last 4,096 characters of the output, and one more when there was more. */
const TAIL_CHARS = 4096;

export type FailureStage = "daemon_start";

export async function reportFailure(api: DaemonApi, failure: { stage: FailureStage; output: string; exitStatus?: number; version: string }): Promise<boolean> {
  const url = new URL("/api/v1/daemon/failures", api.origin);
  url.searchParams.set("stage", failure.stage);
  url.searchParams.set("daemon_version", failure.version);
  if (failure.exitStatus !== undefined) url.searchParams.set("exit_status", String(failure.exitStatus));
  const body = failure.output.length > TAIL_CHARS ? failure.output.slice(-(TAIL_CHARS + 1)) : failure.output;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: api.authorization, "content-type": "text/plain; charset=utf-8" },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    return response.status === 204;
  } catch {
    return false;
  }
}
