import type { FastifyRequest } from "fastify";
import { AppError, type Issue } from "../errors.js";
import { isStorableText } from "../storable.js";
import type { HttpApp } from "./app.js";
import { MAX_ISSUES } from "./validation.js";

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
 * (up to MAX_ISSUES) is an issue with its JSON Pointer in a 400 `validation_failed` (issue 9, F3).
 */
export function refuseUnstorableText(app: HttpApp): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    const own = new Set(request.routeOptions.config.checksOwnText ?? []);
    const issues = [...findUnstorable(request.query, new Set()), ...findUnstorable(request.body, own)].slice(0, MAX_ISSUES);
    if (issues.length > 0) throw new AppError("validation_failed", "request failed validation", { issues });
  });
}

interface Pending {
  value: unknown;
  /** The pointer of the object or array that holds the value; the value's own adds `key`. */
  parent: string;
  key: string | undefined;
}

/**
 * Every string of a parsed body or query that PostgreSQL cannot store, object keys included, in document
 * order. Walked with an explicit stack: the parser bounds the depth, but no walk over a request recurses.
 * Numbers, booleans and null are passed over where they stand, and a pointer is spelled out only for a
 * container or an issue, so that a wide body costs little more than its parse.
 */
function findUnstorable(root: unknown, skip: Set<string>): Issue[] {
  const issues: Issue[] = [];
  const pending: Pending[] = [{ value: root, parent: "", key: undefined }];
  while (pending.length > 0 && issues.length < MAX_ISSUES) {
    const item = pending.pop()!;
    const { value, key } = item;
    let pointer: string | undefined;
    const at = (): string => (pointer ??= key === undefined ? item.parent : `${item.parent}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    if (key !== undefined && !isStorableText(key)) issues.push({ path: at(), message: `its name ${MESSAGE}` });
    if (skip.size > 0 && skip.has(at())) continue;
    if (typeof value === "string") {
      if (!isStorableText(value)) issues.push({ path: at(), message: MESSAGE });
    } else if (Array.isArray(value)) {
      // Members are pushed last first, so that they come off the stack in document order.
      for (let index = value.length - 1; index >= 0; index--) {
        const member: unknown = value[index];
        if (needsVisit(member)) pending.push({ value: member, parent: at(), key: String(index) });
      }
    } else if (isPlainObject(value)) {
      const keys = Object.keys(value);
      for (let index = keys.length - 1; index >= 0; index--) {
        const name = keys[index]!;
        const member = value[name];
        if (needsVisit(member) || !isStorableText(name)) pending.push({ value: member, parent: at(), key: name });
      }
    }
  }
  return issues;
}

const needsVisit = (value: unknown): boolean => typeof value === "string" || (typeof value === "object" && value !== null);
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Buffer.isBuffer(value);
