import type { MachineProvider } from "../../../config.js";
import type { Issue } from "../../../platform/errors.js";
import { localProviderRules } from "./local/rules.js";

/*
 * Machine providers: what turns a pool machine's row into a computer running `svcd`. Each provider is a
 * folder here with two parts:
 *
 *  - its rules (`ProviderRules`): what a pool or pool grant may set for it, checked when they are written,
 *    in any svc process;
 *  - its driver (`MachineDriver`): starts, stops and deletes machines, used only by the process that runs
 *    maintenance (lifecycle.ts), which calls it outside any transaction.
 *
 * svc has `local` (local/): each machine is an svcd child process of svc on the same host. A container or
 * cloud provider (Docker, Kubernetes, Daytona…) is one more folder with both parts, added to PROVIDERS and
 * to `createDrivers`; lifecycle.ts, the tools and the API stay as they are.
 */

export interface ProviderRules {
  /**
   * Whether its machines may sleep: the driver can stop a machine's daemon keeping its state (`sleep`) and
   * start it again on the same state (`wake`). svc never puts a machine of a provider without it to sleep,
   * and the daemon's sleep route answers 409 not_wake_capable for it.
   */
  sleeps: boolean;
  /** Problems with a pool's (or a grant's) provider settings, as issues at the given paths. */
  check(settings: { providerConfig?: Record<string, unknown>; options?: Record<string, unknown>; authSecret?: string }, paths: ProviderPaths): Issue[];
}

export interface ProviderPaths {
  providerConfig: string;
  options: string;
  authSecret: string;
}

/** What a driver needs to start a machine's daemon. */
export interface MachineStart {
  machineId: string;
  orgId: string;
  /** The daemon token svc minted for this start; earlier ones are revoked. */
  daemonToken: string;
  /** svc's origin as the machine reaches it. */
  url: string;
  /** The machine's configured working directory; empty lets the provider choose one. */
  cwd: string;
  cpu: number | null;
  memoryMb: number | null;
}

export interface MachineDriver {
  /**
   * Starts (or starts again) the machine's daemon. Resolves once it was started, not once it is online:
   * svc sees that when the daemon registers. Returns the working directory processes use by default.
   */
  start(machine: MachineStart): Promise<{ cwd: string }>;
  /** Whether this driver has the machine's daemon running. */
  running(machineId: string): boolean;
  /** Why the machine's daemon is not running, for failure reports (its last output, its exit). */
  lastFailure(machineId: string): string;
  /**
   * Puts the machine to sleep: stops its daemon but keeps what it holds (the daemon's home, the working
   * directory, installed tools), so `wake` resumes the same machine. Idempotent. svc calls it after it
   * ended the machine's runtime and revoked its token, only when no process work is queued or running.
   * A container provider stops (or pauses) the container; a cloud provider suspends the sandbox.
   */
  sleep(machineId: string): Promise<void>;
  /**
   * Wakes a sleeping machine: starts its daemon again on the state `sleep` kept, with the fresh token in
   * `machine`. Like `start`, it resolves once the daemon was started; svc sees it online when it registers.
   */
  wake(machine: MachineStart): Promise<{ cwd: string }>;
  /** Stops the machine's daemon and removes everything the provider made for it; idempotent. */
  delete(machineId: string): Promise<void>;
  /** The machines this driver holds something for, so maintenance can delete those svc no longer knows. */
  held(): string[];
  /** Stops every daemon this driver started (svc is shutting down); the machines stay and start again later. */
  shutdown(): Promise<void>;
}

export interface DriverSettings {
  dataDir: string;
  /** argv that runs `svcd`; `run --url … --home …` is appended. */
  daemonCommand: readonly string[];
  isolation: "none" | "bubblewrap";
  log: DriverLog;
}

export interface DriverLog {
  warn(obj: unknown, msg: string): void;
  error(obj: unknown, msg: string): void;
}

const PROVIDERS: Record<MachineProvider, ProviderRules> = {
  local: localProviderRules,
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export function providerRules(name: string): ProviderRules | undefined {
  return Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name as MachineProvider] : undefined;
}

/** One driver per provider the operator enabled, for the maintenance process. */
export async function createDrivers(enabled: readonly MachineProvider[], settings: DriverSettings): Promise<Record<string, MachineDriver>> {
  const drivers: Record<string, MachineDriver> = {};
  if (enabled.includes("local")) {
    const { createLocalDriver } = await import("./local/driver.js");
    drivers["local"] = await createLocalDriver(settings);
  }
  return drivers;
}
