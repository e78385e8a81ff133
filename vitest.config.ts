import { defineConfig } from "vitest/config";

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
    reporters: ["default"],
  },
});
