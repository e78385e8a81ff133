/**
 * What a scale-out shape used while it ran: PostgreSQL connections of the benchmark's database (pg_stat_activity,
 * sampled) and CPU time by process group (/proc), beside the whole machine's, so a run can say which resource ran
 * out first. The machine is shared by everything: svc, PostgreSQL, HAProxy, the fake provider and the load
 * generator all run on the same CPUs, and "other" is whatever else ran meanwhile (PostgreSQL's background
 * processes, other jobs on the machine).
 */
import type { Role } from "./processes.js";
import { CpuGroup, machineSeconds } from "./cpu.js";
import type { Deployment } from "./scale-deployment.js";

const SAMPLE_MS = 500;

export type CpuPart = "postgres" | Role | "haproxy" | "provider" | "generator" | "other";

export interface Usage {
  seconds: number;
  cpus: number;
  /** The machine's busy share of all its CPUs over the window, 0–1; undefined without /proc. */
  machineBusy?: number;
  /** Each part's share of all the machine's CPUs (so the parts add up to machineBusy). */
  cpu: Partial<Record<CpuPart, number>>;
  /** The most connections of the benchmark's database seen at once, in all and by role. */
  connections: { total: number } & Partial<Record<Role, number>>;
}

interface Activity {
  pid: number;
  application_name: string;
}

/** Samples `deployment` from `start` until `stop`; `others` are the pids of the provider and balancer. */
export class UsageSampler {
  private readonly groups = new Map<CpuPart, CpuGroup>();
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();
  private began = 0;
  private machineBefore: ReturnType<typeof machineSeconds>;
  private generatorBefore = process.cpuUsage();
  private readonly peak: Usage["connections"] = { total: 0 };

  constructor(
    private readonly deployment: Deployment,
    private readonly cpus: number,
    private readonly others: { haproxy: number; provider: number },
  ) {}

  async start(): Promise<void> {
    this.began = performance.now();
    this.machineBefore = machineSeconds();
    this.generatorBefore = process.cpuUsage();
    await this.sample(true);
    this.timer = setInterval(() => (this.sampling = this.sampling.then(() => this.sample(false))), SAMPLE_MS);
  }

  async stop(): Promise<Usage> {
    clearInterval(this.timer);
    await this.sampling;
    await this.sample(false);
    const seconds = (performance.now() - this.began) / 1000;
    const machineAfter = machineSeconds();
    const used = process.cpuUsage(this.generatorBefore);
    const capacity = seconds * this.cpus;
    const cpu: Usage["cpu"] = { generator: (used.user + used.system) / 1e6 / capacity };
    for (const [part, group] of this.groups) cpu[part] = group.seconds() / capacity;
    let machineBusy: number | undefined;
    if (this.machineBefore && machineAfter) {
      machineBusy = (machineAfter.busy - this.machineBefore.busy) / (machineAfter.total - this.machineBefore.total);
      const known = Object.values(cpu).reduce((sum, share) => sum + (share ?? 0), 0);
      cpu.other = Math.max(0, machineBusy - known);
    }
    return { seconds, cpus: this.cpus, machineBusy, cpu, connections: { ...this.peak } };
  }

  private group(part: CpuPart): CpuGroup {
    let group = this.groups.get(part);
    if (!group) this.groups.set(part, (group = new CpuGroup()));
    return group;
  }

  private async sample(first: boolean): Promise<void> {
    // A failed sample (a connection lost in the kill run, say) only loses that sample.
    const rows = await this.deployment
      .query<Activity>("SELECT pid, application_name FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'svc-bench'", [this.deployment.databaseName])
      .catch(() => [] as Activity[]);
    this.group("postgres").sample(rows.map((r) => r.pid), first);
    const now: Usage["connections"] = { total: rows.length };
    for (const row of rows) {
      const role = /^svc-(api|worker|maintenance)-/.exec(row.application_name)?.[1] as Role | undefined;
      if (role) now[role] = (now[role] ?? 0) + 1;
    }
    for (const key of Object.keys(now) as Array<keyof Usage["connections"]>) this.peak[key] = Math.max(this.peak[key] ?? 0, now[key] ?? 0);
    for (const { role, child } of this.deployment.processes()) this.group(role).sample([child.pid], first);
    this.group("haproxy").sample([this.others.haproxy], first);
    this.group("provider").sample([this.others.provider], first);
  }
}

