/*
 * list_files patterns (reference docs/tools/built-in.mdx, list_files): absolute, `/`-separated; in a
 * segment `*` matches any run of characters and `?` one character (a Unicode code point); a segment that
 * is exactly `**` matches any number of segments, none included. A backslash makes the next character
 * literal, as in the API's name globs (platform/http/lists.ts), which turn a segment into SQL LIKE.
 * Matching is case-sensitive, like file names on the machines agents work with.
 */

export type Segment = { deep: true } | { deep: false; glob: string; regex: RegExp; literal: boolean };

export function parsePattern(pattern: string): Segment[] | { error: string } {
  if (!pattern.startsWith("/")) return { error: `list_files takes an absolute pattern such as /artifacts/*; got ${JSON.stringify(pattern)}.` };
  // A trailing or doubled slash adds no level: /artifacts/ is /artifacts.
  const parts = pattern.split("/").filter((part) => part !== "");
  if (parts.length === 0) return { error: "The pattern / names the top directory itself; use /* to list what it holds." };
  if (parts.some((part) => part === "." || part === "..")) return { error: `Patterns take no . or .. segments; got ${JSON.stringify(pattern)}.` };
  return parts.map(segmentOf);
}

function segmentOf(glob: string): Segment {
  if (glob === "**") return { deep: true };
  let source = "";
  let literal = true;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "\\" && i + 1 < glob.length) source += escapeRegex(glob[++i]!);
    else if (ch === "*") [source, literal] = [`${source}[\\s\\S]*`, false];
    else if (ch === "?") [source, literal] = [`${source}[\\s\\S]`, false];
    else source += escapeRegex(ch);
  }
  return { deep: false, glob, regex: new RegExp(`^${source}$`, "u"), literal };
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** Whether the path made of `names` (one per level) matches the whole pattern. */
export function matchesPath(segments: readonly Segment[], names: readonly string[]): boolean {
  if (segments.length === 0) return names.length === 0;
  const [first, ...rest] = segments as [Segment, ...Segment[]];
  if (first.deep) return matchesPath(rest, names) || (names.length > 0 && matchesPath(segments, names.slice(1)));
  return names.length > 0 && first.regex.test(names[0]!) && matchesPath(rest, names.slice(1));
}

/**
 * What a file directly under `/<dir>` must be named to match the pattern: "any" name, one of a few
 * segment globs, or none (an empty list). Artifacts are listed by the database, so the pattern is reduced
 * here to globs over the name alone, which the artifacts service matches in SQL.
 */
export function namesUnder(segments: readonly Segment[], dir: string): "any" | string[] {
  const globs = new Set<string>();
  for (const rest of afterFirst(segments, dir)) {
    const named = rest.filter((segment) => !segment.deep);
    if (named.length === 0 && rest.length > 0) return "any";
    const only = named[0];
    if (named.length === 1 && only && !only.deep) globs.add(only.glob);
  }
  return [...globs];
}

/** The ways the rest of the pattern can continue once its start has matched the one segment `name`. */
function afterFirst(segments: readonly Segment[], name: string): Segment[][] {
  const [first, ...rest] = segments;
  if (!first) return [];
  if (first.deep) return [[...segments], ...afterFirst(rest, name)];
  return first.regex.test(name) ? [rest] : [];
}
