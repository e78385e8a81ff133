import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Helpers for tests that run the real `svc` entry point in child processes. */

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "../../src/main.ts");

/**
 * Node's arguments that run `svc` from its TypeScript sources (tsx), @svc/protocol included: the
 * `@svc/source` export condition picks its sources, as vitest does, rather than a dist/ that may be stale.
 */
export const SVC_FROM_SOURCE = ["--conditions=@svc/source", "--import", "tsx", MAIN];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Waits (at most 30 s) until `url` answers /readyz with 200. */
export async function ready(url: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("svc did not become ready");
}
