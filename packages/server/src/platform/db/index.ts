export type { AppDb, Database, NotificationTransport, Tx } from "./types.js";
export { openDatabase } from "./open.js";
export { DataDirInUse } from "./data-dir-lock.js";
export { openEmbedded } from "./embedded.js";
export { openPostgres } from "./postgres.js";
export { migrateEmbedded, migratePostgres } from "./migrate.js";
export { isForeignKeyViolation, isUniqueViolation } from "./pg-errors.js";
export { rawRows, rawCount } from "./raw.js";
export { analyzeEmbedded, embeddedAnalyzeTask } from "./analyze.js";
