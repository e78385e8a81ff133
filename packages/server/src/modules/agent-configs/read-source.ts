import { sha256Tagged } from "../../platform/json.js";
import { unpairedSurrogateAt } from "../../platform/storable.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import { COMPILER_VERSION } from "./compile.js";
import { readConfigDocument, type ConfigDocument } from "./document.js";
import { ConfigIssues, syntaxIssues } from "./issues.js";
import { parseSource, type ParsedSource, type SourceFormat } from "./source.js";

/** A source that parsed and read without a single issue: what compiling it further starts from. */
export interface ReadSource {
  sourceHash: string;
  parsed: ParsedSource;
  /** Shared between requests through the memo: read it, never change it. */
  doc: ConfigDocument;
}

/*
 * Launching agents, changing configs and profiles post the same few sources again and again; parsing YAML
 * and checking the document (tool input schemas through Ajv included) is most of a compile's CPU. That half
 * is a pure function of the text and the compiler, so it is memoized here by (compiler version, format,
 * source hash). The other half reads the database and is never memoized: the model (its current revision
 * and the project's grant change), and whether each MCP bearer secret is still the project's. Sources with
 * issues are not kept: they are refused anyway, and a refusal is cheap to repeat.
 */
const MEMO_ENTRIES = 128;
const memo = new TtlCache<string, ReadSource>(Number.POSITIVE_INFINITY, MEMO_ENTRIES);

/** Parses and reads `source`: syntax errors throw at once; document issues are added to `issues`. */
export function readSource(source: string, sourceFormat: SourceFormat, issues: ConfigIssues): ReadSource {
  const sourceHash = sha256Tagged(source);
  const key = `${COMPILER_VERSION}\u0000${sourceFormat}\u0000${sourceHash}`;
  const known = memo.get(key);
  if (known) return known;
  // PostgreSQL text cannot hold NUL; refuse it with a position rather than fail the insert.
  const nul = source.indexOf("\u0000");
  if (nul !== -1) throw syntaxIssues(source, [{ message: "the source must not contain NUL characters", offset: nul }]);
  const surrogate = unpairedSurrogateAt(source);
  if (surrogate !== -1) throw syntaxIssues(source, [{ message: "the source must not contain unpaired UTF-16 surrogates", offset: surrogate }]);
  const parsed = parseSource(source, sourceFormat);
  if (!parsed.ok) throw syntaxIssues(source, parsed.problems);
  const before = issues.count;
  const read: ReadSource = { sourceHash, parsed: parsed.source, doc: readConfigDocument(parsed.source.value, issues) };
  if (issues.count === before) memo.set(key, read, memo.version());
  return read;
}
