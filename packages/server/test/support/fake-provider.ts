import { afterAll, beforeAll, beforeEach } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";

/**
 * A fake model provider for the whole file, like `useTestServer`: started before its tests, closed after
 * them, and (unless `reset` is false) forgetting its script and requests before each test. The returned
 * object reads through to the running provider, so it can be declared at the top of a file.
 */
export function useFakeProvider(options: { reset?: boolean } = {}): FakeProvider {
  let current: FakeProvider | undefined;
  beforeAll(async () => {
    current = await startFakeProvider();
  });
  afterAll(() => current?.close());
  if (options.reset ?? true) beforeEach(() => current?.reset());
  return new Proxy({} as FakeProvider, {
    get(_target, property) {
      if (!current) throw new Error("the fake provider starts in beforeAll; use it inside hooks and tests");
      const value = Reflect.get(current, property, current) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
}
