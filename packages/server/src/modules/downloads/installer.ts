/*
 * The svcd installer svc serves at GET /install/svcd.sh (docs/machines.md "Install svcd"), as the reference
 * serves its daemon's (`curl -fsSL <api>/install/omnarad.sh | sh`). It needs sh, tar and Node.js
 * (^20.19 || >=22.12, checked with a clear message); curl when there is one, else Node.js downloads. It
 * downloads svcd's package from the same svc, checks its SHA-256 against the digest written into the script,
 * unpacks it, and hands over to `svcd install` (packages/daemon/src/install.ts), which makes the machine's
 * home, writes the token (0600) and registers the service.
 *
 * The token comes from SVC_DAEMON_TOKEN or a prompt on the terminal, never from arguments, and reaches
 * `svcd install` on its standard input: the variable is unset and the script execs, so no process left
 * running (svcd in the foreground included) has the token in its environment. Every value svc writes into the
 * script is single-quoted; the origin is also checked to be a bare origin before it gets here.
 */

export function installerScript(origin: string, svcdSha256: string): string {
  return `#!/bin/sh
# svcd installer from ${origin.replace(/[^\w.:/[\]-]/g, "")}
#   curl -fsSL <svc>/install/svcd.sh | sh
# The machine daemon token comes from SVC_DAEMON_TOKEN, else it is asked for on the terminal.
# SVCD_HOME chooses the home (default ~/.svcd/<machine id>); SVCD_SERVICE_MANAGER=systemd|launchd|foreground
# chooses how svcd is kept running.
set -eu

svc_origin=${shQuote(origin)}
svcd_sha256=${shQuote(svcdSha256)}

fail() {
  printf 'svcd installer: %s\\n' "$1" >&2
  exit 1
}

case "$(uname -s)" in
  Linux | Darwin) ;;
  *) fail "svcd runs on Linux and macOS, not $(uname -s)" ;;
esac

node=$(command -v node 2>/dev/null) || fail "svcd needs Node.js ^20.19 or >=22.12, and there is no node on PATH: install it (https://nodejs.org), then run this again"
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit((a === 20 && b >= 19) || (a === 22 && b >= 12) || a > 22 ? 0 : 1)' ||
  fail "svcd needs Node.js ^20.19 or >=22.12, and $node is $("$node" --version): update it, then run this again"
command -v tar > /dev/null 2>&1 || fail "svcd's installer needs tar"

token=\${SVC_DAEMON_TOKEN:-}
unset SVC_DAEMON_TOKEN
if [ -z "$token" ]; then
  (: < /dev/tty) 2> /dev/null || fail "no terminal to ask for the machine daemon token on: set SVC_DAEMON_TOKEN"
  printf 'Machine daemon token (svc_daemon_v1_...): ' > /dev/tty
  trap 'stty echo < /dev/tty 2> /dev/null' EXIT INT TERM
  stty -echo < /dev/tty 2> /dev/null || true
  IFS= read -r token < /dev/tty || true
  stty echo < /dev/tty 2> /dev/null || true
  trap - EXIT INT TERM
  printf '\\n' > /dev/tty
fi
case "$token" in
  svc_daemon_v1_*) ;;
  *) fail "that is not a machine daemon token (svc_daemon_v1_...): connect the machine in svc to get one" ;;
esac

umask 077
mkdir -p "$HOME/.svcd"
stage=$(mktemp -d "$HOME/.svcd/.install.XXXXXX") || fail "cannot make a directory in $HOME/.svcd"
trap 'rm -rf "$stage"' EXIT
url="$svc_origin/downloads/svcd.tgz"
if command -v curl > /dev/null 2>&1; then
  curl -fsSL -o "$stage/svcd.tgz" "$url" || fail "cannot download $url"
else
  "$node" -e 'fetch(process.argv[1]).then(async (r) => { if (!r.ok) throw new Error(r.status + " " + r.statusText); require("fs").writeFileSync(process.argv[2], Buffer.from(await r.arrayBuffer())); }).catch((e) => { console.error(e.message); process.exit(1); })' "$url" "$stage/svcd.tgz" ||
    fail "cannot download $url"
fi
digest=$("$node" -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$stage/svcd.tgz")
[ "$digest" = "$svcd_sha256" ] || fail "the download's SHA-256 is $digest, but svc announced $svcd_sha256: run the command again (svc may have been rebuilt meanwhile)"
tar -xzf "$stage/svcd.tgz" -C "$stage" || fail "cannot unpack $stage/svcd.tgz"
rm -f "$stage/svcd.tgz"
trap - EXIT
# svcd install moves the package into the machine's home and removes the stage. exec: no shell stays
# behind with the token in its environment; the token goes on standard input.
exec "$node" "$stage/package/bin/svcd.js" install --url "$svc_origin" --package "$stage/package" --token-file - << SVCD_TOKEN
$token
SVCD_TOKEN
`;
}

/** One shell word, taken literally. */
function shQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
