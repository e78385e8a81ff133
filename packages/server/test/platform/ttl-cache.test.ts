import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { TtlCache } from "../../src/platform/ttl-cache.js";

describe("TtlCache", () => {
  it("forgets entries after their time to live", async () => {
    const cache = new TtlCache<string, number>(20, 10);
    cache.set("a", 1, cache.version());
    expect(cache.get("a")).toBe(1);
    await sleep(30);
    expect(cache.get("a")).toBeUndefined();
  });

  it("drops the least recently used entry beyond its cap", () => {
    const cache = new TtlCache<string, number>(10_000, 2);
    cache.set("a", 1, cache.version());
    cache.set("b", 2, cache.version());
    cache.get("a");
    cache.set("c", 3, cache.version());
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([1, undefined, 3]);
  });

  it("refuses a value read before a later invalidation", () => {
    const cache = new TtlCache<string, number>(10_000, 10);
    const before = cache.version();
    cache.forget(() => true);
    cache.set("a", 1, before);
    expect(cache.get("a")).toBeUndefined();
  });

  it("caches nothing with a time to live of 0", () => {
    const cache = new TtlCache<string, number>(0, 10);
    cache.set("a", 1, cache.version());
    expect(cache.get("a")).toBeUndefined();
  });
});
