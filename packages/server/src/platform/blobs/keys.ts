/**
 * A blob key is a relative path of segments that start with a letter or digit and hold only letters,
 * digits, `.`, `_` and `-`. That excludes `..`, absolute paths, empty segments and anything needing
 * escaping, so a key maps to the same file path and the same S3 object name everywhere.
 */
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;
const MAX_KEY_LENGTH = 512;

export function isBlobKey(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && KEY.test(key);
}

export function assertBlobKey(key: string): string {
  if (!isBlobKey(key)) throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  return key;
}
