import { context, diag, DiagLogLevel, propagation, SpanStatusCode, trace, type Span, type SpanOptions } from "@opentelemetry/api";
import type { Sampler } from "@opentelemetry/sdk-trace";
import type { TraceSampler, TracingConfig } from "../config.js";

/**
 * OpenTelemetry traces over OTLP/HTTP (docs/operations.md, "Traces"): an HTTP request, and an agent's
 * step with its claim, model call, tool calls and record, each one trace. Code that makes spans uses
 * `tracer` from the OpenTelemetry API alone, which is a no-op until `startTracing` registers a provider:
 * with tracing off, a span costs a call that returns a shared non-recording span, and the SDK and the
 * exporter are never loaded. Spans carry kinds, names, ids and counts, never message content, secret
 * values or tokens.
 */
export const tracer = trace.getTracer("svc");

/** How long shutdown waits for the last spans to reach the collector before it gives up on them. */
const FLUSH_BOUND_MS = 5_000;

export interface TracingLog {
  warn(obj: unknown, msg: string): void;
}

/**
 * Registers the tracer provider, the async context manager (so spans started in a step's callbacks find
 * their parent) and the W3C trace-context propagator. Returns the shutdown, which sends what is queued
 * and waits at most `FLUSH_BOUND_MS`: an unreachable collector must not hold up a process's exit.
 */
export async function startTracing(config: TracingConfig, log: TracingLog): Promise<() => Promise<void>> {
  // Loaded only here, so a process with tracing off never loads the SDK.
  const [sdk, { OTLPTraceExporter }, resources, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the env detector) win over the default name.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ "service.name": "svc" }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = new sdk.BatchSpanProcessor({
    exporter: new OTLPTraceExporter(),
    scheduledDelayMillis: config.scheduleDelayMs,
    exportTimeoutMillis: config.exportTimeoutMs,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize,
  });
  const provider = new sdk.TracerProvider({ resource, sampler: sampler(sdk, config.sampler, config.samplerRatio), spanProcessors: [processor] });
  // The SDK reports a failed export only through its diagnostic logger: a collector that is down or refuses spans shows in svc's log.
  diag.setLogger({ error: diagnostic(log), warn: diagnostic(log), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), FLUSH_BOUND_MS)));
    const flushed = await Promise.race([provider.shutdown().then(() => "sent" as const), bound]).finally(() => clearTimeout(timer));
    if (flushed === "late") log.warn({ boundMs: FLUSH_BOUND_MS }, "the trace collector did not take the last spans in time; they are dropped");
  };
}

function diagnostic(log: TracingLog) {
  return (message: string, ...args: unknown[]) => log.warn({ err: args.find((arg) => arg instanceof Error) }, `opentelemetry: ${message}`);
}

type Sdk = typeof import("@opentelemetry/sdk-trace");

/** The standard `OTEL_TRACES_SAMPLER` names mapped onto the SDK's samplers. */
function sampler(sdk: Sdk, name: TraceSampler, ratio: number): Sampler {
  const root = name.endsWith("always_on") ? new sdk.AlwaysOnSampler() : name.endsWith("always_off") ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(ratio);
  return name.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}

/**
 * Runs `fn` inside a span that is the active one meanwhile (so spans started within become its children)
 * and ends it. A throw marks the span as an error with the error's class only: a message may quote what
 * a tenant or a provider sent.
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Error status with `error.type` set to the error's kind or class, and nothing of its message. */
export function markFailed(span: Span, err: unknown): void {
  const kind = (err as { kind?: unknown } | null)?.kind;
  span.setAttribute("error.type", typeof kind === "string" ? kind : err instanceof Error ? err.name : "unknown");
  span.setStatus({ code: SpanStatusCode.ERROR });
}
