import { Agent, fetch as undiciFetch } from "undici";
import { assertOutboundAllowed, guardedLookup, type OutboundPolicy } from "./outbound.js";

/**
 * A `fetch` for long calls to tenant-chosen addresses (model providers). The destination is checked
 * before the request and again when the connection resolves the name (`guardedLookup`), like
 * `outboundGet`. undici's own idle timeouts are off: Node's global fetch gives up after 300 s without a
 * byte, shorter than a model's configured timeout, so the caller's AbortSignal is the only deadline.
 */
export function createGuardedFetch(policy: OutboundPolicy): typeof fetch {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(policy) }, headersTimeout: 0, bodyTimeout: 0 });
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" || input instanceof URL ? input : input.url;
    await assertOutboundAllowed(url, policy);
    // undici's fetch is the implementation behind the global one; only its type declarations differ.
    return (await undiciFetch(url, { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
  };
  return guarded as typeof fetch;
}
