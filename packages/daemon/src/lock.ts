import { openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "./supervisor.js";

/*
 * One svcd per home. Two daemons on one home would both adopt its processes and send its outbox, and svc
 * would see them replace each other as the machine's runtime over and over. The lock is a file created
 * exclusively (O_EXCL) holding the owner's pid; a lock whose pid is no longer alive was left by a svcd that
 * was killed (SIGKILL, power loss) and is taken over. A pid the kernel has since given to another process
 * reads as alive: svcd then refuses, naming the pid, and removing the file is the way out.
 */

export class HomeLocked extends Error {}

export interface HomeLock {
  release(): void;
}

export function lockHome(root: string): HomeLock {
  const path = join(root, "svcd.lock");
  // Two tries: the second after removing a stale lock (another svcd may win that race; it then holds it).
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: () => releaseIfOwned(path) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = lockOwner(root);
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
      throw new HomeLocked(`another svcd (pid ${owner}) is running on the home ${root}; stop it first (each machine needs a home of its own), or remove ${path} if that pid is not svcd`);
    }
    rmSync(path, { force: true });
  }
  throw new HomeLocked(`another svcd took the home ${root} at the same time`);
}

/** The pid in the home's lock file, if there is one. */
export function lockOwner(root: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(root, "svcd.lock"), "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The running svcd's pid for this home, when its lock names a live process. */
export function runningOwner(root: string): number | undefined {
  const pid = lockOwner(root);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

function releaseIfOwned(path: string): void {
  try {
    if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}
