import { sql } from "drizzle-orm";
import { rawRows } from "../../platform/db/index.js";
import type { SecretUser } from "../secrets/service.js";

/** A secret UUID among the values of an environment map (`secret_env` maps hold secret UUIDs as strings). */
const holds = (column: string, secretId: string) =>
  sql`jsonb_path_exists(${sql.raw(column)}, '$.* ? (@ == $id)', jsonb_build_object('id', ${secretId}::text))`;

/**
 * The machine pool that still uses `secretId`: as its provider credential, in its machines'
 * default environment, or in a project grant's overlay of that environment. The reference blocks a
 * secret's deletion while a machine pool references it (its deleteSecret operation). A connected
 * machine's own `secret_env` does not block it, as in the reference: it is resolved when a process
 * starts, and a deleted secret fails that process with an error naming the variable.
 */
export const poolUsingSecret: SecretUser = async (tx, orgId, secretId) => {
  const [row] = await rawRows<{ name: string }>(
    tx,
    sql`SELECT p.name FROM machine_pools p
        WHERE p.org_id = ${orgId} AND (p.provider_auth_secret_id = ${secretId} OR ${holds("p.default_machine_secret_env", secretId)})
      UNION ALL
      SELECT p.name FROM project_machine_pool_grants g JOIN machine_pools p ON p.id = g.machine_pool_id
        WHERE g.org_id = ${orgId} AND ${holds("g.default_machine_secret_env_overlay", secretId)}
      LIMIT 1`,
  );
  return row && `machine pool "${row.name}"`;
};
