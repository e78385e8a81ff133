import { canonicalJson } from "../../platform/json.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, invalidRequest, notFound, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { encodeId } from "../../platform/ids.js";
import { findUser } from "../identity/store.js";
import { requireProject } from "../orgs/access.js";
import type { ExternalActorInput } from "./schemas.js";
import * as store from "./store.js";

export type { ActorRow } from "./store.js";

/*
 * Attribution for the modules that record who did something (inputs, interaction answers, cancels).
 * These run inside the caller's transaction, after the caller has authorized the request.
 */

/**
 * Upserts an API-managed actor by (provider_tenant_id, provider_user_id) with provider `external`.
 * Given attributes overwrite the stored ones, empty values included; omitted ones are kept. `at` is
 * the JSON Pointer of the params in the request body, for issues.
 */
export async function upsertExternalActor(tx: Tx, orgId: string, projectId: string, params: ExternalActorInput, at = ""): Promise<store.ActorRow> {
  checkExternalActor(params, at);
  return upsert(
    tx,
    { orgId, projectId, provider: "external", tenant: params.provider_tenant_id ?? "", providerUserId: params.provider_user_id },
    { displayName: params.display_name, metadata: params.metadata },
  );
}

/**
 * The actor of a person an integration heard from (a Slack user in a workspace): provider `integration`,
 * keyed by the provider's tenant and user id. Written by integrations only, never through the API.
 */
export async function upsertIntegrationActor(tx: Tx, orgId: string, projectId: string, person: { tenantId: string; userId: string }): Promise<store.ActorRow> {
  return upsert(tx, { orgId, projectId, provider: "integration", tenant: person.tenantId, providerUserId: person.userId }, {});
}

/**
 * The actor a principal acts as in a project: a user's `svc` actor (made on first use; its
 * provider_user_id is the user's public id and its display name follows the user's), or null for an
 * organization API key, which is nobody in particular.
 */
export async function actorForPrincipal(tx: Tx, principal: Principal, orgId: string, projectId: string): Promise<store.ActorRow | null> {
  if (principal.kind !== "user") return null;
  // Identity's own lookup, as invitations use it: the user's current display name.
  const user = await findUser(tx, principal.userId);
  return upsert(
    tx,
    { orgId, projectId, provider: "svc", tenant: "", providerUserId: encodeId("user", principal.userId) },
    { displayName: user?.displayName, userId: principal.userId },
  );
}

/**
 * The stored row when it already says what `attributes` say (the common case: one read), else the
 * written one; a concurrent first write is settled by the upsert's conflict handling.
 */
async function upsert(tx: Tx, identity: store.ActorIdentity, attributes: store.ActorAttributes): Promise<store.ActorRow> {
  const stored = await store.findActorByIdentity(tx, identity);
  if (stored && agrees(stored, attributes)) return stored;
  return (await store.upsertActor(tx, identity, attributes)) ?? (await store.findActorByIdentity(tx, identity))!;
}

/** Every attribute given is already the stored one (an absent attribute leaves the column as it is). */
function agrees(stored: store.ActorRow, attributes: store.ActorAttributes): boolean {
  return (
    (attributes.displayName === undefined || attributes.displayName === stored.displayName) &&
    (attributes.userId === undefined || attributes.userId === stored.userId) &&
    (attributes.metadata === undefined || canonicalJson(attributes.metadata) === canonicalJson(stored.metadata))
  );
}

/**
 * Who a submitted input (or answer, or cancel) is attributed to. A user is always themself and may not
 * name an actor (400); an org key may name an external actor (upserted, with issues under `/actor`)
 * or no one.
 */
export async function resolveInputActor(
  tx: Tx,
  principal: Principal,
  orgId: string,
  projectId: string,
  params: ExternalActorInput | undefined,
): Promise<store.ActorRow | null> {
  if (principal.kind === "user") {
    if (params !== undefined) throw invalidRequest("requests authenticated as a user are attributed to the user; omit actor");
    return actorForPrincipal(tx, principal, orgId, projectId);
  }
  return params === undefined ? null : upsertExternalActor(tx, orgId, projectId, params, "/actor");
}

/** PostgreSQL text and jsonb cannot hold U+0000; the schema cannot say so, this check does. */
function checkExternalActor(params: ExternalActorInput, at: string): void {
  const issues: Issue[] = [];
  const check = (value: string | undefined, path: string) => {
    if (value?.includes("\u0000")) issues.push({ path: `${at}${path}`, message: "must not contain U+0000 (NUL)" });
  };
  check(params.provider_tenant_id, "/provider_tenant_id");
  check(params.provider_user_id, "/provider_user_id");
  check(params.display_name, "/display_name");
  for (const [key, value] of Object.entries(params.metadata ?? {})) {
    if (key.includes("\u0000") || value.includes("\u0000")) {
      issues.push({ path: `${at}/metadata/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`, message: "must not contain U+0000 (NUL)" });
    }
  }
  if (issues.length > 0) throw new AppError("validation_failed", "request body failed validation", { issues });
}

/** Actors of a project: read with agent.read, upserted with agent.operate. */
export function createActorsService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async listActors(principal: Principal, orgId: string, projectId: string, filters: store.ActorFilters, page: PageRequest) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        return store.listActors(tx, { orgId, projectId, filters, page });
      });
    },

    async getActor(principal: Principal, orgId: string, projectId: string, actorId: string): Promise<store.ActorRow> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        const actor = await store.findActor(tx, orgId, projectId, actorId);
        if (!actor) throw notFound("actor");
        return actor;
      });
    },

    async putActor(principal: Principal, orgId: string, projectId: string, params: ExternalActorInput): Promise<store.ActorRow> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.operate");
        return upsertExternalActor(tx, orgId, projectId, params);
      });
    },
  };
}

export type ActorsService = ReturnType<typeof createActorsService>;
