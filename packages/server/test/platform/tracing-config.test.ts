import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

/** Traces are on only with an OTLP endpoint, read by the standard OpenTelemetry names (docs/configuration.md). */
describe("tracing configuration", () => {
  it("is off without an OTLP endpoint, and when the SDK is disabled", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }).tracing).toBeUndefined();
  });

  it("is on with either endpoint, with the standard defaults", () => {
    for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
      expect(loadConfig({ [name]: "http://collector:4318" }).tracing).toEqual({
        sampler: "parentbased_always_on",
        samplerRatio: 1,
        scheduleDelayMs: 5000,
        exportTimeoutMs: 30_000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
      });
    }
  });

  it("reads the sampler and batch settings, and refuses values the SDK would ignore", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:4318", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25", OTEL_BSP_MAX_QUEUE_SIZE: "100" };
    expect(loadConfig(env).tracing).toMatchObject({ sampler: "parentbased_traceidratio", samplerRatio: 0.25, maxQueueSize: 100, maxExportBatchSize: 100 });
    expect(() => loadConfig({ ...env, OTEL_TRACES_SAMPLER: "jaeger_remote" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, OTEL_TRACES_SAMPLER_ARG: "2" })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(ConfigError);
  });
});
