import { constants } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { randomBytes } from "node:crypto";
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
  const text = await readOwnFile(credentialsPath());
  if (text === undefined) return {};
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

/**
 * Writes the file readable by its owner only (0600), in a directory only its owner may enter (0700), as a
 * new file renamed over the old one: a reader never sees half a file, and a link planted at the path is
 * replaced rather than followed (it could point at any file the user may write).
 */
export async function writeCredentials(credentials: Credentials): Promise<void> {
  const dir = configDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await checkFolder(dir);
  const path = credentialsPath();
  const temporary = join(dir, `.credentials.${randomBytes(6).toString("hex")}.tmp`);
  // O_EXCL and O_NOFOLLOW: a new file of our own, never one someone else prepared under that name.
  const file = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await file.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
    await file.sync();
    await file.close();
    await rename(temporary, path);
  } catch (err) {
    await file.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw err;
  }
}

/** The file's text, undefined when there is none; a link is not followed, and the folder must be the user's own. */
async function readOwnFile(path: string): Promise<string | undefined> {
  let file;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new Error(`${path} is a symbolic link, which svc does not follow: remove it, and log in again with \`svc login\``);
    throw err;
  }
  try {
    await checkFolder(configDir());
    return await file.readFile("utf8");
  } finally {
    await file.close();
  }
}

/**
 * Anyone who may write the folder may swap the credentials in it (another server's address beside their
 * token, so the next command sends them what it reads), as ssh reasons for ~/.ssh: svc refuses a folder
 * other users may write, or that belongs to another user.
 */
async function checkFolder(dir: string): Promise<void> {
  const folder = await stat(dir);
  if (!folder.isDirectory()) throw new Error(`${dir} is not a directory: svc keeps its credentials in a directory of that name`);
  if ((folder.mode & 0o022) !== 0) throw new Error(`${dir} may be written by other users (mode ${(folder.mode & 0o777).toString(8)}): run \`chmod 700 ${dir}\`, then try again`);
  const uid = process.getuid?.();
  if (uid !== undefined && folder.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${folder.uid}): svc keeps credentials only in a folder of your own`);
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
