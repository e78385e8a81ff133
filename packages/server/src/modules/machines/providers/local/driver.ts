import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { DriverSettings, MachineDriver, MachineStart } from "../index.js";
import { startSvcSocket, type SvcSocket } from "./svc-socket.js";

/*
 * The `local` provider's driver: each pool machine is an `svcd` child process of the svc process that runs
 * maintenance, with its own directory `<data dir>/machines/<machine uuid>/` holding the daemon's home
 * (`home/`), the default working directory (`work/`) and its output (`svcd.log`). The child gets a fresh
 * daemon token on its standard input (`--token-file -`), never in its environment: the environment of the
 * sandbox's first process and of svcd stays readable in /proc/<pid>/environ to every command on the
 * machine. Its environment is otherwise minimal (none of svc's own settings).
 *
 * Isolation (`SVC_LOCAL_MACHINE_ISOLATION`, docs/machines.md "What the local provider isolates"): with
 * `bubblewrap` the child runs in namespaces of its own (user, pid, network, ipc, uts) without capabilities.
 * It sees the host's files read-only, its own directory writable, and an empty /tmp, /run and home of
 * svc's user; svc's data directory (the master key, the embedded database, other machines) is hidden.
 * Its network is a loopback of its own: it reaches svc only through a Unix socket in its directory that
 * svc relays to its API (svc-socket.ts), so no database, other service or outside address is reachable.
 * It still runs as svc's user, with no CPU or memory limits. With `none` it is an ordinary process of
 * svc's user, and svc says so in its log at start and at every machine start.
 */

interface Child {
  process: ChildProcess;
  exited: Promise<void>;
  socket: SvcSocket | undefined;
}

/** How long a daemon gets to end its runtime after SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;
/** The end of a failed daemon's output kept for the machine's failure report. */
const LOG_TAIL = 2000;
const UUID_DIR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function createLocalDriver(settings: DriverSettings): Promise<MachineDriver> {
  const root = join(settings.dataDir, "machines");
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const sandboxed = settings.isolation === "bubblewrap";
  const bwrap = sandboxed ? findExecutable("bwrap") : undefined;
  const missingBwrap = "SVC_LOCAL_MACHINE_ISOLATION is bubblewrap (the default), but bwrap is not installed: install bubblewrap, or set SVC_LOCAL_MACHINE_ISOLATION=none to run local machines unisolated";
  const unisolated = "SVC_LOCAL_MACHINE_ISOLATION=none: local pool machines run as svc's user with svc's view of this host (its data directory, master key and network included); use it only when every tenant is trusted";
  if (sandboxed && !bwrap) settings.log.error({}, `${missingBwrap}; local pool machines will not start`);
  if (!sandboxed) settings.log.warn({}, unisolated);
  const children = new Map<string, Child>();
  const dirOf = (machineId: string) => join(root, machineId);

  function sandbox(bwrap: string, dir: string, daemon: string[]): string[] {
    const hidden = ["/tmp", "/run", ...(homedir() !== "/" ? [homedir()] : [])];
    // Later mounts cover earlier ones: the host read-only; empty /tmp, /run and home of svc's user (but
    // svcd's own files, should they be installed there, read-only); svc's data dir hidden; this machine's dir.
    return [
      bwrap,
      ...["--die-with-parent", "--unshare-user-try", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"],
      ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"],
      ...hidden.flatMap((path) => ["--tmpfs", path]),
      ...daemonDirsUnder(hidden, settings.daemonCommand).flatMap((path) => ["--ro-bind", path, path]),
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
    if (sandboxed && !bwrap) throw new Error(missingBwrap);
    if (!sandboxed) settings.log.warn({ machine_id: machine.machineId }, unisolated);
    const dir = dirOf(machine.machineId);
    const work = join(dir, "work");
    for (const sub of ["home", "work"]) mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
    const cwd = machine.cwd || work;
    const home = join(dir, "home");
    const socket = bwrap ? await startSvcSocket(join(dir, "svc.sock"), machine.url) : undefined;
    const [command, ...args] = bwrap
      ? sandbox(bwrap, dir, [...settings.daemonCommand, "run", "--socket", socket!.path, "--home", home, "--token-file", "-"])
      : [...settings.daemonCommand, "run", "--url", machine.url, "--home", home, "--token-file", "-"];
    const log = openSync(join(dir, "svcd.log"), "w", 0o600);
    let process: ChildProcess;
    try {
      // Its own process group, so stopping it reaches bubblewrap and the daemon together.
      process = spawn(command!, args, {
        cwd: existsSync(cwd) ? cwd : work,
        env: { PATH: globalThis.process.env["PATH"] ?? "/usr/bin:/bin", HOME: work, LANG: "C.UTF-8" },
        stdio: ["pipe", log, log],
        detached: true,
      });
      // A daemon that died before reading (EPIPE) is seen through its exit and its log.
      process.stdin!.on("error", () => {});
      process.stdin!.end(`${machine.daemonToken}\n`);
    } catch (err) {
      await socket?.close();
      throw err;
    } finally {
      closeSync(log);
    }
    const exited = new Promise<void>((resolve) => {
      process.once("exit", () => resolve());
      process.once("error", () => resolve());
    }).then(() => socket?.close());
    const child = { process, exited, socket };
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
      if (sandboxed && !bwrap) return missingBwrap;
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

/** The top-level directories under `hidden` ones holding files of the daemon command (node or a checkout there). */
function daemonDirsUnder(hidden: readonly string[], command: readonly string[]): string[] {
  const tops = hidden.flatMap((dir) =>
    command.filter((arg) => arg.startsWith(`${dir}/`)).map((arg) => join(dir, arg.slice(dir.length + 1).split("/")[0]!)),
  );
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
