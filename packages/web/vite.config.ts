import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig, type UserConfig } from "vite";

// svc serves dist/ at `/` (packages/server/src/platform/http/console.ts): hashed files under /assets/ are
// cached for good, index.html never. No source maps in the build: they would be served to every visitor.
const config: UserConfig = {
  plugins: [react(), tailwindcss()],
  // @svc/sdk from its sources, as the tests and the typecheck read it: the console builds without the SDK's build.
  resolve: { conditions: ["@svc/source", ...defaultClientConditions] },
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false, target: "es2022" },
};

export default defineConfig(({ command }) => {
  // What svc serves is the production build whatever NODE_ENV the builder's shell has (vitest sets "test",
  // a developer's profile may say "development"): Vite keeps a NODE_ENV it finds, and would bundle
  // React's development build. Read by Vite after this file is loaded.
  if (command === "build") process.env["NODE_ENV"] = "production";
  return config;
});
