import { createHash, randomUUID } from "node:crypto";
import { closeSync, constants, readFileSync, fstatSync, fsyncSync, lstatSync, openSync, readSync, renameSync, rmSync, statSync, writeSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { TransferOffer } from "@svc/protocol";
import { TOKEN_FD } from "./transfer.js";

/*
 * svcd's transfer program (see transfer.ts): one upload_file or download_file, run by the wrapper as the
 * process's command. Success: one JSON line on stdout, exit 0. Failure: the reason on stderr, exit 1. The
 * offer's timeout bounds the whole run.
 *
 * Path rules, checked here on the machine:
 * - a machine path is absolute, `~` or `~/…` (the process's HOME), or relative to the binding's working
 *   directory; `~user` is refused;
 * - upload: the source must be a regular file of 1 byte to 10 MiB; a symlink is followed to its target
 *   (which must be a regular file); directories, FIFOs, sockets and devices are refused;
 * - download: the destination's directory must exist; an existing directory there is refused; the file is
 *   written to a temporary name in that directory, synced and renamed over the destination, so a reader sees
 *   the old file or the new one. A symlink at the destination is replaced by the file (its target is left
 *   alone), and a replaced regular file keeps its permission bits.
 */

class Refusal extends Error {}

/** svcd's token, from the pipe svcd wrote it to (transfer.ts): read whole, then closed. */
function readToken(): string {
  try {
    return readFileSync(TOKEN_FD, "utf8").trim();
  } catch {
    return "";
  } finally {
    try {
      closeSync(TOKEN_FD);
    } catch {
      // Never opened.
    }
  }
}

const spec = JSON.parse(process.env["SVCD_TRANSFER"] ?? "{}") as TransferOffer;
const origin = process.env["SVCD_TRANSFER_URL"] ?? "";
const token = readToken();
const base = process.env["SVCD_TRANSFER_CWD"] || process.cwd();
const deadline = AbortSignal.timeout(Math.max(1, spec.timeout_seconds) * 1000);
let temporary: string | undefined;

/** A stop (stop_process, a cancel) leaves no temporary file behind; the status still says killed by SIGTERM. */
process.once("SIGTERM", () => {
  if (temporary) rmSync(temporary, { force: true });
  process.kill(process.pid, "SIGTERM");
});

function machinePath(path: string, what: string): string {
  if (path === "~") return home();
  if (path.startsWith("~/")) return join(home(), path.slice(2));
  if (path.startsWith("~")) throw new Refusal(`${what} ${path}: ~user paths are not supported; use ~/…, an absolute path or a relative one`);
  return isAbsolute(path) ? path : resolve(base, path);
}

function home(): string {
  return process.env["HOME"] || homedir();
}

function describe(err: unknown, path: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `${path} does not exist`;
  if (code === "EACCES" || code === "EPERM") return `${path} cannot be accessed: permission denied`;
  if (code === "ENOTDIR") return `${path}: a component of the path is not a directory`;
  if (code === "ELOOP") return `${path}: too many levels of symbolic links`;
  return `${path}: ${(err as Error).message}`;
}

async function upload(): Promise<Record<string, unknown>> {
  const path = machinePath(spec.source ?? "", "source");
  let fd: number;
  try {
    // Non-blocking: opening a FIFO must not wait for a writer; fstat below refuses it.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new Refusal(`source ${describe(err, path)}`);
  }
  let bytes: Buffer;
  try {
    checkSource(path, fstatSync(fd));
    bytes = readAtMost(fd, spec.max_bytes + 1);
  } finally {
    closeSync(fd);
  }
  if (bytes.length === 0 && !spec.allow_empty) throw new Refusal(`source ${path} is empty; artifacts must be non-empty`);
  if (bytes.length > spec.max_bytes) throw new Refusal(tooLarge(path, bytes.length));
  const url = new URL(`/api/v1/daemon/tool-calls/${encodeURIComponent(spec.tool_call_id)}/artifact?filename=${encodeURIComponent(basename(path))}`, origin);
  const response = await call(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" }, body: bytes });
  const answer = (await response.json()) as { artifact_id?: string };
  return { source: path, artifact_id: answer.artifact_id, size_bytes: bytes.length, digest: digestOf(bytes) };
}

function checkSource(path: string, stats: Stats): void {
  if (stats.isDirectory()) throw new Refusal(`source ${path} is a directory; upload_file copies one regular file (pack a directory first, e.g. tar czf dir.tgz dir)`);
  if (!stats.isFile()) throw new Refusal(`source ${path} is not a regular file (a FIFO, socket or device); upload_file copies regular files only`);
  if (stats.size === 0 && !spec.allow_empty) throw new Refusal(`source ${path} is empty; artifacts must be non-empty`);
  if (stats.size > spec.max_bytes) throw new Refusal(tooLarge(path, stats.size));
}

const tooLarge = (path: string, size: number) => `source ${path} is ${size} bytes; upload_file copies at most ${spec.max_bytes} bytes`;

function readAtMost(fd: number, limit: number): Buffer {
  const buffer = Buffer.alloc(limit);
  let length = 0;
  while (length < limit) {
    const read = readSync(fd, buffer, length, limit - length, null);
    if (read === 0) break;
    length += read;
  }
  return buffer.subarray(0, length);
}

async function download(): Promise<Record<string, unknown>> {
  const given = spec.destination ?? "";
  const path = machinePath(given, "destination");
  if (given.endsWith("/")) throw new Refusal(`destination ${given} names a directory; give the file's full path, such as ${given}file.txt`);
  const existing = lstatOrNull(path);
  if (existing?.isDirectory()) throw new Refusal(`destination ${path} is a directory; give the file's full path inside it`);
  const parent = dirname(path);
  let parentStats: Stats;
  try {
    parentStats = statSync(parent);
  } catch (err) {
    throw new Refusal(`the destination's directory ${describe(err, parent)}; create it first (for example with run_command mkdir -p)`);
  }
  if (!parentStats.isDirectory()) throw new Refusal(`the destination's directory ${parent} is not a directory`);

  // A memory file comes from the path svc named; only a path on svc's own origin is followed.
  const artifactPath = `/api/v1/daemon/tool-calls/${encodeURIComponent(spec.tool_call_id)}/artifacts/${encodeURIComponent(spec.artifact_id ?? "")}/content`;
  const url = new URL(spec.content_path?.startsWith("/api/v1/daemon/") ? spec.content_path : artifactPath, origin);
  const response = await call(url, { method: "GET", headers: { authorization: `Bearer ${token}` } });
  const bytes = Buffer.from(await response.arrayBuffer());
  const digest = digestOf(bytes);
  if (bytes.length !== spec.size_bytes || digest !== spec.digest) throw new Refusal("the bytes svc sent do not match the file's digest; nothing was written");
  writeReplacing(path, bytes, existing?.isFile() ? existing.mode & 0o7777 : undefined);
  return { destination: path, digest, size_bytes: bytes.length };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Temporary file in the same directory, synced, then renamed over `path`: the replacement is atomic. */
function writeReplacing(path: string, bytes: Buffer, mode: number | undefined): void {
  const staged = join(dirname(path), `.${basename(path)}.svcd-${randomUUID().slice(0, 8)}.tmp`);
  temporary = staged;
  try {
    const fd = openSync(staged, "wx", mode ?? 0o666);
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(staged, path);
    temporary = undefined;
  } catch (err) {
    rmSync(staged, { force: true });
    temporary = undefined;
    throw new Refusal(`could not write ${describe(err, path)}`);
  }
}

/** A request to svc bounded by the transfer's deadline; anything but success is a refusal with svc's reason. */
async function call(url: URL, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: deadline });
  } catch (err) {
    if (deadline.aborted) throw new Refusal(timedOut());
    throw new Refusal(`svc could not be reached: ${(err as Error).message}`);
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let reason = text.slice(0, 500);
  try {
    reason = (JSON.parse(text) as { error?: string }).error ?? reason;
  } catch {
    // not the error envelope: the text as it is
  }
  throw new Refusal(`svc refused the transfer (HTTP ${response.status}): ${reason}`);
}

const timedOut = () => `the transfer did not finish within its ${spec.timeout_seconds} s timeout`;
const digestOf = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function main(): Promise<number> {
  try {
    const line = spec.kind === "upload" ? await upload() : spec.kind === "download" ? await download() : undefined;
    if (!line) throw new Refusal(`svcd cannot run a ${String(spec.kind)} transfer`);
    process.stdout.write(`${JSON.stringify(line)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Refusal ? err.message : `unexpected failure: ${(err as Error).message}`}\n`);
    return 1;
  }
}

const timer = setTimeout(() => {
  process.stderr.write(`${timedOut()}\n`);
  process.exit(1);
}, Math.max(1, spec.timeout_seconds) * 1000);
main().then((code) => {
  clearTimeout(timer);
  process.exitCode = code;
});
