import { readFileSync } from "node:fs";

/** The CLI's version, from its package.json (beside dist/ and src/ alike). */
export function version(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  const found = typeof manifest === "object" && manifest !== null ? (manifest as Record<string, unknown>)["version"] : undefined;
  return typeof found === "string" ? found : "unknown";
}
