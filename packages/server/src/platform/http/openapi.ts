import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { HttpApp } from "./app.js";

/** Where the committed contract lives: `api/openapi.json` at the repository root. */
export const OPENAPI_PATH = join(dirname(fileURLToPath(import.meta.url)), "../../../../../api/openapi.json");

/** The OpenAPI document exactly as committed: stable key order, two-space indent, final newline. */
export function renderOpenApi(app: HttpApp): string {
  return `${JSON.stringify(app.swagger(), null, 2)}\n`;
}
