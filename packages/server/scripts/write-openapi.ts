// Regenerates api/openapi.json from the route schemas: `npm run openapi`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { openEmbedded } from "../src/platform/db/index.js";
import { OPENAPI_PATH, renderOpenApi } from "../src/platform/http/openapi.js";

const dataDir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
try {
  // The document comes from the route schemas alone; the database is never queried.
  const db = await openEmbedded({ client: new PGlite() });
  const app = await buildApp({ config: loadConfig({ SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: "1".repeat(64) }), db, logger: false });
  await app.http.ready();
  writeFileSync(OPENAPI_PATH, renderOpenApi(app.http));
  await app.http.close();
  await db.close();
  console.log(`wrote ${OPENAPI_PATH}`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
