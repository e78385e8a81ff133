import { defineConfig } from "vitest/config";

export default defineConfig({
  // Workspace packages load from their TypeScript sources (the `@svc/source` export condition), never from a
  // dist/ that may be stale or not built. Vitest adds its own default conditions to these.
  ssr: { resolve: { conditions: ["@svc/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: ["packages/server/test/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
