import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { failure, FORMATS, lastBody, modelRequest, run, weatherTool } from "./support.js";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

describe.each(FORMATS)("%s transport", (format) => {
  it("sends a bearer credential as Authorization and nothing else", async () => {
    await run(modelRequest(fake, format, { auth: { kind: "bearer_token" }, credential: "sk-bearer" }));
    const headers = fake.requests[0]?.headers ?? {};
    expect(headers["authorization"]).toBe("Bearer sk-bearer");
    expect(headers["x-api-key"]).toBeUndefined();
  });

  it("sends an api_key_header credential in the named header only", async () => {
    await run(modelRequest(fake, format, { auth: { kind: "api_key_header", headerName: "api-key" }, credential: "azure-key" }));
    const headers = fake.requests[0]?.headers ?? {};
    expect(headers["api-key"]).toBe("azure-key");
    expect(headers["authorization"]).toBeUndefined();
    expect(headers["x-api-key"]).toBeUndefined();
  });

  it("posts to endpointPath under baseUrl when it is set", async () => {
    await run(modelRequest(fake, format, { baseUrl: `${fake.url}/proxy/`, endpointPath: `/tenant-7/v1${defaultPath(format)}` }));
    expect(fake.requests[0]?.path).toBe(`/proxy/tenant-7/v1${defaultPath(format)}`);
  });

  it("posts to the default path for the format otherwise", async () => {
    await run(modelRequest(fake, format));
    expect(fake.requests[0]).toMatchObject({ method: "POST", path: `/v1${defaultPath(format)}`, format });
  });

  it("sends inline image bytes and passes media URLs through without fetching them", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await run(
      modelRequest(fake, format, {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is in these?" },
              { type: "image", mediaType: "image/png", source: { data: png } },
              { type: "image", mediaType: "image/png", source: { url: `${fake.url}/images/cat.png` } },
            ],
          },
        ],
      }),
    );
    // One request: the URL went to the provider as a URL, svc did not download it.
    expect(fake.requests).toHaveLength(1);
    const body = JSON.stringify(lastBody(fake));
    expect(body).toContain(Buffer.from(png).toString("base64"));
    expect(body).toContain(`${fake.url}/images/cat.png`);
  });

  it("reports a call to a tool that was not offered, for the loop to answer", async () => {
    fake.script({ toolCalls: [{ id: "call_x", name: "launch_rockets", input: { count: 3 } }] });
    const { result } = await run(modelRequest(fake, format, { tools: [weatherTool] }));
    expect(result.stopReason).toBe("tool_use");
    expect(result.parts).toMatchObject([{ type: "tool_call", providerCallId: "call_x", name: "launch_rockets", input: { count: 3 } }]);
  });

  it("rejects tool input that is not a JSON object as an invalid, retryable response", async () => {
    fake.script({ toolCalls: [{ name: "get_weather", input: {}, rawArguments: '{"city": "Par' }] });
    const error = await failure(modelRequest(fake, format, { tools: [weatherTool] }));
    expect(error).toMatchObject({ kind: "invalid_response", retryable: true });
  });
});

function defaultPath(format: (typeof FORMATS)[number]): string {
  return { "openai-chat-completions": "/chat/completions", "openai-responses": "/responses", "anthropic-messages": "/messages" }[format];
}
