import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { createGuardedFetch } from "../../src/platform/net/guarded-fetch.js";
import { createModelClient } from "../../src/runtime/models/ai-sdk-client.js";
import { ModelError } from "../../src/runtime/models/types.js";
import { client, failure, FORMATS, modelRequest } from "./support.js";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

const OPENAI_CONTEXT_OVERFLOW = {
  error: {
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  },
};

describe.each(FORMATS)("%s error classification", (format) => {
  it("429 with Retry-After: 2 → rate_limited, retryable, retryAfterMs 2000", async () => {
    fake.script({ error: { status: 429, headers: { "Retry-After": "2" } } });
    const error = await failure(modelRequest(fake, format));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: "rate_limited", retryable: true, retryAfterMs: 2000, status: 429, providerRequestId: "req_fake0001" });
  });

  it("503 → overloaded, retryable", async () => {
    fake.script({ error: { status: 503 } });
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "overloaded", retryable: true, status: 503 });
  });

  it("500 and a non-JSON 502 → server, retryable", async () => {
    fake.script({ error: { status: 500 } }, { error: { status: 502, body: "<html>Bad Gateway</html>", headers: { "content-type": "text/html" } } });
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "server", retryable: true, status: 500 });
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "server", retryable: true, status: 502 });
  });

  it("400 context overflow → context_overflow, not retryable", async () => {
    fake.script(
      format === "anthropic-messages"
        ? { error: { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" } }
        : { error: { status: 400, body: OPENAI_CONTEXT_OVERFLOW } },
    );
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "context_overflow", retryable: false, status: 400 });
  });

  it("other 400 → invalid_request, not retryable", async () => {
    fake.script({ error: { status: 400, message: "tools[0].name: string does not match pattern" } });
    const error = await failure(modelRequest(fake, format));
    expect(error).toMatchObject({ kind: "invalid_request", retryable: false, status: 400 });
    expect(error.message).toContain("does not match pattern");
  });

  it("401 and 403 → auth, not retryable", async () => {
    fake.script({ error: { status: 401 } }, { error: { status: 403 } });
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "auth", retryable: false, status: 401 });
    expect(await failure(modelRequest(fake, format))).toMatchObject({ kind: "auth", retryable: false, status: 403 });
  });

  it("a response that never comes, with a 200 ms timeout → timeout, retryable", async () => {
    fake.script({ hang: true });
    expect(await failure(modelRequest(fake, format, { timeoutMs: 200 }))).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("a stream that stalls past the timeout → timeout, retryable", async () => {
    fake.script({ text: "one two three four five six", hang: "mid_stream" });
    expect(await failure(modelRequest(fake, format, { timeoutMs: 300 }))).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("aborting the caller's signal mid-stream → canceled, not retryable", async () => {
    fake.script({ text: "one two three four five six", hang: "mid_stream" });
    const controller = new AbortController();
    const error = await failure(modelRequest(fake, format, { signal: controller.signal }), (delta) => {
      if (delta.kind === "text_delta") controller.abort();
    });
    expect(error).toMatchObject({ kind: "canceled", retryable: false });
  });

  it("an already aborted signal → canceled without a request", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await failure(modelRequest(fake, format, { signal: controller.signal }))).toMatchObject({ kind: "canceled" });
    expect(fake.requests).toHaveLength(0);
  });

  it("an error event inside a 200 stream is classified too", async () => {
    fake.script({ text: "partial answer", streamError: { message: "Overloaded" } });
    const error = await failure(modelRequest(fake, format));
    expect(error).toMatchObject(format === "anthropic-messages" ? { kind: "overloaded", retryable: true } : { kind: "server", retryable: true });
    expect(error.message).toBe("Overloaded");
  });

  it("an exception thrown by onDelta aborts the call and is rethrown unchanged", async () => {
    fake.script({ text: "one two three" });
    const bug = new Error("sink broke");
    await expect(
      client.stream(modelRequest(fake, format), () => {
        throw bug;
      }),
    ).rejects.toBe(bug);
  });
});

describe("provider-specific classification", () => {
  it("Anthropic 529 → overloaded and 413 → context_overflow", async () => {
    fake.script({ error: { status: 529 } }, { error: { status: 413, message: "Request exceeds the maximum allowed number of bytes." } });
    expect(await failure(modelRequest(fake, "anthropic-messages"))).toMatchObject({ kind: "overloaded", retryable: true, providerCode: "overloaded_error" });
    expect(await failure(modelRequest(fake, "anthropic-messages"))).toMatchObject({ kind: "context_overflow", retryable: false, status: 413 });
  });

  it("OpenAI retry-after-ms wins over Retry-After, and a past HTTP date means retry now", async () => {
    fake.script(
      { error: { status: 429, headers: { "retry-after-ms": "1500", "retry-after": "2" } } },
      { error: { status: 429, headers: { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" } } },
    );
    expect(await failure(modelRequest(fake, "openai-responses"))).toMatchObject({ retryAfterMs: 1500 });
    expect(await failure(modelRequest(fake, "openai-chat-completions"))).toMatchObject({ retryAfterMs: 0 });
  });

  it("OpenAI insufficient_quota 429 is an account problem, not retryable", async () => {
    fake.script({
      error: { status: 429, body: { error: { message: "You exceeded your current quota.", type: "insufficient_quota", param: null, code: "insufficient_quota" } } },
    });
    expect(await failure(modelRequest(fake, "openai-chat-completions"))).toMatchObject({ kind: "auth", retryable: false, status: 429 });
  });

  it("a refused connection → network, retryable", async () => {
    const gone = await startFakeProvider();
    const baseUrl = gone.baseUrl;
    await gone.close();
    const error = await failure({ ...modelRequest(fake, "anthropic-messages"), baseUrl });
    expect(error).toMatchObject({ kind: "network", retryable: true });
  });
});

describe("a provider address the SSRF guard refuses", () => {
  const guarded = createModelClient({ fetch: createGuardedFetch({ allowPrivateNetwork: false }) });
  const refusal = (request: ReturnType<typeof modelRequest>) =>
    guarded.stream(request, () => {}).then(
      () => expect.fail("the call must fail"),
      (error: unknown) => error as ModelError,
    );

  it.each(FORMATS)("%s: an internal address fails the call at once, not retryable", async (format) => {
    const error = await refusal(modelRequest(fake, format));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: "destination_refused", retryable: false });
    expect(error.message).toContain("SVC_ALLOW_PRIVATE_NETWORK");
    expect(fake.requests).toHaveLength(0);
  });

  it("a name that does not resolve stays retryable: DNS may answer later", async () => {
    const error = await refusal({ ...modelRequest(fake, "openai-chat-completions"), baseUrl: "http://provider.svc-test.invalid/v1" });
    expect(error).toMatchObject({ kind: "network", retryable: true });
  });
});
