import { lookup } from "node:dns/promises";
import { assertOutboundAllowed, isInternalAddress, OutboundRefusedError, urlHost, type OutboundPolicy } from "../../platform/net/outbound.js";

/**
 * Why svc will not deliver to `url`, or null when it will (docs/webhooks.md, "Where svc delivers"):
 * https to any address the SSRF guard allows; plain http only to private or loopback addresses, and only
 * while the operator allows the private network (SVC_ALLOW_PRIVATE_NETWORK), which is meant for development
 * (a receiver on one's own machine). Checked when an endpoint is saved and again before every attempt.
 */
export async function destinationProblem(url: string, policy: OutboundPolicy): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  if (parsed.username || parsed.password) return "must not carry a user name or password";
  if (parsed.protocol === "https:") {
    try {
      await assertOutboundAllowed(parsed, policy);
      return null;
    } catch (err) {
      // A name that does not resolve now may resolve later: each attempt checks again.
      if (err instanceof OutboundRefusedError) return err.transient ? null : err.message;
      throw err;
    }
  }
  if (parsed.protocol !== "http:") return "must be an https URL";
  if (!policy.allowPrivateNetwork) return "must be an https URL (plain http is allowed only to private addresses with SVC_ALLOW_PRIVATE_NETWORK=true)";
  const addresses = await lookup(urlHost(parsed), { all: true }).catch(() => []);
  if (addresses.length === 0 || addresses.some((a) => !isInternalAddress(a.address))) {
    return "must be an https URL (plain http is allowed only to private or loopback addresses)";
  }
  return null;
}
