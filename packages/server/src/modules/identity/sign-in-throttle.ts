import { isIP } from "node:net";
import type { RateLimitConfig } from "../../config.js";
import { ipv6Bytes } from "../../platform/net/ipv6.js";
import { rateLimited, type RateLimiter } from "../../platform/rate-limit.js";

/**
 * Sign-in throttling that slows password guessing without letting anyone lock an owner out
 * (docs/configuration.md, SVC_RATE_LIMIT_AUTH_ACCOUNT). Failed sign-ins are counted per account, and per
 * account and client network together. Once an account has taken its allowance of failures in a window, a network
 * that has already failed on it is refused until the window ends, whatever password it sends (a 429 must
 * not tell a guesser whether the guess was right). A network that has not failed still gets its try, so
 * the owner signing in from elsewhere is never refused, and guessers get one try per network each window.
 *
 * Every attempt counts as a failure before the password is checked and is taken back when the password was
 * right, so parallel guesses cannot all pass the check before the first failure is recorded.
 */
export function createSignInThrottle(limiter: RateLimiter, limits: RateLimitConfig) {
  return {
    /** Counts an attempt at `email` (normalized) from `client`, or refuses it; call the result when the password was right. */
    async attempt(email: string, client: string): Promise<() => Promise<void>> {
      const fromClient = `login-failures-from:${clientNetwork(client)}:${email}`;
      const onAccount = `login-failures:${email}`;
      const clientFailures = await limiter.add(fromClient, limits.windowSeconds);
      const accountFailures = await limiter.add(onAccount, limits.windowSeconds);
      // Both counts include this attempt: the client failed before, and the account's allowance is spent.
      if (clientFailures.count > 1 && accountFailures.count > limits.authPerAccountPerWindow) {
        // Refused until either window ends: then this network has no failure or the account its allowance back.
        throw rateLimited(Math.min(clientFailures.retryAfterSeconds, accountFailures.retryAfterSeconds));
      }
      return async () => {
        await limiter.takeBack(fromClient);
        await limiter.takeBack(onAccount);
      };
    },
  };
}

/**
 * What one client is in sign-in throttling: an IPv4 address (also when Node reports it IPv4-mapped), or
 * the /64 of an IPv6 address, the block one subscriber usually holds whole.
 */
export function clientNetwork(address: string): string {
  if (isIP(address) !== 6) return address;
  const bytes = ipv6Bytes(address)!;
  const mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return bytes.slice(12).join(".");
  const groups = [0, 2, 4, 6].map((at) => ((bytes[at]! << 8) | bytes[at + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}
