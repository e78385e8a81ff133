import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/**
 * An OpenTelemetry collector's OTLP/HTTP trace receiver, for the JSON encoding: accepts
 * `POST /v1/traces` (gzip or not), decodes each `ExportTraceServiceRequest` into flat spans with their
 * resource and attribute values, and answers as a collector does (200 with an empty partial success).
 * `bodies` keeps every request body as received, for searches over everything that was sent.
 */
export interface FakeCollector {
  /** The value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  bodies: string[];
  close(): Promise<void>;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
}

type AttributeValue = string | number | boolean | AttributeValue[] | null;

/** OTLP JSON's `AnyValue`: one of its typed fields (64-bit integers come as strings). */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

interface ExportTraceServiceRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; status?: { code?: number }; attributes?: KeyValue[] }>;
    }>;
  }>;
}

export async function startFakeCollector(): Promise<FakeCollector> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/traces" || !req.headers["content-type"]?.startsWith("application/json")) {
      res.writeHead(req.url === "/v1/traces" ? 415 : 404).end();
      return;
    }
    const text = await bodyText(req);
    bodies.push(text);
    spans.push(...decode(JSON.parse(text) as ExportTraceServiceRequest));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ partialSuccess: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function bodyText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return (req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8");
}

function decode(request: ExportTraceServiceRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        kind: span.kind ?? 0,
        statusCode: span.status?.code ?? 0,
        attributes: attributes(span.attributes),
        resource,
      })),
    );
  });
}

function attributes(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function valueOf(value: AnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return null;
}
