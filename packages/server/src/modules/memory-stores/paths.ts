import { AppError } from "../../platform/errors.js";
import { MAX_PATH_BYTES } from "./schemas.js";

/**
 * Why `path` cannot name a file in a store, or undefined when it can: relative, `/`-separated, every
 * segment non-empty and neither `.` nor `..`, at most 512 UTF-8 bytes, no control characters. The same
 * path is later a file under the agents' memory mount, so it must not climb out of its store.
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return "must not be empty";
  if (Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes of UTF-8`;
  if (path.startsWith("/")) return "must be relative (no leading /)";
  if (/\p{Cc}/u.test(path)) return "must not contain control characters";
  for (const segment of path.split("/")) {
    if (segment === "") return "must not contain an empty segment (// or a trailing /)";
    if (segment === "." || segment === "..") return `must not contain a "${segment}" segment`;
  }
  return undefined;
}

/** A 400 validation_failed naming the body member `path` when it is not a valid memory path. */
export function requireValidPath(path: string): void {
  const problem = pathProblem(path);
  if (problem) throw new AppError("validation_failed", "request failed validation", { issues: [{ path: "/path", message: problem }] });
}
