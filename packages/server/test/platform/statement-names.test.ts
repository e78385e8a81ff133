import { describe, expect, it } from "vitest";
import { StatementNames } from "../../src/platform/db/statement-names.js";

/** Sees `text` until it is named (the third sighting), or answers undefined if it never is. */
function sightUntilNamed(names: StatementNames, text: string): string | undefined {
  return names.nameOf(text) ?? names.nameOf(text) ?? names.nameOf(text);
}

describe("StatementNames", () => {
  it("names a statement at its third sighting", () => {
    const names = new StatementNames();
    expect([names.nameOf("select 1"), names.nameOf("select 1"), names.nameOf("select 1")]).toEqual([undefined, undefined, "svc_1"]);
    expect(names.nameOf("select 1")).toBe("svc_1");
  });

  // A session keeps every statement it prepared: a flood of distinct texts must not grow it (docs/performance.md, "Bounded caches").
  it("never names more than 1,000 statements, and still answers the names it gave", () => {
    const names = new StatementNames();
    const given = Array.from({ length: 1000 }, (_, i) => sightUntilNamed(names, `select ${i}`));
    expect(new Set(given).size).toBe(1000);
    expect(given.every((name) => name !== undefined)).toBe(true);
    expect(sightUntilNamed(names, "select 1000")).toBeUndefined();
    expect(names.nameOf("select 0")).toBe(given[0]);
  });

  it("starts counting over when 10,000 texts wait for a name, which only delays naming", () => {
    const names = new StatementNames();
    names.nameOf("select 'first'");
    names.nameOf("select 'first'");
    for (let i = 0; i < 10_000; i++) names.nameOf(`select ${i}`);
    // Its two sightings were forgotten with the rest: it needs three more.
    expect([names.nameOf("select 'first'"), names.nameOf("select 'first'"), names.nameOf("select 'first'")]).toEqual([undefined, undefined, "svc_1"]);
  });
});
