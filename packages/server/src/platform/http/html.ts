import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** A fresh CSP nonce for one response's inline `<script>` and `<style>`. */
export function cspNonce(): string {
  return randomBytes(16).toString("base64");
}

/**
 * Sends a server-rendered page under a strict Content-Security-Policy: nothing loads from anywhere except
 * the nonce-tagged inline script and style, fetches go to this origin only, and no site may frame the page
 * (an approval button inside someone else's frame is a clickjacking target).
 */
export function sendHtml(reply: FastifyReply, status: number, html: string, nonce: string): FastifyReply {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  return reply
    .status(status)
    .header("content-security-policy", csp)
    .header("x-frame-options", "DENY")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "same-origin")
    .header("cache-control", "no-store")
    .type("text/html; charset=utf-8")
    .send(html);
}

/** The document shell shared by svc's few server-rendered pages. */
export function htmlDocument(options: { title: string; nonce: string; css: string; body: string; script?: string }): string {
  const { title, nonce, css, body, script } = options;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${escapeHtml(nonce)}">${BASE_CSS}${css}</style>
</head>
<body>
${body}
${script ? `<script nonce="${escapeHtml(nonce)}">${script}</script>` : ""}
</body>
</html>
`;
}

const BASE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #5b6570; --bg: #f5f6f8; --card: #fff; --line: #d9dde3;
  --accent: #2456d6; --accent-fg: #fff; --danger: #b42318; --ok: #14723a; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a0a8b2; --bg: #14171b; --card: #1d2126;
  --line: #343a42; --accent: #6b95ff; --accent-fg: #0b0d10; --danger: #ff8a80; --ok: #6fdc97; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; padding: 24px; }
main { width: 100%; max-width: 420px; background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 28px; }
h1 { font-size: 1.25rem; margin: 0 0 16px; }
p { margin: 0 0 16px; }
main > :last-child, section > :last-child { margin-bottom: 0; }
.muted { color: var(--muted); font-size: 0.9rem; }
`;
