import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { DriverSettings, MachineDriver, MachineStart } from "../index.js";

/*
 * The `local` provider's driver: each pool machine is an `svcd` child process of the svc process that runs
 * maintenance, with its own directory `<data dir>/machines/<machine uuid>/` holding the daemon's home
 * (`home/`), the default working directory (`work/`) and its output (`svcd.log`). The child gets a fresh
 * daemon token in its environment and a minimal environment otherwise (none of svc's own settings).
 *
 * Isolation: with bubblewrap (`bwrap`) the child sees the host's files read-only, its own directory
 * writable, an empty /tmp, and neither svc's data directory nor svc's processes; it shares the host's
 * network and user, and has no CPU or memory limits. Without bubblewrap it is an ordinary process of
 * svc's user. Either way this is for one-host and development use, not for untrusted agents.
 */

interface Child {
  process: ChildProcess;
  exited: Promise<void>;
}

/** How long a daemon gets to end its runtime after SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;
/** The end of a failed daemon's output kept for the machine's failure report. */
const LOG_TAIL = 2000;
const UUID_DIR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function createLocalDriver(settings: DriverSettings): Promise<MachineDriver> {
  const root = join(settings.dataDir, "machines");
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const bwrap = settings.isolation === "none" ? undefined : findExecutable("bwrap");
  if (settings.isolation === "bubblewrap" && !bwrap) throw new Error("SVC_LOCAL_MACHINE_ISOLATION is bubblewrap, but bwrap is not installed");
  const children = new Map<string, Child>();
  const dirOf = (machineId: string) => join(root, machineId);

  function argv(machine: MachineStart, dir: string): string[] {
    const daemon = [...settings.daemonCommand, "run", "--url", machine.url, "--home", join(dir, "home")];
    if (!bwrap) return daemon;
    // Later mounts cover earlier ones: the host read-only, an empty /tmp (but svcd's own files, should they be
    // installed under /tmp, read-only), then svc's data dir hidden, then this machine's dir.
    return [
      bwrap,
      ...["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"],
      ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
      ...daemonDirsUnderTmp(settings.daemonCommand).flatMap((path) => ["--ro-bind", path, path]),
      ...["--tmpfs", settings.dataDir, "--bind", dir, dir, "--chdir", join(dir, "work"), "--"],
      ...daemon,
    ];
  }

  async function stop(machineId: string): Promise<void> {
    const child = children.get(machineId);
    if (!child) return;
    signalGroup(child.process, "SIGTERM");
    const timer = setTimeout(() => signalGroup(child.process, "SIGKILL"), STOP_GRACE_MS);
    await child.exited;
    clearTimeout(timer);
  }

  async function start(machine: MachineStart): Promise<{ cwd: string }> {
    await stop(machine.machineId);
    const dir = dirOf(machine.machineId);
    const work = join(dir, "work");
    for (const sub of ["home", "work"]) mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
    const cwd = machine.cwd || work;
    const log = openSync(join(dir, "svcd.log"), "w", 0o600);
    const [command, ...args] = argv(machine, dir);
    let process: ChildProcess;
    try {
      // Its own process group, so stopping it reaches bubblewrap and the daemon together.
      process = spawn(command!, args, {
        cwd: existsSync(cwd) ? cwd : work,
        env: { PATH: globalThis.process.env["PATH"] ?? "/usr/bin:/bin", HOME: work, LANG: "C.UTF-8", SVC_DAEMON_TOKEN: machine.daemonToken },
        stdio: ["ignore", log, log],
        detached: true,
      });
    } finally {
      closeSync(log);
    }
    const exited = new Promise<void>((resolve) => {
      process.once("exit", () => resolve());
      process.once("error", () => resolve());
    });
    const child = { process, exited };
    children.set(machine.machineId, child);
    void exited.then(() => {
      if (children.get(machine.machineId) === child) children.delete(machine.machineId);
    });
    return { cwd };
  }

  return {
    start,

    // The child is stopped and its directory kept: waking is starting it again on the same home and work dir.
    sleep: (machineId) => stop(machineId),
    wake: (machine) => start(machine),

    running: (machineId) => children.has(machineId),

    lastFailure(machineId) {
      try {
        const text = readFileSync(join(dirOf(machineId), "svcd.log"), "utf8").trim();
        return text ? `svcd said: ${text.slice(-LOG_TAIL)}` : "svcd exited without output";
      } catch {
        return "svcd could not be started";
      }
    },

    async delete(machineId) {
      await stop(machineId);
      rmSync(dirOf(machineId), { recursive: true, force: true });
    },

    held() {
      const dirs = readdirSync(root).filter((name) => UUID_DIR.test(name));
      return [...new Set([...children.keys(), ...dirs])];
    },

    async shutdown() {
      await Promise.all([...children.keys()].map((id) => stop(id)));
    },
  };
}

/** The top-level directories under /tmp holding files of the daemon command (a checkout or install there). */
function daemonDirsUnderTmp(command: readonly string[]): string[] {
  const tops = command.filter((arg) => arg.startsWith("/tmp/")).map((arg) => `/tmp/${arg.split("/")[2]}`);
  return [...new Set(tops)].filter((path) => existsSync(path));
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function findExecutable(name: string): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    const path = join(dir, name);
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
