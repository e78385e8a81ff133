/** Longer than any path svc's console links to; a longer value is not kept. */
const MAX_RETURN_PATH = 2048;

/**
 * Where a browser goes after an OAuth install: `value` when it is a path on svc's own origin (`/…`, not
 * `//host` or `/\host`, which browsers read as another host), otherwise `/`. Any other address would make
 * svc an open redirect; the contract takes any string, so a foreign one is replaced rather than refused.
 */
export function sameOriginPath(value: string, publicUrl: string): string {
  if (value.length > MAX_RETURN_PATH || !/^\/(?![/\\])/.test(value) || /[\s\\]/.test(value)) return "/";
  const origin = new URL(publicUrl).origin;
  const url = URL.parse(value, origin);
  return url !== null && url.origin === origin ? `${url.pathname}${url.search}${url.hash}` : "/";
}
