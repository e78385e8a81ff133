/** SQLSTATE of a driver error, from node-postgres or PGlite (both expose `code`), possibly wrapped by Drizzle. */
export function sqlState(err: unknown): string | undefined {
  for (let cur: unknown = err, depth = 0; cur && depth < 4; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A unique violation, optionally of one named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (sqlState(err) !== "23505") return false;
  if (!constraint) return true;
  for (let cur: unknown = err, depth = 0; cur && depth < 4; depth++) {
    if ((cur as { constraint?: unknown }).constraint === constraint) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A foreign key refused a change: 23503, or 23001 (restrict_violation), which PostgreSQL 18 raises for
 * ON DELETE RESTRICT where earlier versions raise 23503.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  const state = sqlState(err);
  return state === "23503" || state === "23001";
}
