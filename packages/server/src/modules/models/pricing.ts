import { Type, type Static } from "typebox";
import { component } from "../../platform/http/components.js";

/** A price: non-negative, up to 12 digits before the point and 6 after (the column is numeric(18, 6)). */
const Price = (description: string) => Type.String({ pattern: "^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,6})?$", maxLength: 19, description });
export const ModelPricing = component("ModelPricing", Type.Object(
  {
    input_per_mtok: Price("US dollars per million input tokens that were neither read from nor written to the prompt cache."),
    output_per_mtok: Price("US dollars per million output tokens (reasoning tokens included)."),
    cache_read_per_mtok: Type.Optional(Price("US dollars per million input tokens read from the prompt cache; input_per_mtok when absent.")),
    cache_write_per_mtok: Type.Optional(Price("US dollars per million input tokens written to the prompt cache; input_per_mtok when absent.")),
  },
  {
    additionalProperties: false,
    description:
      "What the model costs, as decimal strings of US dollars per million tokens (up to 6 decimals). Each model call's " +
      "cost_micro_usd is computed from the pricing of the revision it used (docs/usage-and-budgets.md).",
  },
));


/** A revision's prices as stored: decimal strings of US dollars per million tokens; input and output both null without pricing. */
export interface PricingValues {
  inputPerMtok: string | null;
  outputPerMtok: string | null;
  cacheReadPerMtok: string | null;
  cacheWritePerMtok: string | null;
}

export type PricingBody = Static<typeof ModelPricing>;

export const NO_PRICING: PricingValues = { inputPerMtok: null, outputPerMtok: null, cacheReadPerMtok: null, cacheWritePerMtok: null };

/**
 * One spelling per amount, so "3", "3.0" and the column's "3.000000" compare equal (an update that restates
 * a price adds no revision) and read back as written: no trailing zeros after the point, no bare point.
 */
export function canonicalDecimal(value: string): string {
  return value.includes(".") ? value.replace(/0+$/, "").replace(/\.$/, "") : value;
}

const canonical = (value: string | null | undefined): string | null => (value == null ? null : canonicalDecimal(value));

export function pricingValues(body: PricingBody | null | undefined): PricingValues {
  if (!body) return NO_PRICING;
  return {
    inputPerMtok: canonicalDecimal(body.input_per_mtok),
    outputPerMtok: canonicalDecimal(body.output_per_mtok),
    cacheReadPerMtok: canonical(body.cache_read_per_mtok),
    cacheWritePerMtok: canonical(body.cache_write_per_mtok),
  };
}

/** The stored columns in canonical spelling. */
export function storedPricing(row: PricingValues): PricingValues {
  return {
    inputPerMtok: canonical(row.inputPerMtok),
    outputPerMtok: canonical(row.outputPerMtok),
    cacheReadPerMtok: canonical(row.cacheReadPerMtok),
    cacheWritePerMtok: canonical(row.cacheWritePerMtok),
  };
}

export function pricingView(values: PricingValues): PricingBody | null {
  if (values.inputPerMtok === null || values.outputPerMtok === null) return null;
  const view: PricingBody = { input_per_mtok: values.inputPerMtok, output_per_mtok: values.outputPerMtok };
  if (values.cacheReadPerMtok !== null) view.cache_read_per_mtok = values.cacheReadPerMtok;
  if (values.cacheWritePerMtok !== null) view.cache_write_per_mtok = values.cacheWritePerMtok;
  return view;
}
