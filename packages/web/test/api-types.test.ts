import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import { expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");

// The console's API types are generated from the contract; after a route changes, `npm run openapi`
// regenerates both. A stale copy would let the console compile against an API that no longer exists.
it("the console's API types match api/openapi.json", async () => {
  const generated = astToString(await openapiTS(pathToFileURL(join(ROOT, "api/openapi.json"))));
  const committed = readFileSync(join(ROOT, "packages/web/src/api/schema.d.ts"), "utf8");
  expect(committed.includes(generated.trim()), "packages/web/src/api/schema.d.ts is stale: run `npm run openapi`").toBe(true);
});
