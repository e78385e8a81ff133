import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

// svc serves dist/ at `/` (packages/server/src/platform/http/console.ts): hashed files under /assets/ are
// cached for good, index.html never. No source maps in the build: they would be served to every visitor.
export default defineConfig({
  plugins: [react()],
  // @svc/sdk from its sources, as the tests and the typecheck read it: the console builds without the SDK's build.
  resolve: { conditions: ["@svc/source", ...defaultClientConditions] },
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false, target: "es2022" },
});
