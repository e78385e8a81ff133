import { statSync } from "node:fs";
import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Slowest files first, so that no long file starts last while the other worker idles. The files that start
 * processes (packages/server/test/process: svc, svcd) are small but take the longest, mostly waiting on their
 * children, so they go first, then the console's browser tests, then the rest. Within each group, the
 * durations of an earlier run (vitest keeps them in node_modules/.vite) order the files, longest first;
 * without them, as in CI after `npm ci`, the larger files go first. The groups are kept even with
 * durations: a file skipped on one database (the multi-process tests run on PostgreSQL only) has a
 * duration of nothing from the embedded run, and would otherwise start last in the PostgreSQL run.
 */
class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const duration = (file: TestSpecification) => this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(root, file.moduleId)}`)?.duration;
    const timed = files.every((file) => duration(file) !== undefined);
    const rank = (file: TestSpecification) => {
      const path = relative(root, file.moduleId);
      if (path.startsWith("packages/server/test/process/")) return 0;
      if (path.startsWith("packages/web/test/")) return 1;
      return 2;
    };
    const weight = (file: TestSpecification) => (timed ? duration(file)! : statSync(file.moduleId).size);
    return [...files].sort((a, b) => rank(a) - rank(b) || weight(b) - weight(a));
  }
}

export default defineConfig({
  // Workspace packages load from their TypeScript sources (the `@svc/source` export condition), never from a
  // dist/ that may be stale or not built. Vitest adds its own default conditions to these.
  ssr: { resolve: { conditions: ["@svc/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: ["packages/server/test/support/global-setup.ts"],
    pool: "forks",
    // Files in one worker share its module cache: each file still starts its own server and database, and
    // the server's modules load once per worker instead of once per file (a sixth of the suite's CPU).
    isolate: false,
    // Vitest's default on a 2-core machine is one worker, which runs the files one after another; most of
    // a file's time is spent waiting (child processes, the database, timers), so two at once roughly halve
    // the suite's wall time there. Each file has its own server, database and ports, so files never share state.
    maxWorkers: 2,
    // Generous: several tests start a server or a process of their own, and on a loaded 2-core machine one
    // start alone took over 30 s (issue 21). A test that fails reports as late; it never passes wrongly.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll's own default is 1 s: a console test that polls a page for what a request or a lazily
    // loaded chunk brings failed on a loaded machine where the same page took longer. A poll still passes as
    // soon as its assertion holds; only a failing one reports later.
    expect: { poll: { timeout: 30_000 } },
    reporters: ["default"],
    sequence: { sequencer: SlowFirst },
  },
});
