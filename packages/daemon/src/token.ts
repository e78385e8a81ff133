import { readFileSync } from "node:fs";

/*
 * Where svcd takes its machine daemon token from, and how it keeps it out of what it starts. Never from its
 * arguments: anyone on the computer can read those in `ps`. From a file (`--token-file`, `-` for standard
 * input; an installed svcd reads the 0600 file `token` in its home), else from SVC_DAEMON_TOKEN.
 *
 * The environment variable is deleted from svcd's process.env as soon as it is read, so no child inherits
 * it whatever it is spawned with. That does not scrub /proc/<svcd pid>/environ, which the kernel keeps as
 * svcd was started: svc's local machines (and the installed service) therefore hand svcd its token in a
 * file or on standard input, never in its environment (docs/machines.md, "What a command can reach").
 */

export const TOKEN_PREFIX = "svc_daemon_v1_";
const TOKEN_VARIABLE = "SVC_DAEMON_TOKEN";

/** Every variable svcd drops from the environment of the processes it starts: its credentials. */
export const CREDENTIAL_VARIABLES: readonly string[] = [TOKEN_VARIABLE];

export class TokenError extends Error {}

/** The token from `file` (or standard input for `-`), else from the environment, which it leaves without it. */
export function readToken(file: string | undefined): string {
  const fromEnvironment = process.env[TOKEN_VARIABLE];
  delete process.env[TOKEN_VARIABLE];
  const token = file === undefined ? fromEnvironment : readTokenFile(file);
  if (!token) throw new TokenError(`no token: give --token-file <path> (- for standard input) or set ${TOKEN_VARIABLE}`);
  if (!token.startsWith(TOKEN_PREFIX)) throw new TokenError(`the token must be a machine daemon token (${TOKEN_PREFIX}…)`);
  return token;
}

function readTokenFile(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8").trim();
  } catch (err) {
    throw new TokenError(`cannot read the token from ${file === "-" ? "standard input" : file}: ${(err as Error).message}`);
  }
}

/** `env` without svcd's credentials: what a process svcd starts may see. */
export function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = { ...env };
  for (const name of CREDENTIAL_VARIABLES) delete kept[name];
  return kept;
}
