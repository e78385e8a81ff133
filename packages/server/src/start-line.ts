import { join } from "node:path";
import type { Config } from "./config.js";

/** The HTTP routes the start line may point people to, when this build serves them. */
export interface ServedPages {
  /** A web console at `/`. */
  console: boolean;
  /** A readable API reference at `/api/docs`. */
  apiDocs: boolean;
}

/**
 * The one line a person reads when svc starts: where to open it, where it listens, where its data is and
 * which database it uses. Only what this process serves is named, and never a database password.
 */
export function startLine(config: Config, pages: ServedPages | undefined): string {
  const parts: string[] = [];
  if (pages) {
    const open = pages.console ? `console ${config.publicUrl}/` : `API ${config.publicUrl}/api/v1`;
    const docs = pages.apiDocs ? `API reference ${config.publicUrl}/api/docs` : `contract ${config.publicUrl}/api/v1/openapi.json`;
    parts.push(`${open} (listening on ${config.host}:${config.port}); ${docs}`);
  }
  parts.push(`data dir ${config.dataDir}`);
  parts.push(`database ${databaseName(config)}`);
  return `svc is ready: ${parts.join("; ")}`;
}

/** PostgreSQL as user@host:port/database (no password, no query), or the embedded database's directory. */
export function databaseName(config: Pick<Config, "databaseUrl" | "dataDir">): string {
  if (!config.databaseUrl) return `embedded (PGlite) in ${join(config.dataDir, "pgdata")}`;
  try {
    const url = new URL(config.databaseUrl);
    const user = url.username ? `${decodeURIComponent(url.username)}@` : "";
    return `PostgreSQL ${user}${url.host}${url.pathname}`;
  } catch {
    // libpq's key=value form: the whole string might carry a password, so none of it is shown.
    return "PostgreSQL (DATABASE_URL)";
  }
}
