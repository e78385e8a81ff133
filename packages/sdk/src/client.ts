import createFetchClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/openapi.js";
import { SvcError } from "./errors.js";

export interface ClientOptions {
  /** svc's origin, e.g. `https://svc.example.com` (the contract's paths start with `/api/`). */
  baseUrl: string;
  /** A personal or organization API key, sent as `Authorization: Bearer …`. */
  token?: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** The typed operations of api/openapi.json, plus what the hand-written helpers need to make requests. */
export interface SvcClient extends Client<paths> {
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly fetch: typeof globalThis.fetch;
}

export function createClient(options: ClientOptions): SvcClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const api = createFetchClient<paths>({ baseUrl, fetch, headers });
  return Object.assign(api, { baseUrl, token: options.token, fetch });
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or an `SvcError` thrown for a failed one:
 * `const me = await unwrap(client.GET("/api/v1/me"))`.
 */
export async function unwrap<T>(pending: Promise<Outcome<T>>): Promise<Exclude<T, undefined>> {
  const outcome = await pending;
  if (!outcome.response.ok) throw SvcError.from(outcome.response.status, outcome.error);
  // A 204 has no data: callers of such operations ignore the (undefined) result.
  return outcome.data as Exclude<T, undefined>;
}
