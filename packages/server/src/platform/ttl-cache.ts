import { performance } from "node:perf_hooks";

/**
 * A small in-process cache with a time to live (`Infinity` for entries that never go stale) and a size
 * cap (least recently used entries go first).
 * It only ever saves work: every entry can be recomputed from the database, and nothing is written from it.
 *
 * Invalidation races are closed by a version: a reader notes `version()` before it queries the database,
 * and `set` drops its value if anything was forgotten since, so a read that began before a revocation
 * committed cannot put the revoked fact back.
 *
 * Expiry uses the monotonic clock: these deadlines are process-local and never stored or compared with
 * database times, and a monotonic clock does not jump when the wall clock is set.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private readonly reading = new Map<K, { generation: number; value: Promise<V | undefined> }>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0 && this.maxEntries > 0;
  }

  version(): number {
    return this.generation;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= performance.now()) return undefined;
    // Re-inserting moves the key to the end of the Map's order, which is what makes the cap LRU.
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * The cached value, or the one `read` shared by every caller that asks for `key` while it runs: a burst
   * of requests with one token makes one lookup, not one each. A caller never joins a read that began
   * before a `forget`, so a revocation holds for it as if it had read alone. `read` answers undefined for
   * what must not be cached (an unknown token).
   */
  async readThrough(key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const running = this.reading.get(key);
    if (running && running.generation === this.generation) return running.value;
    const since = this.generation;
    const value = read().then((loaded) => {
      if (loaded !== undefined) this.set(key, loaded, since);
      return loaded;
    });
    const entry = { generation: since, value };
    this.reading.set(key, entry);
    try {
      return await value;
    } finally {
      if (this.reading.get(key) === entry) this.reading.delete(key);
    }
  }

  /** Stores `value` unless something was forgotten after `sinceVersion` (see the class comment). */
  set(key: K, value: V, sinceVersion: number): void {
    if (!this.enabled || sinceVersion !== this.generation) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: performance.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as K;
      this.entries.delete(oldest);
    }
  }

  /** Forgets every entry `matches` accepts. Linear, which suits revocations: they are rare and the map is capped. */
  forget(matches: (value: V, key: K) => boolean): void {
    this.generation += 1;
    for (const [key, entry] of this.entries) {
      if (matches(entry.value, key)) this.entries.delete(key);
    }
  }

  /** Drops one entry that is no longer wanted (not a revocation: reads in flight may still store theirs). */
  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
