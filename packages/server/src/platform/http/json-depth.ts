/**
 * The deepest nesting of objects and arrays a JSON body may have (docs/api.md). Every value svc keeps has
 * a tighter limit of its own (a structured_data value 128 levels, a config source 100), and this one leaves
 * room for the envelope around them; far deeper documents exist only to overflow the stack of whatever
 * walks them, so they are refused before anything parses or walks them.
 */
export const MAX_JSON_DEPTH = 256;

// What changes the depth outside strings, and what ends or escapes inside one. Both are global so that
// `lastIndex` moves the scan on: a long string is skipped by the regular expression engine in one step.
const STRUCTURE = /["[\]{}]/g;
const IN_STRING = /["\\]/g;

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read without recursion and without
 * parsing. Text that is not JSON may be judged either way; the parser refuses it afterwards.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  STRUCTURE.lastIndex = 0;
  for (let match = STRUCTURE.exec(text); match !== null; match = STRUCTURE.exec(text)) {
    const char = match[0];
    if (char === '"') {
      const end = stringEnd(text, STRUCTURE.lastIndex);
      if (end < 0) return false;
      STRUCTURE.lastIndex = end + 1;
    } else if (char === "[" || char === "{") {
      depth += 1;
      if (depth > max) return true;
    } else {
      depth -= 1;
    }
  }
  return false;
}

/** The index of the quote that closes a string whose text starts at `from`, or -1 when it never closes. */
function stringEnd(text: string, from: number): number {
  IN_STRING.lastIndex = from;
  for (let match = IN_STRING.exec(text); match !== null; match = IN_STRING.exec(text)) {
    if (match[0] === '"') return match.index;
    IN_STRING.lastIndex = match.index + 2;
  }
  return -1;
}

/**
 * `JSON.parse` for text from outside svc that is not a request body (a daemon's frame, a provider's
 * callback): text nesting deeper than `max` is a SyntaxError like any other text that is not JSON, so
 * nothing svc walks afterwards can be made to recurse without bound.
 */
export function parseJsonWithin(text: string, max = MAX_JSON_DEPTH): unknown {
  if (nestsDeeperThan(text, max)) throw new SyntaxError(`JSON nests objects and arrays more than ${max} levels deep`);
  return JSON.parse(text) as unknown;
}
