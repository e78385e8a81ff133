import { escapeHtml, htmlDocument } from "../../platform/http/html.js";

/** The small page a verification link lands on: success, or why the link did not work. */
export function renderVerifyEmailPage(options: { nonce: string; verified: boolean }): string {
  const [title, message] = options.verified
    ? ["Email verified", "Email verified. You can sign in now."]
    : ["Verification failed", "This verification link is invalid, was already used or has expired."];
  const css = `.success { color: var(--ok); } .error { color: var(--danger); }`;
  const body = `<main>
<h1>${escapeHtml(title)}</h1>
<p class="${options.verified ? "success" : "error"}">${escapeHtml(message)}</p>
</main>`;
  return htmlDocument({ title: `${title} · svc`, nonce: options.nonce, css, body });
}
