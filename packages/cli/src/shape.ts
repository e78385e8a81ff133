/** A node of the contract's JSON Schema, read only for the keywords that give a value its shape. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

/**
 * What keeps `value` from having the schema's shape (`/orgs must be array`), or undefined when it has it.
 * This is a tolerant reader's check: types, required fields, items and the forms of a union are checked,
 * while what a newer server may add passes (unknown fields, enum members, longer strings, a `oneOf` that
 * now matches two forms), since the spec lets the API grow in those ways. Answers are small and checked
 * once, so walking the schema costs less than compiling it would.
 */
export function shapeProblem(value: unknown, schema: Schema, resolve: (ref: string) => Schema, path = ""): string | undefined {
  if (schema.$ref) return shapeProblem(value, resolve(schema.$ref), resolve, path);
  for (const part of schema.allOf ?? []) {
    const problem = shapeProblem(value, part, resolve, path);
    if (problem) return problem;
  }
  const forms = schema.anyOf ?? schema.oneOf;
  if (forms && !forms.some((form) => shapeProblem(value, form, resolve, path) === undefined)) return `${path || "/"} matches none of its forms`;
  const types = schema.type === undefined ? undefined : [schema.type].flat();
  if (types && !types.some((type) => hasType(value, type))) return `${path || "/"} must be ${types.join(" or ")}`;
  if (Array.isArray(value) && schema.items) return firstProblem(value.map((item, i) => [item, schema.items!, `${path}/${i}`]), resolve);
  if (!isRecord(value)) return undefined;
  const missing = (schema.required ?? []).find((key) => value[key] === undefined);
  if (missing !== undefined) return `${path || "/"} must have required property '${missing}'`;
  const extra = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  const checks = Object.entries(value).flatMap(([key, field]): Array<[unknown, Schema, string]> => {
    const fieldSchema = schema.properties?.[key] ?? extra;
    return fieldSchema ? [[field, fieldSchema, `${path}/${key}`]] : [];
  });
  return firstProblem(checks, resolve);
}

function firstProblem(checks: Array<[unknown, Schema, string]>, resolve: (ref: string) => Schema): string | undefined {
  for (const [value, schema, path] of checks) {
    const problem = shapeProblem(value, schema, resolve, path);
    if (problem) return problem;
  }
  return undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
