import { spawn } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import path from "node:path";

/*
 * write_file's `script` (reference docs/tools/built-in.mdx, write_file): a GNU sed script with extended
 * regular expressions that transforms a memory file. "Scripts cannot read other files, write files, or run
 * commands, and run with resource limits." svc keeps that with three layers, all of which must be present:
 *  - GNU sed's own `--sandbox`, which refuses the e, r, R, w and W commands (and s///e, s///w);
 *  - bubblewrap: new user, mount, PID, network, IPC and UTS namespaces, an empty environment, and a root
 *    that holds only /usr (read-only) with /lib, /bin … as the host lays them out: no /home, no data
 *    directory, no network;
 *  - prlimit: 256 MiB of address space, 5 s of CPU, no file may be written (fsize 0), 16 descriptors;
 *    and a 10 s wall clock from here, and output cut at the file size limit.
 * The file's content goes in on stdin and the new content comes out on stdout. When any layer is missing
 * on this host (no bwrap, no user namespaces, a sed without --sandbox), scripts are refused with a tool
 * error that says so; svc never runs an unsandboxed sed.
 */

const WALL_MS = 10_000;
const ADDRESS_SPACE = 256 * 1024 * 1024;
const CPU_SECONDS = 5;
const STDERR_BYTES = 4096;

export type SedResult = { output: string } | { error: string };

interface Sandbox {
  bwrap: string;
  prlimit: string;
  sed: string;
  /** bwrap's arguments that lay out the root: /usr, and /lib, /bin … as on the host. */
  layout: string[];
}

let probed: Promise<Sandbox | { unavailable: string }> | undefined;

async function which(name: string): Promise<string | undefined> {
  for (const dir of (process.env["PATH"] ?? "/usr/bin:/bin").split(":")) {
    const candidate = path.join(dir || ".", name);
    try {
      await fs.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function layout(): Promise<string[]> {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["/lib", "/lib64", "/lib32", "/bin", "/sbin"]) {
    const stat = await fs.lstat(dir).catch(() => undefined);
    if (!stat) continue;
    if (stat.isSymbolicLink()) args.push("--symlink", await fs.readlink(dir), dir);
    else if (stat.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  return args;
}

async function probe(): Promise<Sandbox | { unavailable: string }> {
  const [bwrap, prlimit, sed] = await Promise.all([which("bwrap"), which("prlimit"), which("sed")]);
  if (!bwrap) return { unavailable: "bubblewrap (bwrap) is not installed on the svc host" };
  if (!prlimit) return { unavailable: "prlimit (util-linux) is not installed on the svc host" };
  if (!sed) return { unavailable: "GNU sed is not installed on the svc host" };
  const sandbox: Sandbox = { bwrap, prlimit, sed: await fs.realpath(sed), layout: await layout() };
  if (!sandbox.sed.startsWith("/usr/")) return { unavailable: "sed is not under /usr, which is all the sandbox shows" };
  // The probe proves every layer: the namespaces start, the limits apply, and --sandbox refuses `w`.
  const works = await execute(sandbox, "s/a/b/", "a\n");
  if (!("output" in works) || works.output !== "b\n") return { unavailable: `the sandbox does not start here (${"error" in works ? works.error : "unexpected output"})` };
  const refused = await execute(sandbox, "w /tmp/svc-sed-probe", "a\n");
  if ("output" in refused) return { unavailable: "this sed does not refuse file commands in --sandbox mode" };
  return sandbox;
}

/** Runs `script` over `input` in the sandbox; or says why svc cannot run it on this host. */
export async function runSedScript(script: string, input: string, maxOutputBytes: number): Promise<SedResult> {
  probed ??= probe();
  const sandbox = await probed;
  if ("unavailable" in sandbox) {
    return { error: `svc cannot run sed scripts safely on this host (${sandbox.unavailable}), so write_file's script is refused. Read the file and write its new content with content instead.` };
  }
  return execute(sandbox, script, input, maxOutputBytes);
}

function execute(sandbox: Sandbox, script: string, input: string, maxOutputBytes = 1024 * 1024): Promise<SedResult> {
  const args = [
    ...sandbox.layout,
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--setenv", "LC_ALL", "C.UTF-8",
    "--proc", "/proc",
    "--dev", "/dev",
    "--chdir", "/",
    "--",
    sandbox.prlimit,
    `--as=${ADDRESS_SPACE}`,
    `--cpu=${CPU_SECONDS}`,
    "--fsize=0",
    "--nofile=16",
    "--",
    sandbox.sed,
    "--sandbox",
    "-E",
    "-e",
    script,
  ];
  return new Promise((resolve) => {
    const child = spawn(sandbox.bwrap, args, { stdio: ["pipe", "pipe", "pipe"], env: {} });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let verdict: string | undefined;
    const timer = setTimeout(() => stop(`the script ran longer than ${WALL_MS / 1000} s`), WALL_MS);
    function stop(reason: string) {
      verdict ??= reason;
      child.kill("SIGKILL");
    }
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutputBytes) stop(`the script's output exceeded ${maxOutputBytes} bytes`);
      else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (err.length < STDERR_BYTES) err += chunk.toString("utf8");
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ error: `the sandbox could not start: ${e.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (verdict) return resolve({ error: verdict });
      if (signal === "SIGXCPU" || signal === "SIGKILL") return resolve({ error: "the script exceeded its CPU or memory limit" });
      if (code !== 0) return resolve({ error: `sed failed (exit ${code}): ${err.trim().slice(0, STDERR_BYTES) || "no message"}` });
      const bytes = Buffer.concat(out);
      if (bytes.includes(0)) return resolve({ error: "the script's output contains NUL bytes; memory files are text without NUL" });
      try {
        resolve({ output: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) });
      } catch {
        resolve({ error: "the script's output is not valid UTF-8" });
      }
    });
    // EPIPE when sed quits before reading everything (a `q` command) is not an error.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input, "utf8");
  });
}
