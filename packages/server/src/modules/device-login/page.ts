import { escapeHtml, htmlDocument } from "../../platform/http/html.js";

/**
 * The device approval page: plain HTML and one small inline script, no framework and nothing external.
 * The script asks /api/auth/device/pending about the code; on 401 it signs the user in through
 * /api/auth/login (which sets the session cookies), then offers Approve and Deny. Those POSTs carry the
 * CSRF cookie's value in X-Svc-Csrf; a same-origin fetch sends Origin by itself. Everything the script
 * shows goes through textContent, and the server escapes what it renders.
 */
export function renderDevicePage(options: { nonce: string; csrfCookie: string; userCode: string }): string {
  const body = `<main data-csrf-cookie="${escapeHtml(options.csrfCookie)}">
<h1>Device login</h1>
<p id="status" role="status" aria-live="polite"></p>
<noscript><p class="error">This page needs JavaScript to sign you in and approve the device.</p></noscript>
<section id="step-code">
  <form id="code-form" method="get" action="/device">
    <label for="user-code">Enter the code shown on your device</label>
    <input id="user-code" name="user_code" value="${escapeHtml(options.userCode)}" autocomplete="off"
      autocapitalize="characters" spellcheck="false" maxlength="64" placeholder="XXXXX-XXXXX" required>
    <button type="submit" class="primary">Continue</button>
  </form>
</section>
<section id="step-signin" hidden>
  <form id="signin-form">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit" class="primary">Sign in</button>
  </form>
</section>
<section id="step-confirm" hidden>
  <p><strong id="client-name"></strong> is asking for access to your account.</p>
  <dl>
    <dt>Code</dt><dd id="confirm-code" class="code"></dd>
    <dt>Token name</dt><dd id="token-name"></dd>
    <dt>Expires</dt><dd id="expires-at"></dd>
  </dl>
  <p class="muted">Approve only if you started this login and the code matches the one on your device.
  The device gets a personal access token that acts as you.</p>
  <div class="actions">
    <button type="button" id="approve" class="primary">Approve</button>
    <button type="button" id="deny" class="secondary">Deny</button>
  </div>
</section>
<section id="step-done" hidden>
  <p id="done-message"></p>
  <p class="muted">You can close this page.</p>
</section>
</main>`;
  return htmlDocument({ title: "Device login · svc", nonce: options.nonce, css: CSS, body, script: SCRIPT });
}

const CSS = `
label { display: block; font-size: 0.9rem; font-weight: 600; margin: 12px 0 6px; }
input { width: 100%; padding: 10px 12px; font: inherit; color: inherit; background: transparent;
  border: 1px solid var(--line); border-radius: 8px; }
input:focus, button:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
#user-code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; letter-spacing: 0.08em; }
button { font: inherit; font-weight: 600; padding: 10px 16px; border-radius: 8px; cursor: pointer; border: 1px solid var(--line); }
button:disabled { opacity: 0.6; cursor: default; }
.primary { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
.secondary { background: transparent; color: var(--fg); }
form .primary { width: 100%; margin-top: 16px; }
.actions { display: flex; gap: 12px; }
.actions button { flex: 1; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 6px 16px; margin: 0 0 16px; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
#status:empty { display: none; }
.error { color: var(--danger); }
.success { color: var(--ok); }
`;

const SCRIPT = `
(function () {
  "use strict";
  var root = document.querySelector("main");
  var csrfCookie = root.getAttribute("data-csrf-cookie");
  var steps = ["step-code", "step-signin", "step-confirm", "step-done"];
  var userCode = "";
  var busy = false;

  function $(id) { return document.getElementById(id); }
  function show(step) { steps.forEach(function (s) { $(s).hidden = s !== step; }); }
  function say(text, kind) { var el = $("status"); el.textContent = text || ""; el.className = kind || ""; }
  function normalize(code) { return String(code).toUpperCase().replace(/[\\s-]/g, ""); }
  function format(code) { return code.slice(0, 5) + "-" + code.slice(5); }
  function csrf() {
    var parts = document.cookie ? document.cookie.split(";") : [];
    for (var i = 0; i < parts.length; i++) {
      var at = parts[i].indexOf("=");
      if (at > 0 && parts[i].slice(0, at).trim() === csrfCookie) return decodeURIComponent(parts[i].slice(at + 1).trim());
    }
    return "";
  }
  function call(method, path, body) {
    var headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (method !== "GET") headers["x-svc-csrf"] = csrf();
    return fetch(path, {
      method: method, headers: headers, credentials: "same-origin", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (data) { return { status: res.status, data: data }; });
    });
  }
  function failed(reply) {
    if (reply.status === 429) return "Too many attempts. Wait a minute, then try again.";
    if (reply.status === 403 && reply.data && reply.data.code === "csrf_check_failed") return "Your session could not be verified. Reload the page and try again.";
    return "Something went wrong (HTTP " + reply.status + "). Try again.";
  }
  function offline() { say("The server could not be reached. Check your connection and try again.", "error"); }

  function lookup() {
    say("Checking the code…");
    return call("GET", "/api/auth/device/pending?user_code=" + encodeURIComponent(userCode)).then(function (r) {
      if (r.status === 200) {
        $("client-name").textContent = r.data.client_name;
        $("confirm-code").textContent = r.data.user_code;
        $("token-name").textContent = r.data.token_name;
        $("expires-at").textContent = new Date(r.data.expires_at).toLocaleString();
        say("");
        show("step-confirm");
      } else if (r.status === 401) {
        say("Sign in to approve this device.");
        show("step-signin");
        $("email").focus();
      } else if (r.status === 404) {
        say("This code is not valid, was already used or has expired. Check the code on your device.", "error");
        show("step-code");
      } else {
        say(failed(r), "error");
        show("step-code");
      }
    }, offline);
  }

  function start(raw) {
    var code = normalize(raw);
    if (!/^[0-9A-F]{10}$/.test(code)) {
      say("Enter the 10-character code shown on your device, like ABCDE-12345.", "error");
      show("step-code");
      return;
    }
    userCode = code;
    $("user-code").value = format(code);
    history.replaceState(null, "", "/device?user_code=" + format(code));
    lookup();
  }

  $("code-form").addEventListener("submit", function (event) {
    event.preventDefault();
    start($("user-code").value);
  });

  $("signin-form").addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy) return;
    busy = true;
    say("Signing in…");
    var password = $("password");
    call("POST", "/api/auth/login", { email: $("email").value, password: password.value }).then(function (r) {
      password.value = "";
      if (r.status === 200) return lookup();
      if (r.status === 401) say("Email or password is incorrect.", "error");
      else if (r.status === 403) say((r.data && r.data.error) || "You cannot sign in yet.", "error");
      else say(failed(r), "error");
    }, offline).then(function () { busy = false; });
  });

  function decide(decision) {
    if (busy) return;
    busy = true;
    $("approve").disabled = true;
    $("deny").disabled = true;
    call("POST", "/api/auth/device/" + decision, { user_code: userCode }).then(function (r) {
      if (r.status === 200) {
        $("done-message").textContent = decision === "approve"
          ? "Device approved. " + $("client-name").textContent + " finishes signing in on its next check."
          : "Request denied. The device was not given access.";
        $("done-message").className = decision === "approve" ? "success" : "";
        say("");
        show("step-done");
        return;
      }
      if (r.status === 401) { say("Your session ended. Sign in again.", "error"); show("step-signin"); return; }
      if (r.status === 409 || r.status === 404) {
        $("done-message").textContent = "This request was already approved or denied, or it has expired. Start the login on your device again.";
        $("done-message").className = "error";
        say("");
        show("step-done");
        return;
      }
      say(failed(r), "error");
    }, offline).then(function () {
      busy = false;
      $("approve").disabled = false;
      $("deny").disabled = false;
    });
  }
  $("approve").addEventListener("click", function () { decide("approve"); });
  $("deny").addEventListener("click", function () { decide("deny"); });

  var initial = new URLSearchParams(location.search).get("user_code");
  if (initial) start(initial); else { show("step-code"); $("user-code").focus(); }
})();
`;
