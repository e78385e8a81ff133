import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer, connect, type AddressInfo, type Server } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { ApiClient } from "../../server/test/support/client.js";
import { startTestServer, type TestServer } from "../../server/test/support/server.js";
import { staleWorkspaces } from "../../../scripts/build-state.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
/** Debian's chromium; .ci/run installs it. The tests fail, never skip, without it. */
export const CHROMIUM = "/usr/bin/chromium";
const DATABASE = process.env["DATABASE_URL"] ? "postgres" : "pglite";
export const ARTIFACTS = join(ROOT, "test-artifacts", "console", DATABASE);

/** The console's build, made first when missing or older than its sources (as `npm start` does). */
function ensureBuilt(): void {
  if (!staleWorkspaces(ROOT).includes("packages/web")) return;
  // Vitest sets NODE_ENV=test; the console's vite.config.ts builds for production whatever NODE_ENV says.
  const build = spawnSync("npm", ["run", "build", "-w", "@svc/web"], { cwd: ROOT, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`building the console failed:\n${build.stdout}\n${build.stderr}`);
}

export interface ConsoleHarness {
  server: TestServer;
  /** An API client that sends svc's public URL as its Origin, as the browser does. */
  api: ApiClient;
  /** svc's public URL, which the browser opens: CSRF accepts changes from that origin only. */
  url: string;
  /** A fresh page in a fresh context (its own cookies), at `width` pixels wide. */
  page(width?: number, colorScheme?: "light" | "dark"): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
}

/**
 * A real svc serving the built console, and one headless Chromium for the whole file. svc must be started
 * with its public URL, which is the address the browser opens; the port is only known once svc listens,
 * so the browser talks to a loopback forwarder whose port is picked first.
 */
export function useConsole(env: Record<string, string> = {}, options: { webhooks?: boolean } = {}): ConsoleHarness {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let forwarder: Server | undefined;
  let url = "";
  beforeAll(async () => {
    ensureBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    let target = 0;
    forwarder = createServer((socket) => {
      const upstream = connect(target, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => forwarder!.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
    server = await startTestServer({ SVC_PUBLIC_URL: url, ...env }, { worker: true, ...options });
    target = Number(new URL(server.url).port);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => (forwarder ? forwarder.close(resolve) : resolve(undefined)));
  });
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the console harness starts in beforeAll");
    return value;
  };
  return {
    get server() {
      return need(server);
    },
    get url() {
      return url;
    },
    get api() {
      return new ApiClient(need(server).url, url);
    },
    async page(width = 1280, colorScheme: "light" | "dark" = "light") {
      const context = await need(browser).newContext({ viewport: { width, height: 900 }, baseURL: url, colorScheme });
      // Playwright's 30 s default for an action once ran out on a loaded machine waiting for a lazily loaded
      // page (the budgets form); the test's own 120 s still bounds it.
      context.setDefaultTimeout(60_000);
      return context.newPage();
    },
    async shot(page, name) {
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
  };
}

/** The password every test account is made with (ApiClient.signup's default). */
export const PASSWORD = "correct horse battery";

export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname !== "/signin");
}

/** Waits for the page's address to match; a timeout says where the page stayed and what its alerts said. */
export async function waitForPath(page: Page, path: RegExp): Promise<void> {
  try {
    await page.waitForURL(path);
  } catch (err) {
    const alerts = await page.getByRole("alert").allTextContents().catch(() => [] as string[]);
    throw new Error(`the page stayed at ${page.url()} (alerts: ${JSON.stringify(alerts)}): ${(err as Error).message}`);
  }
}

export async function expectText(page: Page, text: string): Promise<void> {
  await page.getByText(text, { exact: false }).first().waitFor({ timeout: 30_000 });
}

/**
 * Replaces the config editor's whole text with `text` as a person would: select all with the keyboard, then
 * type it in one input. Playwright's fill() selects through the DOM, which CodeMirror reads back a moment
 * later: on a loaded machine its insert once landed after the text the page started with (the starter config
 * and then the new one, "Map keys must be unique"). The editor's text is checked afterwards.
 */
export async function replaceConfigText(page: Page, text: string): Promise<void> {
  const editor = page.getByLabel("Config (YAML)");
  await expect.poll(() => editor.isEditable()).toBe(true);
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.insertText(text);
  await expect.poll(() => configText(page)).toBe(text);
}

/** The config editor's text: CodeMirror's lines, or the plain text area that stands in while it loads. */
function configText(page: Page): Promise<string> {
  return page
    .getByLabel("Config (YAML)")
    .evaluate((element) => (element.tagName === "TEXTAREA" ? (element as unknown as { value: string }).value : [...element.querySelectorAll(".cm-line")].map((line) => line.textContent ?? "").join("\n")));
}

/** How far the page scrolls sideways: 0 when it fits the viewport (phone width, docs/console.md). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
}
