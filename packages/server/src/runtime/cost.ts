import type { ModelPricing } from "./definition.js";
import type { ModelUsage } from "./models/types.js";

const MICRO = 1_000_000n;

/**
 * What one model call cost, in integer millionths of a US dollar (docs/usage-and-budgets.md, "Prices").
 * A price in dollars per million tokens is also micro-dollars per token, so the cost is exact in
 * integers: each kind of token times its price in millionths, summed, then rounded once, half up, to
 * a whole micro-dollar. Uncached input is the input minus cache reads and writes; reasoning tokens are
 * output tokens already. Without pricing a call costs 0.
 */
export function costMicroUsd(usage: ModelUsage, pricing: ModelPricing | undefined): number {
  if (!pricing) return 0;
  const input = micros(pricing.inputPerMtok);
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const scaled =
    BigInt(uncached) * input +
    BigInt(usage.cacheReadTokens) * (pricing.cacheReadPerMtok === undefined ? input : micros(pricing.cacheReadPerMtok)) +
    BigInt(usage.cacheWriteTokens) * (pricing.cacheWritePerMtok === undefined ? input : micros(pricing.cacheWritePerMtok)) +
    BigInt(usage.outputTokens) * micros(pricing.outputPerMtok);
  return Number((scaled + MICRO / 2n) / MICRO);
}

/** A decimal string with at most 6 decimals (the API's pattern) as an integer count of its millionths. */
function micros(price: string): bigint {
  const [whole, fraction = ""] = price.split(".");
  return BigInt(whole!) * MICRO + BigInt(fraction.padEnd(6, "0"));
}
