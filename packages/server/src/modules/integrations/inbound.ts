import { AppError } from "../../platform/errors.js";
import { parseJsonWithin } from "../../platform/http/json-depth.js";
import type { IntegrationRow } from "./store.js";

/**
 * What provider callbacks share, whatever the kind: the signed body's size cap and parsing, and the
 * seam through which a click on a component svc posted (a profile menu, a question's or an approval's
 * buttons) reaches whoever posted it. The launch core and the interactions runtime register
 * their handlers here; a kind only parses its provider's callback into a ComponentClick.
 */

/** A click on a message component, as a kind parsed it from its provider's signed callback. */
export interface ComponentClick {
  integration: IntegrationRow;
  /** The component's custom id, exactly as svc set it when posting. */
  customId: string;
  /** The options a select menu's user chose; empty for a button. */
  values: string[];
  /** The provider's id of the person who clicked. */
  userId: string;
  /** The provider tenant the person clicked in (Discord's guild id): with userId, the clicker's `integration` actor. */
  tenantId: string;
  /** Where the clicked message is (a channel or thread id). */
  channelId: string;
  messageId: string;
}

/** How a handler answered a click: the text that replaces the clicked message's, or a private reply to the clicker. */
export type ComponentAnswer = { kind: "update"; content: string } | { kind: "reply"; content: string };

/** Answers the click when its custom id is one the handler issued; undefined when it is not. */
export type ComponentHandler = (click: ComponentClick) => Promise<ComponentAnswer | undefined>;

/** The handlers a kind asks, in order; the first that knows the custom id answers. */
export interface ComponentHandlers {
  handle(click: ComponentClick): Promise<ComponentAnswer | undefined>;
}

export function componentHandlers(handlers: readonly ComponentHandler[]): ComponentHandlers {
  return {
    async handle(click) {
      for (const handler of handlers) {
        const answer = await handler(click);
        if (answer !== undefined) return answer;
      }
      return undefined;
    },
  };
}

/** Signed callbacks are small; a bigger body is refused before it is read whole. */
export const MAX_CALLBACK_BYTES = 1024 * 1024;

/** The signed body as JSON, parsed only after its signature verified. */
export function parseSignedJson(raw: Buffer): Record<string, unknown> {
  try {
    const parsed = parseJsonWithin(raw.toString("utf8"));
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Reported below: a signed body that is not a JSON object is the provider's mistake, not svc's.
  }
  throw new AppError("invalid_request", "the callback body is not a JSON object");
}
