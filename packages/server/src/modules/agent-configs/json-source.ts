import { MAX_NESTING, resolveOffset, type ParseOutcome, type PathSegment, type Step } from "./source.js";

/**
 * A strict RFC 8259 parser that remembers where every key and value starts, so validation issues can
 * carry a line and column. `JSON.parse` gives neither positions for values nor, on Node 20, reliable
 * positions for its own syntax errors. Duplicate keys are refused (JSON.parse would keep the last one
 * silently, and YAML refuses them too).
 */

type JsonNode =
  | { kind: "object"; start: number; members: Map<string, { keyOffset: number; node: JsonNode }> }
  | { kind: "array"; start: number; items: JsonNode[] }
  | { kind: "scalar"; start: number };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /^[0-9a-fA-F]{4}$/;

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export function parseJsonSource(text: string): ParseOutcome {
  let parsed: { value: unknown; node: JsonNode };
  try {
    parsed = new Parser(text).document();
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, problems: [{ message: err.message, offset: err.offset }] };
    throw err;
  }
  const root = parsed.node;
  return {
    ok: true,
    source: {
      value: parsed.value,
      locate: (path, anchor) => resolveOffset<JsonNode>(root, path, anchor, step, (node) => node.start),
    },
  };
}

function step(node: JsonNode, segment: PathSegment): Step<JsonNode> | undefined {
  if (node.kind === "object" && typeof segment === "string") {
    const member = node.members.get(segment);
    return member && { node: member.node, keyOffset: member.keyOffset };
  }
  if (node.kind === "array" && typeof segment === "number") {
    const item = node.items[segment];
    return item && { node: item };
  }
  return undefined;
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {
    // A byte order mark is allowed to be ignored (RFC 8259 §8.1); editors on Windows add one.
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  document(): { value: unknown; node: JsonNode } {
    this.skipWhitespace();
    if (this.pos >= this.text.length) throw new JsonSyntaxError("the document is empty", this.pos);
    const result = this.value(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) throw this.unexpected("after the end of the document");
    return result;
  }

  private value(depth: number): { value: unknown; node: JsonNode } {
    const start = this.pos;
    const ch = this.text[this.pos];
    // The parser recurses per level; the cap keeps a hostile document from exhausting the stack.
    if ((ch === "{" || ch === "[") && depth >= MAX_NESTING) {
      throw new JsonSyntaxError(`objects and lists are nested more than ${MAX_NESTING} levels deep`, this.pos);
    }
    if (ch === "{") return this.object(depth);
    if (ch === "[") return this.array(depth);
    if (ch === '"') return { value: this.string(), node: { kind: "scalar", start } };
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return { value, node: { kind: "scalar", start } };
      }
    }
    NUMBER.lastIndex = this.pos;
    const number = NUMBER.exec(this.text);
    if (number) {
      this.pos += number[0].length;
      return { value: Number(number[0]), node: { kind: "scalar", start } };
    }
    throw this.unexpected("where a value belongs");
  }

  private object(depth: number): { value: unknown; node: JsonNode } {
    const start = this.pos++;
    const value: Record<string, unknown> = {};
    const members = new Map<string, { keyOffset: number; node: JsonNode }>();
    this.skipWhitespace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return { value, node: { kind: "object", start, members } };
    }
    for (;;) {
      this.skipWhitespace();
      const keyOffset = this.pos;
      if (this.text[this.pos] !== '"') throw this.unexpected("where a quoted key belongs");
      const key = this.string();
      if (members.has(key)) throw new JsonSyntaxError(`duplicate key ${JSON.stringify(key)}`, keyOffset);
      this.skipWhitespace();
      if (this.text[this.pos] !== ":") throw this.unexpected("where ':' belongs after a key");
      this.pos++;
      this.skipWhitespace();
      const member = this.value(depth + 1);
      // defineProperty, so a "__proto__" key is data like any other and never changes the prototype.
      Object.defineProperty(value, key, { value: member.value, enumerable: true, writable: true, configurable: true });
      members.set(key, { keyOffset, node: member.node });
      this.skipWhitespace();
      const next = this.text[this.pos];
      this.pos++;
      if (next === "}") return { value, node: { kind: "object", start, members } };
      if (next !== ",") {
        this.pos--;
        throw this.unexpected("where ',' or '}' belongs");
      }
    }
  }

  private array(depth: number): { value: unknown; node: JsonNode } {
    const start = this.pos++;
    const value: unknown[] = [];
    const items: JsonNode[] = [];
    this.skipWhitespace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return { value, node: { kind: "array", start, items } };
    }
    for (;;) {
      this.skipWhitespace();
      const item = this.value(depth + 1);
      value.push(item.value);
      items.push(item.node);
      this.skipWhitespace();
      const next = this.text[this.pos];
      this.pos++;
      if (next === "]") return { value, node: { kind: "array", start, items } };
      if (next !== ",") {
        this.pos--;
        throw this.unexpected("where ',' or ']' belongs");
      }
    }
  }

  /** Checks the string's syntax by hand, then lets JSON.parse decode the (now known valid) literal. */
  private string(): string {
    const start = this.pos++;
    for (;;) {
      const code = this.text.charCodeAt(this.pos);
      if (Number.isNaN(code)) throw new JsonSyntaxError("unterminated string", start);
      if (code === 0x22) break;
      if (code < 0x20) throw new JsonSyntaxError("control characters must be escaped inside strings", this.pos);
      if (code === 0x5c) {
        const escape = this.text[this.pos + 1] ?? "";
        if (escape === "u") {
          if (!HEX4.test(this.text.slice(this.pos + 2, this.pos + 6))) throw new JsonSyntaxError("\\u must be followed by 4 hex digits", this.pos);
          this.pos += 6;
          continue;
        }
        if (!ESCAPES.has(escape)) throw new JsonSyntaxError(`invalid escape \\${escape}`, this.pos);
        this.pos += 2;
        continue;
      }
      this.pos++;
    }
    this.pos++;
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private skipWhitespace(): void {
    for (;;) {
      const ch = this.text[this.pos];
      if (ch !== " " && ch !== "\t" && ch !== "\n" && ch !== "\r") return;
      this.pos++;
    }
  }

  private unexpected(where: string): JsonSyntaxError {
    const ch = this.text[this.pos];
    if (ch === undefined) return new JsonSyntaxError("unexpected end of the document", this.pos);
    const shown = ch.codePointAt(0)! < 0x20 ? JSON.stringify(ch) : `'${String.fromCodePoint(this.text.codePointAt(this.pos)!)}'`;
    return new JsonSyntaxError(`unexpected ${shown} ${where}`, this.pos);
  }
}
