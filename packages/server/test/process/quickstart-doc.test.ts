import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";

/*
 * docs/quickstart.md runs top to bottom as one script: its `sh` blocks, in order, against a started svc
 * and the fake provider, with every command's failure (an HTTP error too) failing the test. Blocks that
 * start a long-running program or need a person are marked `<!-- quickstart test: skip (why) -->` in the doc.
 */
const QUICKSTART = new URL("../../../../docs/quickstart.md", import.meta.url);
const work = mkdtempSync(join(tmpdir(), "svc-quickstart-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The doc's `sh` blocks but the marked ones, with the doc's addresses replaced by the test's. */
function script(svcOrigin: string, providerOrigin: string): string {
  const blocks = [...readFileSync(QUICKSTART, "utf8").matchAll(/(<!-- quickstart test: skip[^>]*-->\n)?```sh\n([\s\S]*?)```/g)];
  expect(blocks.length).toBeGreaterThan(5);
  return blocks
    .filter((block) => block[1] === undefined)
    .map((block) => block[2]!.replaceAll("http://localhost:8080", svcOrigin).replaceAll("localhost:8080", svcOrigin).replaceAll("http://127.0.0.1:8787", providerOrigin))
    .join("\n");
}

// svc on the embedded database whatever database the suite runs on: the PostgreSQL run would repeat this unchanged.
describe.skipIf(process.env["DATABASE_URL"])("docs/quickstart.md", () => {
  it("runs top to bottom as one script", { timeout: 300_000 }, async () => {
    const provider = await startFakeProvider();
    onTestFinished(() => provider.close());
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    const env = { ...process.env, DATABASE_URL: "", SVC_DATA_DIR: join(work, "data"), PORT: String(port), HOST: "127.0.0.1", SVC_LOG_LEVEL: "warn", SVC_ALLOW_PRIVATE_NETWORK: "true" };
    const svc = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    onTestFinished(() => void svc.kill("SIGKILL"));
    await ready(`http://127.0.0.1:${port}`, svc);

    // curl fails on an HTTP error as well, so a wrong id or body stops the script where it went wrong.
    const prelude = `set -euo pipefail\ncurl() { command curl --fail-with-body --max-time 30 "$@"; }\n`;
    const bash = spawn("bash", ["-c", prelude + script(origin, new URL(provider.baseUrl).origin)], { cwd: work, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    bash.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    bash.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await exited(bash), output.slice(-3000)).toBe(0);
    expect(output).toContain('"status":"ready"');
  });
});
