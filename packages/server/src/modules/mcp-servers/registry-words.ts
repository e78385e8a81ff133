/**
 * How the registry snapshot is searched (docs/mcp.md): text is cut into words at every character that is
 * not a letter or a digit, lowercased; a query term matches a word it begins. A remote URL is compared
 * without its scheme, case or trailing slashes.
 */

const NOT_WORD = /[^\p{L}\p{N}]+/u;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//;

export function wordsOf(text: string): string[] {
  return text.toLowerCase().split(NOT_WORD).filter(Boolean);
}

/** The words of `texts` as stored: each preceded by a space, so `LIKE '% term%'` matches a word's start. */
export function storedWords(...texts: string[]): string {
  return texts.flatMap(wordsOf).map((word) => ` ${word}`).join("");
}

/** A URL as `remote_url` compares it: lowercase, no scheme, no trailing slashes. */
export function remoteKey(url: string): string {
  return url.toLowerCase().replace(SCHEME, "").replace(/\/+$/, "");
}

/** A remote URL's words, without its scheme (every remote would match `https`). */
export function urlWords(url: string): string[] {
  return wordsOf(url.toLowerCase().replace(SCHEME, ""));
}
