// Whether the workspaces' builds are older than their sources: `npm start` builds only then.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** What a build does not read: its own output, installed packages, tests, and dot-directories (.svc, .git). */
const NOT_SOURCES = new Set(["node_modules", "dist", "test"]);

/**
 * The workspaces whose build is missing or older than a file it is built from. A workspace is built from
 * every file in its directory but those above, and from the root's shared TypeScript settings. Comparing
 * modification times is cheap (one stat per source file) and errs towards building: a checkout or an
 * edit makes a source newer than the last build.
 */
export function staleWorkspaces(root) {
  const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const shared = newestModification(join(root, "tsconfig.base.json"));
  return (rootPackage.workspaces ?? []).filter((workspace) => {
    const dir = join(root, workspace);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (!pkg.scripts?.build) return false;
    const built = newestModification(join(dir, "dist"));
    return built === undefined || built < Math.max(shared ?? 0, newestModification(dir, NOT_SOURCES) ?? 0);
  });
}

/** The newest modification time of `path` or of any file beneath it, but the entries of `path` named in `skip`; undefined when absent. */
function newestModification(path, skip = new Set()) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest;
  for (const entry of readdirSync(path)) {
    if (skip.has(entry) || entry.startsWith(".")) continue;
    const time = newestModification(join(path, entry));
    if (time !== undefined && (newest === undefined || time > newest)) newest = time;
  }
  return newest;
}
