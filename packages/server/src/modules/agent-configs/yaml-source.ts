import { isAlias, isMap, isScalar, isSeq, Parser, parseDocument, type CST, type Node } from "yaml";
import { MAX_NESTING, resolveOffset, type ParseOutcome, type PathSegment, type Step, type SyntaxProblem } from "./source.js";

/** Aliases may repeat a node this many times in all; more is an expansion attack ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;
/** Alias nodes a document may hold; with MAX_NESTING, this bounds how deep aliases can nest values. */
const MAX_ALIASES = 100;

/**
 * YAML 1.2 (core schema) through the `yaml` package, whose nodes keep their offsets into the text. Every
 * parse error is reported; a source with errors is not validated any further.
 */
export function parseYamlSource(text: string): ParseOutcome {
  // yaml's parser is iterative, its composer recursive. A stack overflow inside the composer is caught by
  // the library, but on Node 20 the next one can abort the process (V8 fails in its regexp compiler), so
  // documents nested too deeply are refused on the concrete syntax tree, before the composer sees them.
  const structural = structuralProblem(Array.from(new Parser().parse(text)));
  if (structural) return { ok: false, problems: [structural] };
  // prettyErrors off: the raw messages, with positions added by the caller in the API's own shape.
  // uniqueKeys off: the library compares every key with every other key of its map, which made a
  // 1 MiB map take a minute; duplicateKey does the same check with a set.
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((error) => ({ message: error.message, offset: error.pos[0] })) };
  }
  const duplicate = duplicateKey(doc.contents);
  if (duplicate) return { ok: false, problems: [duplicate] };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // An alias without its anchor, or too many aliases: known only once values are built.
    return { ok: false, problems: [{ message: err instanceof Error ? err.message : String(err), offset: doc.contents?.range[0] ?? 0 }] };
  }
  const step = (node: Node, segment: PathSegment): Step<Node> | undefined => {
    const target = isAlias(node) ? node.resolve(doc) : node;
    if (isMap(target) && typeof segment === "string") {
      const pair = target.items.find((item) => isScalar(item.key) && String(item.key.value) === segment);
      if (!pair || !isScalar(pair.key)) return undefined;
      return { node: (pair.value as Node | null) ?? null, keyOffset: pair.key.range?.[0] };
    }
    if (isSeq(target) && typeof segment === "number") {
      const item = target.items[segment] as Node | undefined;
      return item && { node: item };
    }
    return undefined;
  };
  return {
    ok: true,
    source: {
      value,
      locate: (path, anchor) => resolveOffset<Node>(doc.contents, path, anchor, step, (node) => node.range?.[0]),
    },
  };
}

/** The first key repeated within its mapping (scalar keys compared as text); walked without recursion. */
function duplicateKey(root: Node | null): SyntaxProblem | undefined {
  const pending: Array<Node | null> = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const key = String(pair.key.value);
          if (seen.has(key)) return { message: "Map keys must be unique", offset: pair.key.range?.[0] ?? 0 };
          seen.add(key);
        }
        pending.push(pair.value as Node | null);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) pending.push(item as Node | null);
    }
  }
  return undefined;
}

/** The first collection nested deeper than MAX_NESTING, or the alias past MAX_ALIASES; walked without recursion. */
function structuralProblem(tokens: CST.Token[]): SyntaxProblem | undefined {
  // A stack, filled in reverse so tokens come off it in document order.
  const pending: Array<{ token: CST.Token; depth: number }> = tokens.map((token) => ({ token, depth: 0 })).reverse();
  let aliases = 0;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { token, depth } = next;
    if (token.type === "document" && token.value) {
      pending.push({ token: token.value, depth });
    } else if (token.type === "alias" && ++aliases > MAX_ALIASES) {
      return { message: `a config may use at most ${MAX_ALIASES} aliases`, offset: token.offset };
    } else if (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection") {
      if (depth >= MAX_NESTING) return { message: `mappings and lists are nested more than ${MAX_NESTING} levels deep`, offset: token.offset };
      for (const item of [...token.items].reverse()) {
        if (item.value) pending.push({ token: item.value, depth: depth + 1 });
        if (item.key) pending.push({ token: item.key, depth: depth + 1 });
      }
    }
  }
  return undefined;
}
