import type { Issue } from "../../platform/errors.js";

/** A pool's or a grant's capacity: null means unset (no limit, or inherited). */
export interface Capacity {
  defaultMachineCpu: number | null;
  defaultMachineMemoryMb: number | null;
  maxTotalMachines: number | null;
  maxTotalCpu: number | null;
  maxTotalMemoryMb: number | null;
  minMachineCpu: number | null;
  minMachineMemoryMb: number | null;
  maxMachineCpu: number | null;
  maxMachineMemoryMb: number | null;
}

const FIELD: Record<keyof Capacity, string> = {
  defaultMachineCpu: "default_machine_cpu",
  defaultMachineMemoryMb: "default_machine_memory_mb",
  maxTotalMachines: "max_total_machines",
  maxTotalCpu: "max_total_cpu",
  maxTotalMemoryMb: "max_total_memory_mb",
  minMachineCpu: "min_machine_cpu",
  minMachineMemoryMb: "min_machine_memory_mb",
  maxMachineCpu: "max_machine_cpu",
  maxMachineMemoryMb: "max_machine_memory_mb",
};

/** The capacity fields of a pool or grant row (which have more). */
export function capacityOf(source: Capacity): Capacity {
  return Object.fromEntries((Object.keys(FIELD) as Array<keyof Capacity>).map((key) => [key, source[key]])) as unknown as Capacity;
}

/** `low <= high` where both are set, reported at `low`'s field. */
const ORDER: Array<[keyof Capacity, keyof Capacity]> = [
  ["minMachineCpu", "maxMachineCpu"],
  ["minMachineMemoryMb", "maxMachineMemoryMb"],
  ["minMachineCpu", "defaultMachineCpu"],
  ["minMachineMemoryMb", "defaultMachineMemoryMb"],
  ["defaultMachineCpu", "maxMachineCpu"],
  ["defaultMachineMemoryMb", "maxMachineMemoryMb"],
  ["maxMachineCpu", "maxTotalCpu"],
  ["maxMachineMemoryMb", "maxTotalMemoryMb"],
  ["defaultMachineCpu", "maxTotalCpu"],
  ["defaultMachineMemoryMb", "maxTotalMemoryMb"],
];

/** A capacity that cannot hold one machine of its own limits: each inconsistency as an issue. */
export function capacityIssues(capacity: Capacity): Issue[] {
  const issues: Issue[] = [];
  for (const [low, high] of ORDER) {
    const [a, b] = [capacity[low], capacity[high]];
    if (a !== null && b !== null && a > b) issues.push({ path: `/${FIELD[low]}`, message: `must not exceed ${FIELD[high]} (${b})` });
  }
  return issues;
}

/** Where a grant would widen its pool: limits are hard constraints a grant may only narrow. */
export function narrowingIssues(pool: Capacity, grant: Capacity): Issue[] {
  const issues: Issue[] = [];
  const atMost: Array<keyof Capacity> = ["maxTotalMachines", "maxTotalCpu", "maxTotalMemoryMb", "maxMachineCpu", "maxMachineMemoryMb"];
  for (const key of atMost) {
    const [limit, value] = [pool[key], grant[key]];
    if (limit !== null && value !== null && value > limit) issues.push({ path: `/${FIELD[key]}`, message: `must not exceed the pool's ${FIELD[key]} (${limit})` });
  }
  for (const key of ["minMachineCpu", "minMachineMemoryMb"] as const) {
    const [limit, value] = [pool[key], grant[key]];
    if (limit !== null && value !== null && value < limit) issues.push({ path: `/${FIELD[key]}`, message: `must not be below the pool's ${FIELD[key]} (${limit})` });
  }
  return issues;
}

/** What a grant's machines get: the grant's value where it sets one, else the pool's. */
export function effectiveCapacity(pool: Capacity, grant: Capacity): Capacity {
  const out = { ...pool };
  for (const key of Object.keys(FIELD) as Array<keyof Capacity>) if (grant[key] !== null) out[key] = grant[key];
  return out;
}
