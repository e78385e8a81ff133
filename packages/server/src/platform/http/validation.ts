import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";
import type { Issue } from "../errors.js";

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

// Bodies are validated exactly as sent: a string where a number belongs is an error, never coerced.
const bodyAjv = makeAjv(false);
// Query strings and path parameters arrive as text and are coerced to the schema's types.
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === "body" ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * A 400 names at most this many issues: the first ones are enough to fix a request, and a body with a
 * hundred thousand unknown members must not be answered with a hundred thousand lines.
 */
export const MAX_ISSUES = 50;

/** Turns ajv errors into the spec's issues: a JSON Pointer to the offending value and a message. */
export function toIssues(errors: readonly ErrorObject[]): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const err of errors) {
    if (issues.length === MAX_ISSUES) break;
    // anyOf/oneOf failures repeat the branch errors; those say more than the summary line.
    if (err.keyword === "anyOf" || err.keyword === "oneOf" || err.keyword === "if") continue;
    const issue = describe(err);
    const key = `${issue.path}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues.length > 0 ? issues : [{ path: "", message: "request body is invalid" }];
}

function describe(err: ErrorObject): Issue {
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case "additionalProperties":
      return { path: child(err.instancePath, String(params["additionalProperty"])), message: "unknown field" };
    case "required":
      return { path: child(err.instancePath, String(params["missingProperty"])), message: "is required" };
    case "enum":
      return { path: err.instancePath, message: `must be one of: ${(params["allowedValues"] as unknown[]).join(", ")}` };
    case "const":
      return { path: err.instancePath, message: `must be ${JSON.stringify(params["allowedValue"])}` };
    default:
      return { path: err.instancePath, message: err.message ?? "is invalid" };
  }
}

function child(pointer: string, key: string): string {
  return `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

/** A readable one-line summary of a query-string or header validation failure. */
export function describeParameterErrors(part: string, errors: readonly ErrorObject[]): string {
  const issue = toIssues(errors)[0]!;
  const name = issue.path.replace(/^\//, "");
  const label = part === "querystring" ? "query parameter" : part === "headers" ? "header" : part;
  return name ? `${label} ${name}: ${issue.message}` : `${label}: ${issue.message}`;
}
