import type { Issue } from "../../../../platform/errors.js";
import type { ProviderRules } from "../index.js";

const mustBeEmpty = (value: Record<string, unknown> | undefined, path: string, what: string): Issue[] =>
  value && Object.keys(value).length > 0 ? [{ path, message: `the local provider takes no ${what}; send {}` }] : [];

/**
 * Machines are svcd child processes on the svc host itself: nothing to configure and no credential. A
 * `provider_auth_secret_id` is kept with the pool (reference clients always send one) and never used.
 */
export const localProviderRules: ProviderRules = {
  // Sleeping stops the svcd child; its directory stays, so waking starts it again on the same home.
  sleeps: true,
  check(settings, paths) {
    return [
      ...mustBeEmpty(settings.providerConfig, paths.providerConfig, "provider_config"),
      ...mustBeEmpty(settings.options, paths.options, "provider options"),
    ];
  },
};
