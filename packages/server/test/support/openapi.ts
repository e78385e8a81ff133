import { readFileSync } from "node:fs";

/** The committed api/openapi.json as parsed JSON. */
export function committedDocument(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL("../../../../api/openapi.json", import.meta.url), "utf8")) as Record<string, unknown>;
}

/**
 * The committed document with every local `$ref` (`#/components/...`) replaced by what it names, for the
 * tests that walk request and response schemas. A description beside a `$ref` is kept.
 */
export function dereferencedDocument<T>(): T {
  const document = committedDocument();
  const resolve = (pointer: string): unknown => {
    const parts = pointer.replace(/^#\//, "").split("/");
    return parts.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], document);
  };
  const inline = (node: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((item) => inline(item, seen));
    if (node === null || typeof node !== "object") return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    if (typeof $ref === "string") {
      if (seen.has($ref)) throw new Error(`${$ref} refers to itself`);
      const target = inline(resolve($ref), new Set([...seen, $ref])) as Record<string, unknown>;
      return { ...target, ...(inline(rest, seen) as Record<string, unknown>) };
    }
    return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value, seen)]));
  };
  return { ...document, paths: inline(document["paths"], new Set()) } as T;
}
