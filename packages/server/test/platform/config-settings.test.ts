import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KNOWN_SETTINGS, loadConfig, unknownSettings } from "../../src/config.js";

/* A misspelt setting is named at start (docs/configuration.md), which holds only while the list is complete. */

/** Read by svcd and by the svc command (packages/cli), not by the server. */
const DAEMON_SETTINGS = ["SVC_DAEMON_TOKEN", "SVC_HOME", "SVC_CONFIG_DIR", "SVC_ORG", "SVC_PROJECT", "SVC_TOKEN", "SVC_URL"];

/** The `SVC_*` names loadConfig reads from `env`, whatever branch reads them. */
function namesRead(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const watched = new Proxy(env, {
    get(target, name) {
      if (typeof name === "string" && name.startsWith("SVC_")) read.add(name);
      return target[name as string];
    },
  });
  loadConfig(watched);
  return read;
}

describe("the settings svc knows", () => {
  it("are exactly the ones loadConfig reads, with svcd's, and each is documented", () => {
    const s3 = { SVC_BLOB_STORE: "s3", SVC_S3_BUCKET: "bucket", SVC_S3_ACCESS_KEY_ID: "id", SVC_S3_SECRET_ACCESS_KEY: "key" };
    const read = new Set([...namesRead({}), ...namesRead(s3)]);
    expect([...read].sort()).toEqual(KNOWN_SETTINGS.filter((name) => !DAEMON_SETTINGS.includes(name)));
    const documented = readFileSync(new URL("../../../../docs/configuration.md", import.meta.url), "utf8");
    expect(KNOWN_SETTINGS.filter((name) => !DAEMON_SETTINGS.includes(name) && !documented.includes(`\`${name}\``))).toEqual([]);
  });

  it("name each unknown SVC_ variable, with the setting it most likely meant", () => {
    expect(unknownSettings({ SVC_DATADIR: "/data", SVC_LOG_LEVL: "debug", SVC_FROBNICATE: "1", SVC_HOMES: "1", SVC_PORT: "1", PATH: "/bin", SVC_DATA_DIR: "/data" })).toEqual([
      "unknown setting SVC_DATADIR; did you mean SVC_DATA_DIR?",
      "unknown setting SVC_FROBNICATE; see docs/configuration.md for the settings svc reads",
      "unknown setting SVC_HOMES; did you mean SVC_HOME?",
      "unknown setting SVC_LOG_LEVL; did you mean SVC_LOG_LEVEL?",
      "unknown setting SVC_PORT; did you mean PORT?",
    ]);
    expect(unknownSettings({ SVC_DAEMON_TOKEN: "svcd's own", SVC_SIGNUP: "open" })).toEqual([]);
  });
});
