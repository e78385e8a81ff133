import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** What `svc login` keeps: the server, its token, and the org and project commands use by default. */
export interface Credentials {
  url?: string;
  token?: string;
  org?: string;
  project?: string;
}

/** `$SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/svc`, else `~/.config/svc` (XDG Base Directory). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env["SVC_CONFIG_DIR"]) return env["SVC_CONFIG_DIR"];
  return join(env["XDG_CONFIG_HOME"] || join(homedir(), ".config"), "svc");
}

export const credentialsPath = (env: NodeJS.ProcessEnv = process.env) => join(configDir(env), "credentials.json");

export async function readCredentials(): Promise<Credentials> {
  let text: string;
  try {
    text = await readFile(credentialsPath(), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${credentialsPath()} is not JSON: remove it, or log in again with \`svc login\``);
  }
  if (typeof parsed !== "object" || parsed === null) return {};
  const record = parsed as Record<string, unknown>;
  const pick = (key: keyof Credentials) => (typeof record[key] === "string" ? { [key]: record[key] } : {});
  return { ...pick("url"), ...pick("token"), ...pick("org"), ...pick("project") };
}

/** Writes the file readable by its owner only (0600), in a directory only its owner may enter (0700). */
export async function writeCredentials(credentials: Credentials): Promise<void> {
  const dir = configDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = credentialsPath();
  await writeFile(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  // writeFile's mode applies only when it creates the file; an existing file may have had wider bits.
  await chmod(path, 0o600);
}

export async function removeCredentials(): Promise<boolean> {
  try {
    await rm(credentialsPath());
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
