import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { Tx } from "../../platform/db/index.js";
import { notFound } from "../../platform/errors.js";
import { openMaterial } from "./material.js";
import type { OwnerKind, SecretKind, SecretMaterial } from "./schemas.js";
import * as store from "./store.js";

/** What a module referencing a secret may know about it: never its value. */
export interface SecretFacts {
  ownerKind: OwnerKind;
  kind: SecretKind;
  managementKind: "tenant" | "cluster";
}

/**
 * Secrets used by the organization itself rather than by one project: model provider credentials,
 * machine and pool environments, and what other modules may know about a secret they reference. The
 * project-scoped counterpart of `openOrgSecret` is `SecretsService.resolvePayload`. These functions run inside the caller's transaction and never open one; authorization is the caller's.
 */
export function createOrgCredentials(deps: { cipher: EnvelopeCipher }) {
  const { cipher } = deps;
  return {
    /** The facts of a secret of `orgId`, or undefined when the org has no such secret. */
    async describe(tx: Tx, orgId: string, secretId: string): Promise<SecretFacts | undefined> {
      const secret = await store.findSecret(tx, orgId, secretId);
      return secret && factsOf(secret);
    },

    /** The facts of a secret the project can use (owned by it or granted to it), or undefined. */
    async describeForProject(tx: Tx, orgId: string, projectId: string, secretId: string): Promise<SecretFacts | undefined> {
      const found = await store.findProjectSecret(tx, orgId, projectId, secretId);
      return found && factsOf(found.secret);
    },

    /** The current material of an org-owned secret. Any other secret, or none, is not_found. */
    async openOrgSecret(tx: Tx, orgId: string, secretId: string): Promise<SecretMaterial> {
      const secret = await store.findSecret(tx, orgId, secretId);
      if (!secret || secret.ownerKind !== "org") throw notFound("secret");
      const version = await store.findVersion(tx, secretId, secret.currentVersionNumber);
      if (!version) throw notFound("secret");
      const sealed = { orgId, secretId, versionNumber: version.versionNumber, kind: secret.kind as SecretKind };
      return openMaterial(cipher, sealed, version.envelope);
    },
  };
}

function factsOf(secret: store.SecretRow): SecretFacts {
  return {
    ownerKind: secret.ownerKind as OwnerKind,
    kind: secret.kind as SecretKind,
    managementKind: secret.managementKind as SecretFacts["managementKind"],
  };
}

export type OrgCredentials = ReturnType<typeof createOrgCredentials>;
