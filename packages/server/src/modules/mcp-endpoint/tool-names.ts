import { encodeId } from "../../platform/ids.js";

/** svc's own tools; a profile can never take one of these names (docs/mcp.md, "Tools"). */
export const SVC_TOOL_PREFIX = "svc_";

/** Claude's clients accept `^[a-zA-Z0-9_-]{1,64}$`, a subset of what MCP allows (up to 128 of A-Z a-z 0-9 _ - .). */
const MAX_NAME = 64;

/**
 * The tool name of each profile, keyed by name: the profile's name in lower case, every run of other
 * characters than a-z, 0-9, `_` and `-` made one `_`, at most 64 characters (`Customer support` is
 * `customer_support`). A name that would begin with `svc_` gets `agent_` before it, so svc's own tools
 * keep theirs. Profiles whose names give the same tool name each get `_` and the last 8 characters of
 * their id after it, so no profile's tool depends on which other profiles exist with a similar name.
 */
export function profileToolNames<P extends { id: string; name: string }>(profiles: readonly P[]): Map<string, P> {
  const bases = profiles.map((profile) => ({ profile, base: baseName(profile.name) }));
  const counts = new Map<string, number>();
  for (const { base } of bases) counts.set(base, (counts.get(base) ?? 0) + 1);
  const named = new Map<string, P>();
  for (const { profile, base } of bases) {
    const unique = counts.get(base) === 1 ? base : `${base.slice(0, MAX_NAME - 9)}_${encodeId("agentProfile", profile.id).slice(-8)}`;
    named.set(unique, profile);
  }
  return named;
}

function baseName(name: string): string {
  const ascii = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "_")
    .replace(/^[_-]+|[_-]+$/g, "");
  const base = ascii === "" ? "agent" : ascii;
  return (base.startsWith(SVC_TOOL_PREFIX) ? `agent_${base}` : base).slice(0, MAX_NAME);
}
