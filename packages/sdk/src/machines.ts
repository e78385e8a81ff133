/*
 * The one command that connects a computer as a machine (docs/machines.md, "Install svcd"): svc's own
 * installer, piped to sh, with the machine's daemon token in the environment of that sh only (never in an
 * argument: anyone on the computer can read those in `ps`). The installer unsets it and hands it to svcd
 * in a 0600 file. The console's "Connect this computer" and `svc machines connect` both show this.
 */

/** `curl -fsSL '<origin>/install/svcd.sh' | SVC_DAEMON_TOKEN='<token>' sh`, every value quoted for the shell. */
export function svcdInstallCommand(origin: string, token: string): string {
  const script = `${origin.replace(/\/+$/, "")}/install/svcd.sh`;
  return `curl -fsSL ${shellQuote(script)} | SVC_DAEMON_TOKEN=${shellQuote(token)} sh`;
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
