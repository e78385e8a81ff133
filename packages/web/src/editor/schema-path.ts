/*
 * Where the cursor is in a YAML config, as a path of keys ("[]" for a list item), read from the
 * indentation of the lines above it. An editor's completion runs on text that is half typed and often
 * does not parse; the indentation of block YAML still says which mapping a line belongs to. Flow style
 * (`{a: 1}`) is not followed: completion then offers nothing, and svc's validation still checks it.
 */

export type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  required?: string[];
};

export interface CursorContext {
  /** Keys from the document's root to the mapping the cursor is in. */
  path: string[];
  /** Typing a key, or the value of `key`. */
  kind: "key" | "value";
  key?: string;
  /** Offset in the line where the word being typed starts. */
  wordStart: number;
  /** The keys already written in the same mapping (not offered again). */
  siblings: string[];
}

const LINE = /^(\s*)((?:- +)*)(.*)$/;
const KEY = /^([A-Za-z0-9_.-]+|"[^"]*"|'[^']*'):(?:\s|$)/;

interface Line {
  /** Column of the first dash, or of the key when there is none. */
  lead: number;
  dashes: number;
  /** Column where the mapping content (the key) starts. */
  keyIndent: number;
  key?: string;
  blank: boolean;
}

function readLine(text: string): Line {
  const m = LINE.exec(text)!;
  const lead = m[1]!.length;
  const dashText = m[2]!;
  const dashes = (dashText.match(/-/g) ?? []).length;
  const rest = m[3]!;
  const blank = rest.trim() === "" || rest.trimStart().startsWith("#");
  const key = KEY.exec(rest)?.[1]?.replace(/^["']|["']$/g, "");
  return { lead, dashes, keyIndent: lead + dashText.length, ...(key !== undefined ? { key } : {}), blank: blank && dashes === 0 };
}

/** The path of the mapping whose content starts at column `indent`, judged from `above` (nearest last). */
function ancestors(above: readonly string[], indent: number): string[] {
  const path: string[] = [];
  let cur = indent;
  for (let i = above.length - 1; i >= 0 && cur > 0; i--) {
    const line = readLine(above[i]!);
    if (line.blank) continue;
    if (line.dashes > 0 && line.lead < cur) {
      // A list item that holds us: its key is our parent when we sit deeper than it.
      if (line.key !== undefined && line.keyIndent < cur) path.push(line.key);
      path.push("[]");
      cur = line.lead;
    } else if (line.dashes === 0 && line.keyIndent < cur && line.key !== undefined) {
      path.push(line.key);
      cur = line.keyIndent;
    }
  }
  return path.reverse();
}

/** The keys of the mapping at column `indent` around line `at` (those already written). */
function siblingsOf(lines: readonly string[], at: number, indent: number): string[] {
  const keys: string[] = [];
  for (const step of [-1, 1]) {
    for (let i = at + step; i >= 0 && i < lines.length; i += step) {
      const line = readLine(lines[i]!);
      if (line.blank) continue;
      if (line.keyIndent < indent) break;
      if (line.keyIndent === indent && line.key !== undefined) {
        keys.push(line.key);
        if (line.dashes > 0) break;
      }
    }
  }
  return keys;
}

/** The context of the cursor at `column` of line `at` (0-based) of `lines`. */
export function contextAt(lines: readonly string[], at: number, column: number): CursorContext | undefined {
  const before = lines[at]!.slice(0, column);
  const m = LINE.exec(before)!;
  const lead = m[1]!.length;
  const dashes = (m[2]!.match(/-/g) ?? []).length;
  const contentIndent = lead + m[2]!.length;
  const rest = m[3]!;
  const items = Array.from({ length: dashes }, () => "[]");
  const path = [...ancestors(lines.slice(0, at), dashes > 0 ? lead : contentIndent), ...items];
  if (/^[A-Za-z0-9_-]*$/.test(rest)) {
    return { path, kind: "key", wordStart: contentIndent, siblings: dashes > 0 ? [] : siblingsOf(lines, at, contentIndent) };
  }
  const value = /^([A-Za-z0-9_.-]+):\s+([A-Za-z0-9_.-]*)$/.exec(rest);
  if (value) return { path, kind: "value", key: value[1]!, wordStart: column - value[2]!.length, siblings: [] };
  return undefined;
}

/** The path of the key written on line `at`, with the key last; undefined when the line has none. */
export function keyPathAt(lines: readonly string[], at: number): string[] | undefined {
  const line = readLine(lines[at]!);
  if (line.key === undefined) return undefined;
  const items = Array.from({ length: line.dashes }, () => "[]");
  return [...ancestors(lines.slice(0, at), line.dashes > 0 ? line.lead : line.keyIndent), ...items, line.key];
}

/** A schema's options merged (anyOf), so that completion offers the keys of every option. */
function flatten(schema: JsonSchema): JsonSchema {
  if (!schema.anyOf) return schema;
  const properties: Record<string, JsonSchema> = { ...schema.properties };
  for (const option of schema.anyOf) Object.assign(properties, flatten(option).properties);
  return { ...schema, properties };
}

/** The schema at `path`, or undefined when the path leaves it. */
export function schemaAt(root: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  let at: JsonSchema | undefined = root;
  for (const step of path) {
    if (!at) return undefined;
    const flat: JsonSchema = flatten(at);
    if (step === "[]") at = flat.items;
    else at = flat.properties?.[step] ?? (typeof flat.additionalProperties === "object" ? flat.additionalProperties : undefined);
  }
  return at && flatten(at);
}

export interface Suggestion {
  label: string;
  detail?: string;
  info?: string;
  apply: string;
}

/** What may be typed at the cursor: the mapping's keys not yet written, or the values a key allows. */
export function suggest(root: JsonSchema, context: CursorContext): Suggestion[] {
  if (context.kind === "key") {
    const schema = schemaAt(root, context.path);
    const required = new Set(schema?.required ?? []);
    return Object.entries(schema?.properties ?? {})
      .filter(([key]) => !context.siblings.includes(key))
      .map(([key, sub]) => ({
        label: key,
        ...(required.has(key) ? { detail: "required" } : {}),
        ...(sub.description ? { info: sub.description } : {}),
        apply: `${key}: `,
      }));
  }
  const schema = schemaAt(root, [...context.path, context.key!]);
  if (!schema) return [];
  const values = schema.enum ?? (schema.const !== undefined ? [schema.const] : schema.type === "boolean" ? [true, false] : []);
  return values.map((value) => ({ label: String(value), ...(schema.description ? { info: schema.description } : {}), apply: String(value) }));
}
