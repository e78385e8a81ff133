import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// svc serves dist/ at `/` (packages/server/src/platform/http/console.ts): hashed files under /assets/ are
// cached for good, index.html never. No source maps in the build: they would be served to every visitor.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false, target: "es2022" },
});
