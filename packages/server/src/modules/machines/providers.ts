import type { Issue } from "../../platform/errors.js";

/**
 * The providers svc can run pool machines with, and what each accepts in a pool's settings. One entry
 * per provider: a container or cloud provider is one more entry (and its implementation) here.
 */
export interface ProviderRules {
  /** Problems with a pool's (or a grant's) provider settings, as issues at the given paths. */
  check(settings: { providerConfig?: Record<string, unknown>; options?: Record<string, unknown>; authSecret?: string }, paths: ProviderPaths): Issue[];
}

export interface ProviderPaths {
  providerConfig: string;
  options: string;
  authSecret: string;
}

const mustBeEmpty = (value: Record<string, unknown> | undefined, path: string, what: string): Issue[] =>
  value && Object.keys(value).length > 0 ? [{ path, message: `the local provider takes no ${what} yet; send {}` }] : [];

const PROVIDERS: Record<string, ProviderRules> = {
  /** Machines run as daemon processes on the svc host itself (single-host and development use). */
  local: {
    check(settings, paths) {
      return [
        ...mustBeEmpty(settings.providerConfig, paths.providerConfig, "provider_config"),
        ...mustBeEmpty(settings.options, paths.options, "provider options"),
        ...(settings.authSecret === undefined ? [] : [{ path: paths.authSecret, message: "the local provider needs no credential" }]),
      ];
    },
  },
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export function providerRules(name: string): ProviderRules | undefined {
  return Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
}
