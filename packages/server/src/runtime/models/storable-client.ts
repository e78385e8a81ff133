import { storable, storableText } from "../../platform/storable.js";
import type { ModelClient } from "./types.js";

/**
 * The one place a provider's text enters svc (issue 9, F2): answers and error messages come out with
 * U+FFFD where the database could not store what was sent (U+0000, unpaired surrogates), so no record
 * of a model call ever fails on them. Live previews pass as they came; they are never stored.
 */
export function storableModelClient(client: ModelClient): ModelClient {
  return {
    async stream(request, onDelta) {
      try {
        return storable(await client.stream(request, onDelta));
      } catch (err) {
        if (err instanceof Error) err.message = storableText(err.message);
        throw err;
      }
    },
  };
}
