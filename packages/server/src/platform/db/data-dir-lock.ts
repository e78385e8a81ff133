import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";

/** Another live process holds the data directory. */
export class DataDirInUse extends Error {
  constructor(
    readonly lockFile: string,
    readonly pid: number,
  ) {
    super(
      `the data directory is in use by svc process ${pid} (${lockFile}); the embedded database allows one process. ` +
        "Stop that process, or delete the file if no such svc process runs.",
    );
  }
}

/**
 * Claims `dir` for this process, since PGlite's files must have a single writer and PGlite itself does
 * not guard them. The claim is a file holding our pid, created exclusively; a file whose process is gone
 * (a crash, a kill -9) is taken over. Returns the release, which removes the file if it is still ours.
 */
export function lockDataDir(dir: string): () => void {
  const file = join(dir, "svc.pid");
  // Twice at most: the second attempt follows the removal of a stale file.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        if (holder(file) === process.pid) removeIfPresent(file);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = holder(file);
    if (pid !== undefined && pid !== process.pid && alive(pid)) throw new DataDirInUse(file, pid);
    // Stale: remove it only if it still names the dead process, so a racing start's fresh claim survives.
    if (holder(file) === pid) removeIfPresent(file);
  }
  throw new DataDirInUse(file, holder(file) ?? 0);
}

function removeIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

function holder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
