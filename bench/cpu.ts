/**
 * CPU time from Linux /proc, for the scale-out benchmark's question of which process takes the machine: per
 * process (utime + stime of /proc/<pid>/stat) and for the whole machine (/proc/stat). Processes that come and
 * go (PostgreSQL backends) are followed by sampling: a process first seen after the start counts from zero, and
 * one that ends counts up to its last sample.
 */
import { readFileSync } from "node:fs";

/** USER_HZ: the unit of /proc's CPU times, 100 on every Linux architecture svc runs on. */
const TICKS_PER_SECOND = 100;

/** CPU seconds `pid` has used (user + system), or undefined when it is gone or /proc is unreadable. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The machine's busy and total CPU seconds over all CPUs since boot (idle and iowait count as not busy). */
export function machineSeconds(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    const idle = ticks[3]! + ticks[4]!;
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** CPU seconds used by a changing group of processes between `start` and the last `sample`. */
export class CpuGroup {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();

  /** Records the current CPU time of `pids`; call it at the start (`started`), then regularly, then at the end. */
  sample(pids: Iterable<number>, started = false): void {
    for (const pid of pids) {
      const seconds = cpuSeconds(pid);
      if (seconds === undefined) continue;
      if (!this.first.has(pid)) this.first.set(pid, started ? seconds : 0);
      this.last.set(pid, seconds);
    }
  }

  seconds(): number {
    let sum = 0;
    for (const [pid, last] of this.last) sum += last - (this.first.get(pid) ?? 0);
    return sum;
  }
}
