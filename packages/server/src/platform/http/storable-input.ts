import type { FastifyRequest } from "fastify";
import { AppError, type Issue } from "../errors.js";
import { isStorableText } from "../storable.js";
import type { HttpApp } from "./app.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Body members (JSON Pointers) whose text the route checks itself, with a line and column: the
     * general check below leaves them to it.
     */
    checksOwnText?: string[];
  }
}

const MESSAGE = "must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate";

/**
 * PostgreSQL cannot store U+0000 or an unpaired surrogate, so no request may carry one: every string of
 * a JSON body and of the query, object keys included, is checked before validation, and each one found
 * is an issue with its JSON Pointer in a 400 `validation_failed` (issue 9, F3).
 */
export function refuseUnstorableText(app: HttpApp): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    const own = new Set(request.routeOptions.config.checksOwnText ?? []);
    const issues = [...findUnstorable(request.query, "", new Set()), ...findUnstorable(request.body, "", own)];
    if (issues.length > 0) throw new AppError("validation_failed", "request failed validation", { issues });
  });
}

function findUnstorable(value: unknown, pointer: string, skip: Set<string>, issues: Issue[] = []): Issue[] {
  if (skip.has(pointer)) return issues;
  if (typeof value === "string") {
    if (!isStorableText(value)) issues.push({ path: pointer, message: MESSAGE });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => findUnstorable(item, `${pointer}/${index}`, skip, issues));
  } else if (value !== null && typeof value === "object" && !Buffer.isBuffer(value)) {
    for (const [key, item] of Object.entries(value)) {
      const at = `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if (!isStorableText(key)) issues.push({ path: at, message: `its name ${MESSAGE}` });
      findUnstorable(item, at, skip, issues);
    }
  }
  return issues;
}
