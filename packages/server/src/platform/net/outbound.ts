import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
import { ipv6Bytes } from "./ipv6.js";

/**
 * The SSRF guard for every call svc makes to an address a tenant chose: model providers now, MCP servers
 * and webhooks later. Unless the operator allows the private network, a destination must resolve only to
 * public addresses. It is checked twice: `assertOutboundAllowed` before the request (clear error, and the
 * only check for IP literals, which never reach a resolver), and `guardedLookup` as the connection's own
 * resolver, so a name that resolves differently the second time (DNS rebinding) is refused as well.
 */
export interface OutboundPolicy {
  readonly allowPrivateNetwork: boolean;
}

/**
 * A destination the policy refuses. Its message is safe to show to the tenant who configured it.
 * `transient` when only a name that did not resolve was refused: asking again later may succeed, while
 * an internal address or another scheme is refused for as long as the policy stands.
 */
export class OutboundRefusedError extends Error {
  constructor(
    reason: string,
    readonly transient = false,
  ) {
    super(`destination not allowed: ${reason}`);
    this.name = "OutboundRefusedError";
  }
}

/** Every address a name resolves to; the system's resolver unless a test hands in its own. */
export type Resolver = (hostname: string, options?: LookupOptions) => Promise<LookupAddress[]>;

const INTERNAL_V4: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];
const INTERNAL_V6: Array<[string, number, string]> = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

/**
 * Why an address is internal, or null for a public one. An IPv6 address that carries an IPv4 address
 * (see `embeddedIpv4s`) is judged by the IPv4 address as well. Anything that is not an IP address at
 * all counts as internal.
 */
export function internalAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return v4Reason(address);
  if (family !== 6) return "not an IP address";
  const bytes = ipv6Bytes(address)!;
  const v6Reason = INTERNAL_V6.find(([network, prefix]) => samePrefix(bytes, ipv6Bytes(network)!, prefix))?.[2];
  if (v6Reason) return v6Reason;
  for (const embedded of embeddedIpv4s(bytes)) {
    const reason = v4Reason(embedded);
    if (reason !== null) return reason;
  }
  return null;
}

export function isInternalAddress(address: string): boolean {
  return internalAddressReason(address) !== null;
}

function v4Reason(address: string): string | null {
  const value = ipv4Number(address);
  return INTERNAL_V4.find(([network, prefix]) => value >>> (32 - prefix) === ipv4Number(network) >>> (32 - prefix))?.[2] ?? null;
}

const systemResolver: Resolver = (hostname, options = {}) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/** The host of a URL as a resolver takes it: IPv6 literals lose their brackets. */
export function urlHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Throws `OutboundRefusedError` unless `url` is http(s) and, when the private network is not allowed,
 * every address its host resolves to is public. A host that does not resolve is refused too.
 */
export async function assertOutboundAllowed(url: string | URL, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<void> {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    throw new OutboundRefusedError("not a valid URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new OutboundRefusedError(`scheme ${parsed.protocol} is not http or https`);
  if (policy.allowPrivateNetwork) return;
  const host = urlHost(parsed);
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new OutboundRefusedError(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? "lookup failed"})`, true);
  }
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve`, true);
  refuseInternal(host, addresses);
}

/**
 * The check made when a tenant gives an address svc will call later (a model provider's base_url): an
 * internal destination is refused there and then, as every call to it would be. A name that does not
 * resolve at this moment passes, since DNS may be down for a while; each call checks again.
 */
export async function assertConfiguredDestination(url: string | URL, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<void> {
  const parsed = typeof url === "string" ? new URL(url) : url;
  if (policy.allowPrivateNetwork) return;
  const host = urlHost(parsed);
  const addresses = await resolve(host).catch(() => []);
  refuseInternal(host, addresses);
}

function refuseInternal(host: string, addresses: readonly LookupAddress[]): void {
  for (const { address } of addresses) {
    const reason = internalAddressReason(address);
    if (reason !== null) {
      const shown = host === address ? address : `${host} resolves to ${address}`;
      throw new OutboundRefusedError(`${shown}, a ${reason} address (set SVC_ALLOW_PRIVATE_NETWORK=true to allow)`);
    }
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` / `net.connect` that refuses internal addresses at connection time. It
 * answers in both shapes Node asks for (`all: true` with happy eyeballs, a single address otherwise).
 */
export function guardedLookup(
  policy: OutboundPolicy,
  resolve: Resolver = systemResolver,
): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    const answer = (addresses: LookupAddress[]) => {
      if (!policy.allowPrivateNetwork) {
        try {
          if (addresses.length === 0) throw new OutboundRefusedError(`${hostname} does not resolve`, true);
          refuseInternal(hostname, addresses);
        } catch (refused) {
          return callback(refused as NodeJS.ErrnoException, []);
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    };
    resolve(hostname, options).then(answer, (err: NodeJS.ErrnoException) => callback(err, []));
  };
}

function ipv4Number(address: string): number {
  return address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

function samePrefix(a: number[], b: number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const mask = 0x80 >> bit % 8;
    if ((a[bit >> 3]! & mask) !== (b[bit >> 3]! & mask)) return false;
  }
  return true;
}

const LAST_32_BITS = [12, 13, 14, 15];

interface Carrier {
  network: number[];
  prefix: number;
  /** Byte offsets of the IPv4 address. */
  at: number[];
  /** Byte offsets the form requires to be zero. */
  zero: number[];
}

const carrier = (network: string, prefix: number, at: number[], zero: number[] = []): Carrier => ({ network: ipv6Bytes(network)!, prefix, at, zero });

/**
 * The IPv6 forms that carry an IPv4 address. A host's network may deliver any of them to the IPv4
 * address (a NAT64 or 6to4 gateway, a dual stack), so an address is internal when any IPv4 address it
 * carries is.
 */
const CARRIERS: Carrier[] = [
  carrier("::ffff:0:0", 96, LAST_32_BITS), // IPv4-mapped
  carrier("::ffff:0:0:0", 96, LAST_32_BITS), // IPv4-translated (RFC 2765)
  carrier("::", 96, LAST_32_BITS), // IPv4-compatible (deprecated); :: and ::1 are judged as IPv6 before this
  carrier("2002::", 16, [2, 3, 4, 5]), // 6to4 (RFC 3056)
  carrier("64:ff9b::", 96, LAST_32_BITS), // NAT64 well-known prefix (RFC 6052)
  // Local-use NAT64 (RFC 8215): the operator picks a /48, /56, /64 or /96 prefix inside 64:ff9b:1::/48,
  // and RFC 6052 places the IPv4 address differently for each, skipping bits 64..71 and zeroing the
  // suffix. Every placement the address allows is read. A /48 or /56 layout reads as 0.0.0.0 in the
  // last 32 bits, so only /64 and /96 NAT64 prefixes reach public addresses through the guard.
  carrier("64:ff9b:1::", 48, [6, 7, 9, 10], [8, 11, 12, 13, 14, 15]),
  carrier("64:ff9b:1::", 48, [7, 9, 10, 11], [8, 12, 13, 14, 15]),
  carrier("64:ff9b:1::", 48, [9, 10, 11, 12], [8, 13, 14, 15]),
  carrier("64:ff9b:1::", 48, LAST_32_BITS),
];

/** Every IPv4 address the 16 bytes of an IPv6 address may carry, in dotted-quad form. */
function embeddedIpv4s(bytes: number[]): string[] {
  return CARRIERS.filter(({ network, prefix, zero }) => samePrefix(bytes, network, prefix) && zero.every((offset) => bytes[offset] === 0)).map(({ at }) =>
    at.map((offset) => bytes[offset]).join("."),
  );
}
