import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

/* The safe defaults (docs/configuration.md): what svc does when nobody set anything, and what it refuses. */

const base = { SVC_DATA_DIR: "/tmp/svc-config-test" };

describe("defaults", () => {
  it("listen on loopback, keep sign-up open as the reference, enable no machine provider and sandbox local machines", () => {
    const config = loadConfig(base);
    expect(config.host).toBe("127.0.0.1");
    expect(config.signup).toBe("open");
    expect(config.machines.providers).toEqual([]);
    expect(config.machines.localIsolation).toBe("bubblewrap");
  });

  it("let an embedded svc on loopback call private networks, and nothing else", () => {
    expect(loadConfig(base).allowPrivateNetwork).toBe(true);
    expect(loadConfig({ ...base, HOST: "localhost" }).allowPrivateNetwork).toBe(true);
    expect(loadConfig({ ...base, HOST: "0.0.0.0" }).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ ...base, HOST: "10.1.2.3" }).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ ...base, DATABASE_URL: "postgres://db/svc", SVC_SECRET_KEY: "0".repeat(64) }).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ ...base, HOST: "0.0.0.0", SVC_ALLOW_PRIVATE_NETWORK: "true" }).allowPrivateNetwork).toBe(true);
  });
});

describe("settings", () => {
  it("take a list of machine providers, each once, in any case", () => {
    expect(loadConfig({ ...base, SVC_MACHINE_PROVIDERS: " Local, local " }).machines.providers).toEqual(["local"]);
    expect(loadConfig({ ...base, SVC_MACHINE_PROVIDERS: "" }).machines.providers).toEqual([]);
  });

  it.each([
    ["SVC_MACHINE_PROVIDERS", "local,docker", /SVC_MACHINE_PROVIDERS lists "docker"; known: local/],
    ["SVC_LOCAL_MACHINE_ISOLATION", "auto", /SVC_LOCAL_MACHINE_ISOLATION must be one of bubblewrap, none/],
    ["SVC_SIGNUP", "sometimes", /SVC_SIGNUP must be one of open, invite, closed/],
  ])("refuse %s=%s naming what they take", (name, value, message) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(message);
  });
});
