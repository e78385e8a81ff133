import { secretGrants } from "../../db/schema/index.js";
import type { Database } from "../../platform/db/index.js";
import { createOwnedGrants } from "../grants/owned-service.js";
import { grantsStore } from "../grants/store.js";
import { SECRETS } from "./authority.js";

/**
 * Grants of secrets to other projects of their organization (modules/grants). Granting needs the right to
 * change the secret and project.secrets.manage on the target project, so a grant never hands a value to a
 * project by someone who could not put one there themselves.
 */
export const createSecretGrants = (deps: { db: Database }) =>
  createOwnedGrants(deps, {
    owned: SECRETS,
    store: grantsStore(secretGrants, { subject: secretGrants.secretId, project: secretGrants.targetProjectId }),
    row: ({ subjectId, ...grant }) => ({ ...grant, secretId: subjectId }),
    uniqueTarget: "secret_grants_target",
  });
