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

describe("TtlCache.readThrough", () => {
  it("shares one read among callers that ask while it runs, and caches its value", async () => {
    const cache = new TtlCache<string, number>(10_000, 10);
    let reads = 0;
    const read = async () => {
      reads++;
      await sleep(20);
      return 7;
    };
    expect(await Promise.all([cache.readThrough("a", read), cache.readThrough("a", read), cache.readThrough("a", read)])).toEqual([7, 7, 7]);
    expect(await cache.readThrough("a", read)).toBe(7);
    expect(reads).toBe(1);
  });

  it("does not let a caller join a read that began before a forget, and caches neither", async () => {
    const cache = new TtlCache<string, number>(10_000, 10);
    const values = [1, 2];
    const read = async () => {
      const value = values.shift();
      await sleep(20);
      return value;
    };
    const before = cache.readThrough("a", read);
    cache.forget(() => true);
    const after = cache.readThrough("a", read);
    expect(await Promise.all([before, after])).toEqual([1, 2]);
    // The read that began before the forget is not cached; the one after it is.
    expect(cache.get("a")).toBe(2);
  });

  it("caches nothing a read answers undefined for, and reads again next time", async () => {
    const cache = new TtlCache<string, number>(10_000, 10);
    let reads = 0;
    const read = async () => (reads++, undefined);
    expect([await cache.readThrough("a", read), await cache.readThrough("a", read)]).toEqual([undefined, undefined]);
    expect(reads).toBe(2);
  });
});
