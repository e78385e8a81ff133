import { request } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import {
  assertOutboundAllowed,
  guardedLookup,
  internalAddressReason,
  OutboundRefusedError,
  type Resolver,
} from "../../src/platform/net/outbound.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { createSecret } from "../api/models-fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

const deny = { allowPrivateNetwork: false };
const allow = { allowPrivateNetwork: true };

describe("the address table", () => {
  const internal: Array<[string, string]> = [
    ["0.0.0.0", "this network"],
    ["0.1.2.3", "this network"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.10", "private"],
    ["198.18.0.1", "benchmarking"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["FE80::abcd:1", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local (cloud metadata)"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"],
    ["not-an-ip", "not an IP address"],
  ];
  it.each(internal)("refuses %s (%s)", (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
  });

  const external = [
    "8.8.8.8",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "169.253.0.1",
    "192.169.0.1",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ];
  it.each(external)("allows %s", (address) => {
    expect(internalAddressReason(address)).toBeNull();
  });
});

describe("assertOutboundAllowed", () => {
  const names: Record<string, string[]> = {
    "metadata.example": ["169.254.169.254"],
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "mixed.example": ["93.184.215.14", "10.0.0.7"],
    "empty.example": [],
  };
  const resolver: Resolver = async (host) => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

  it("refuses internal destinations, by literal or by name", async () => {
    for (const url of [
      "http://127.0.0.1:8080/v1",
      "http://[::1]/v1",
      "http://[::ffff:127.0.0.1]/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://169.254.169.254/latest/meta-data",
      "https://10.0.0.1/",
      "http://localhost:1234/v1",
    ]) {
      await expect(assertOutboundAllowed(url, deny), url).rejects.toBeInstanceOf(OutboundRefusedError);
    }
    await expect(assertOutboundAllowed("https://metadata.example/", deny, resolver)).rejects.toThrow(
      "destination not allowed: metadata.example resolves to 169.254.169.254, a link-local (cloud metadata) address",
    );
    await expect(assertOutboundAllowed("https://mixed.example/", deny, resolver)).rejects.toThrow("resolves to 10.0.0.7, a private address");
    await expect(assertOutboundAllowed("https://nowhere.example/", deny, resolver)).rejects.toThrow("nowhere.example does not resolve (ENOTFOUND)");
    await expect(assertOutboundAllowed("https://empty.example/", deny, resolver)).rejects.toThrow("empty.example does not resolve");
  });

  it("allows public destinations, and everything http(s) when the private network is allowed", async () => {
    await expect(assertOutboundAllowed("https://public.example/v1", deny, resolver)).resolves.toBeUndefined();
    await expect(assertOutboundAllowed("https://93.184.215.14/", deny)).resolves.toBeUndefined();
    for (const url of ["http://127.0.0.1/", "http://169.254.169.254/", "http://[fd00::1]/", "http://unresolvable.invalid/"]) {
      await expect(assertOutboundAllowed(url, allow, resolver)).resolves.toBeUndefined();
    }
  });

  it("refuses anything but http and https whatever the policy", async () => {
    for (const url of ["ftp://93.184.215.14/", "file:///etc/passwd", "gopher://public.example/", "not a url"]) {
      await expect(assertOutboundAllowed(url, allow, resolver), url).rejects.toBeInstanceOf(OutboundRefusedError);
    }
  });
});

describe("guardedLookup", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  /** A GET through node:http with the guard as its resolver; the status, or the error it failed with. */
  function get(url: string, policy: { allowPrivateNetwork: boolean }): Promise<number | Error> {
    return new Promise((resolve) => {
      const req = request(url, { lookup: guardedLookup(policy) }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", resolve);
      req.end();
    });
  }

  it("refuses a name that resolves to an internal address at connection time", async () => {
    const port = new URL(fake.url).port;
    const refused = await get(`http://localhost:${port}/v1/models`, deny);
    expect(refused).toBeInstanceOf(OutboundRefusedError);
    expect(String(refused)).toContain("localhost resolves to 127.0.0.1, a loopback address");
    expect(fake.requests).toHaveLength(0);

    expect(await get(`http://localhost:${port}/v1/models`, allow)).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("IPv6 forms that carry an internal IPv4 address", () => {
  // Each spelling is refused as a URL literal, as a name's DNS answer before the call, and as the
  // answer the connection itself resolves.
  const carried: Array<[string, string]> = [
    // IPv4-mapped ::ffff:0:0/96
    ["::ffff:127.0.0.1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback"],
    ["0000:0000:0000:0000:0000:FFFF:7F00:0001", "loopback"],
    // IPv4-translated ::ffff:0:0:0/96
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:7f00:1", "loopback"],
    ["::FFFF:0:7F00:1", "loopback"],
    ["0:0:0:0:ffff:0:7f00:1", "loopback"],
    ["0000:0000:0000:0000:ffff:0000:7f00:0001", "loopback"],
    ["::ffff:0:10.1.2.3", "private"],
    ["::ffff:0:a9fe:a9fe", "link-local (cloud metadata)"],
    // IPv4-compatible ::/96
    ["::127.0.0.1", "loopback"],
    ["::7f00:1", "loopback"],
    ["0:0:0:0:0:0:7F00:0001", "loopback"],
    ["::192.168.0.1", "private"],
    ["::0.0.0.5", "this network"],
    // 6to4 2002::/16, the IPv4 address in bits 16..47
    ["2002:7f00:1::", "loopback"],
    ["2002:7F00:0001:0000:0000:0000:0000:0000", "loopback"],
    ["2002:7f00:1:2:3:4:5:6", "loopback"],
    ["2002:7f00:1::8.8.8.8", "loopback"],
    ["2002:a00:1::", "private"],
    ["2002:c0a8:101::1", "private"],
    ["2002:a9fe:a9fe::", "link-local (cloud metadata)"],
    // NAT64 well-known prefix 64:ff9b::/96
    ["64:ff9b::127.0.0.1", "loopback"],
    ["64:FF9B::7F00:1", "loopback"],
    ["0064:ff9b:0000:0000:0000:0000:7f00:0001", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"],
    // Local-use NAT64 64:ff9b:1::/48, with a /96 prefix (last 32 bits) ...
    ["64:ff9b:1::7f00:1", "loopback"],
    ["64:ff9b:1::127.0.0.1", "loopback"],
    ["64:FF9B:1::7F00:1", "loopback"],
    ["0064:ff9b:0001:0000:0000:0000:7f00:0001", "loopback"],
    ["64:ff9b:1:abcd:0:1:a00:1", "private"],
    // ... and the /64, /56 and /48 layouts of RFC 6052
    ["64:ff9b:1:0:7f:0:100:0", "loopback"],
    ["64:ff9b:1:7f:0:1::", "loopback"],
    ["64:ff9b:1:7f00:0:100::", "loopback"],
    ["64:ff9b:1:a9fe:a9:fe00::", "link-local (cloud metadata)"],
  ];
  const carriedPublic = ["::ffff:0:8.8.8.8", "::8.8.8.8", "2002:808:808::1", "64:ff9b::8.8.8.8", "64:ff9b:1::808:808", "64:ff9b:1::8.8.8.8", "64:ff9b:1:0:8:808:800:0"];

  const resolvesTo =
    (address: string): Resolver =>
    async () => [{ address, family: 6 }];

  /** What the guard's connection-time lookup answers for a name that resolves to `address`. */
  function connectLookup(address: string, options: { all?: boolean }): Promise<Error | string> {
    return new Promise((resolve) => {
      guardedLookup(deny, resolvesTo(address))("carrier.example", options, (err, answer) => resolve(err ?? (typeof answer === "string" ? answer : answer[0]!.address)));
    });
  }

  it.each(carried)("refuses %s (%s) by literal and by DNS answer, before the call and when connecting", async (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
    await expect(assertOutboundAllowed(`http://[${address}]:8080/v1`, deny)).rejects.toThrow(`a ${reason} address`);
    await expect(assertOutboundAllowed("https://carrier.example/v1", deny, resolvesTo(address))).rejects.toThrow(
      `carrier.example resolves to ${address}, a ${reason} address`,
    );
    for (const all of [true, false]) {
      const refused = await connectLookup(address, { all });
      expect(refused).toBeInstanceOf(OutboundRefusedError);
      expect(String(refused)).toContain(`a ${reason} address`);
    }
  });

  it("refuses them on a real connection", async () => {
    for (const [address] of carried) {
      const failed = await new Promise<unknown>((resolve) => {
        const req = request("http://carrier.example:8080/", { lookup: guardedLookup(deny, resolvesTo(address)) }, resolve);
        req.on("error", resolve);
        req.end();
      });
      expect(failed, address).toBeInstanceOf(OutboundRefusedError);
    }
  });

  it.each(carriedPublic)("allows %s, which carries a public address", async (address) => {
    expect(internalAddressReason(address)).toBeNull();
    await expect(assertOutboundAllowed(`http://[${address}]/`, deny)).resolves.toBeUndefined();
    await expect(assertOutboundAllowed("https://carrier.example/", deny, resolvesTo(address))).resolves.toBeUndefined();
    expect(await connectLookup(address, { all: true })).toBe(address);
  });
});

describe("the catalog call under the policy", () => {
  let fake: FakeProvider;
  let open: TestServer;
  let closed: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    open = await startTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
    closed = await startTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "false" });
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  async function providerOn(server: TestServer, baseUrl: string) {
    const owner = await server.api.userWithOrg();
    const auth = { token: owner.token };
    const secretId = await createSecret(server.api, auth, owner.org.id, { value: "never-sent" });
    const created = await server.api.post(
      `/api/v1/orgs/${owner.org.id}/model-provider-configs`,
      { name: "local", api_format: "openai-responses", base_url: baseUrl, credential_secret_id: secretId },
      auth,
    );
    return { auth, created, catalogPath: `/api/v1/orgs/${owner.org.id}/model-provider-configs/${created.body.config?.id}/model-catalog` };
  }

  it("reaches a loopback provider when the private network is allowed", async () => {
    const { auth, created, catalogPath } = await providerOn(open, fake.baseUrl);
    expect(created.body.model_catalog.status).toBe("ok");
    expect((await open.api.get(catalogPath, auth)).body).toEqual({ status: "ok", models: [{ slug: "fake-model" }] });
    expect(fake.requests).toHaveLength(2);
  });

  it("refuses a loopback base_url where it is given, on create and on update, and never calls it", async () => {
    const port = new URL(fake.url).port;
    for (const baseUrl of [fake.baseUrl, `http://localhost:${port}/v1`, `http://[::ffff:127.0.0.1]:${port}/v1`]) {
      const { created } = await providerOn(closed, baseUrl);
      expect(created.status, created.text).toBe(400);
      expect(created.body.code).toBe("validation_failed");
      expect(created.body.error).toMatch(/^base_url destination not allowed: .*loopback address \(set SVC_ALLOW_PRIVATE_NETWORK=true to allow\)$/);
      expect(created.text).not.toContain("never-sent");
    }
    const { auth, created } = await providerOn(closed, "https://models.example.invalid/v1");
    expect(created.status, created.text).toBe(201);
    const path = `/api/v1/orgs/${created.body.config.org_id}/model-provider-configs/${created.body.config.id}`;
    const moved = await closed.api.put(path, { base_url: `http://127.0.0.1:${port}/v1` }, auth);
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.error).toContain("SVC_ALLOW_PRIVATE_NETWORK");
    expect((await closed.api.get(path, auth)).body.base_url).toBe("https://models.example.invalid/v1");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("SVC_ALLOW_PRIVATE_NETWORK", () => {
  it("defaults to true embedded and false with DATABASE_URL; true and false override", () => {
    const server = { DATABASE_URL: "postgres://db/svc", SVC_SECRET_KEY: "1".repeat(64) };
    expect(loadConfig({}).allowPrivateNetwork).toBe(true);
    expect(loadConfig(server).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ SVC_ALLOW_PRIVATE_NETWORK: "false" }).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ ...server, SVC_ALLOW_PRIVATE_NETWORK: "true" }).allowPrivateNetwork).toBe(true);
    expect(() => loadConfig({ SVC_ALLOW_PRIVATE_NETWORK: "maybe" })).toThrow("SVC_ALLOW_PRIVATE_NETWORK must be true or false");
  });
});
