import { extname } from "node:path";

/*
 * The content type of a file that arrives without one: a machine's upload (upload_file) names the file
 * and sends its bytes as application/octet-stream. The name's extension decides for the types a client
 * displays (the reference's media types and a few common text formats); otherwise UTF-8 text without NUL is
 * text/plain, and anything else application/octet-stream. The artifact content route serves every type with
 * `nosniff` and a sandboxing CSP, so a declared type never makes a browser run the file.
 */

const BY_EXTENSION: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".pdf": "application/pdf",
  ".txt": "text/plain",
  ".log": "text/plain",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".json": "application/json",
  ".html": "text/html",
  ".htm": "text/html",
  ".xml": "application/xml",
  ".svg": "image/svg+xml",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".tgz": "application/gzip",
  ".tar": "application/x-tar",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function contentTypeOf(filename: string, bytes: Buffer): string {
  const known = BY_EXTENSION[extname(filename).toLowerCase()];
  if (known) return known;
  if (bytes.includes(0)) return "application/octet-stream";
  try {
    utf8.decode(bytes);
    return "text/plain";
  } catch {
    return "application/octet-stream";
  }
}
