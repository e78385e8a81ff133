import { randomBytes } from "node:crypto";
import type { Database, Tx } from "../../platform/db/index.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { CredentialRejected, type OAuthAppCredentials } from "./kind.js";
import type { IntegrationKinds } from "./kind.js";
import { findProfile } from "../agent-profiles/service.js";
import { requireProject } from "../orgs/access.js";
import { installerOf, type IntegrationOAuthService } from "./oauth-service.js";
import { invalid } from "./settings.js";
import * as installs from "./installs-store.js";
import * as store from "./store.js";

/** The only kind the reference binds to profiles this way. */
const SLACK = "slack_thread";

/** A profile in a project; `publicProfileId` is the `aprf_` id launcher settings hold. */
export interface ProfilePath {
  orgId: string;
  projectId: string;
  profileId: string;
  publicProfileId: string;
}

/**
 * The reference's profile-bound Slack installs (reference: listIntegrationInstalls, createSlackSetup,
 * createIntegrationOAuthSetup) as views over the Integration resource: an install is a connected
 * slack_thread integration whose launcher offers the profile. Setting one up creates a disconnected
 * integration whose launcher offers only that profile and starts the OAuth install for it; the shared
 * callback connects it, exactly as for an integration set up directly.
 */
export function createIntegrationInstallsService(deps: { db: Database; kinds: IntegrationKinds; oauth: IntegrationOAuthService; publicUrl: string }) {
  const { db, kinds, oauth, publicUrl } = deps;

  async function startWithApp(principal: UserPrincipal, path: ProfilePath, app: OAuthAppCredentials, options: { displayName?: string; returnTo?: string }) {
    return db.tx(async (tx) => {
      await requireProfile(tx, principal, path);
      const row = await store.insertIntegration(tx, {
        id: newUuid(),
        orgId: path.orgId,
        projectId: path.projectId,
        // Agents see the tools as int__<name>__…; a name of svc's choosing, since these routes take none.
        name: `slack-${randomBytes(4).toString("hex")}`,
        kind: SLACK,
        settings: { launcher: { profiles: [path.publicProfileId] } },
        providerAgentDisplayName: options.displayName?.trim() ?? "",
      });
      if (!row) throw conflict("an integration with the generated name already exists; try again");
      return oauth.startIn(tx, principal, row, app, options.returnTo);
    });
  }

  return {
    async list(principal: Principal, orgId: string, projectId: string, filter: installs.InstallFilter, page: PageRequest) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.read");
        return installs.listInstalls(tx, orgId, projectId, filter, page);
      });
    },

    /** Deletes the integration behind the install, as deleting the integration does; nothing is revoked at Slack. */
    async remove(principal: Principal, orgId: string, projectId: string, integrationId: string) {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.manage");
        const row = await installs.findInstall(tx, orgId, projectId, integrationId);
        if (!row) throw notFound("integration install");
        await store.deleteIntegration(tx, orgId, projectId, row.id);
      });
    },

    /** An existing Slack app's credentials (reference: createIntegrationOAuthSetup). */
    setupWithCredentials: (principal: UserPrincipal, path: ProfilePath, app: OAuthAppCredentials, returnTo?: string) =>
      startWithApp(principal, path, app, { returnTo }),

    /**
     * A new Slack app from svc's manifest through the caller's app configuration token (reference:
     * createSlackSetup). Access and the profile are checked before Slack is asked; Slack is called
     * outside any transaction. The token is used once and never stored.
     */
    async slackSetup(principal: UserPrincipal, path: ProfilePath, input: { appName: string; configurationToken: string; returnTo?: string }) {
      await db.tx((tx) => requireProfile(tx, principal, path));
      const installer = installerOf(kinds, SLACK);
      if (!installer.createApp) throw conflict("this svc cannot create Slack apps");
      let created: Awaited<ReturnType<NonNullable<typeof installer.createApp>>>;
      try {
        created = await installer.createApp(input.configurationToken, {
          name: input.appName,
          redirectUri: oauth.redirectUri,
          eventsUrl: publicUrl + installer.eventPaths.events,
          actionsUrl: publicUrl + installer.eventPaths.actions,
        });
      } catch (err) {
        if (err instanceof CredentialRejected) throw invalid(err.issues, "Slack did not create the app");
        throw err;
      }
      const { appId, ...app } = created;
      const setup = await startWithApp(principal, path, app, { displayName: input.appName, returnTo: input.returnTo });
      return { ...setup, slack_app_id: appId };
    },
  };
}

export type IntegrationInstallsService = ReturnType<typeof createIntegrationInstallsService>;

async function requireProfile(tx: Tx, principal: Principal, path: ProfilePath): Promise<void> {
  await requireProject(tx, principal, path.orgId, path.projectId, "project.manage");
  if (!(await findProfile(tx, path.orgId, path.projectId, path.profileId))) throw notFound("agent profile");
}
