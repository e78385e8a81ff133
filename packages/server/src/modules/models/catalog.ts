import { outboundGet, OutboundTransferError } from "../../platform/net/outbound-http.js";
import { OutboundRefusedError, type OutboundPolicy } from "../../platform/net/outbound.js";
import type { ProviderSettings } from "./providers-rules.js";
import { canonicalDecimal, type PricingBody } from "./pricing.js";

export interface DiscoveredModel {
  slug: string;
  display_name?: string;
  context_window_tokens?: number;
  max_output_tokens?: number;
  /** Suggested prices, where the provider's list states them (OpenRouter). */
  pricing?: PricingBody;
}

export type ModelCatalog = { status: "ok"; models: DiscoveredModel[] } | { status: "failed"; error: string };

/** Discovery waits on the provider inside a request, so it gets a short deadline of its own. */
const CATALOG_TIMEOUT_MS = 10_000;
/** OpenRouter's list with its metadata is a few MiB; anything far beyond that is not a model list. */
const CATALOG_MAX_BYTES = 8 * 1024 * 1024;
const ANTHROPIC_VERSION = "2023-06-01";
const INT32 = 2147483647;

/** Slug fragments of models that cannot serve an agent (no text chat): audio, images, embeddings, moderation. */
const NON_CHAT_MARKERS = ["embedding", "whisper", "tts", "transcribe", "audio", "realtime", "dall-e", "image", "moderation", "sora"];

/**
 * Lists the provider's models through its `/models` endpoint with the configured credential. Every
 * failure (refused destination, transport, HTTP status, unreadable body) is returned as data, never
 * thrown: the caller's request succeeds and shows why the probe did not. The credential never appears in
 * an error message.
 */
export async function fetchModelCatalog(
  settings: ProviderSettings,
  credential: string,
  policy: OutboundPolicy,
): Promise<ModelCatalog> {
  const anthropic = settings.apiFormat === "anthropic-messages";
  const url = `${settings.baseUrl}/models${anthropic ? "?limit=1000" : ""}`;
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "svc" };
  if (settings.authKind === "bearer_token") headers["authorization"] = `Bearer ${credential}`;
  else headers[settings.authHeaderName!] = credential;
  if (anthropic) headers["anthropic-version"] = ANTHROPIC_VERSION;

  let status: number;
  let body: Buffer;
  try {
    ({ status, body } = await outboundGet(url, { headers, timeoutMs: Math.min(settings.requestTimeoutMs, CATALOG_TIMEOUT_MS), maxBytes: CATALOG_MAX_BYTES }, policy));
  } catch (err) {
    return { status: "failed", error: redact(transportMessage(err), credential) };
  }
  const parsed = parseJson(body);
  if (status < 200 || status >= 300) {
    const detail = providerMessage(parsed);
    return { status: "failed", error: redact(`the models endpoint answered ${status}${detail ? `: ${detail}` : ""}`, credential) };
  }
  const entries = (parsed as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(entries)) return { status: "failed", error: "the models endpoint answered with something other than a model list" };
  return { status: "ok", models: discovered(entries) };
}

function transportMessage(err: unknown): string {
  if (err instanceof OutboundRefusedError) return err.message;
  if (err instanceof OutboundTransferError) return `the models endpoint gave ${err.message}`;
  const code = (err as NodeJS.ErrnoException).code;
  return `the models endpoint could not be reached (${code ?? (err as Error).message ?? "unknown error"})`;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** `{error: {message}}` is the error shape of OpenAI, Anthropic and OpenRouter alike. */
function providerMessage(parsed: unknown): string {
  const error = (parsed as { error?: unknown } | undefined)?.error;
  const message = typeof error === "string" ? error : (error as { message?: unknown } | undefined)?.message;
  if (typeof message !== "string") return "";
  return message.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, 200);
}

function redact(message: string, credential: string): string {
  return credential.length >= 4 ? message.split(credential).join("***") : message;
}

type Entry = Record<string, unknown>;

/** Chat-capable entries, newest first, one per slug, with the limits the provider advertises. */
function discovered(entries: unknown[]): DiscoveredModel[] {
  const ranked: Array<{ model: DiscoveredModel; created: number; index: number }> = [];
  for (const [index, raw] of entries.entries()) {
    if (typeof raw !== "object" || raw === null) continue;
    const entry = raw as Entry;
    const slug = typeof entry["id"] === "string" ? entry["id"].trim() : "";
    if (!slug || !chatCapable(slug, entry)) continue;
    const model: DiscoveredModel = { slug };
    const name = stringField(entry, "display_name") ?? stringField(entry, "name");
    if (name) model.display_name = name;
    const window = firstCount(entry, ["context_length", "max_input_tokens"], "context_length", 2);
    const output = firstCount(entry, ["max_output_tokens", "max_completion_tokens", "max_tokens"], "max_completion_tokens", 1);
    if (window !== undefined) model.context_window_tokens = window;
    if (output !== undefined && (window === undefined || output < window)) model.max_output_tokens = output;
    const pricing = listedPricing(entry);
    if (pricing) model.pricing = pricing;
    ranked.push({ model, created: createdAt(entry), index });
  }
  ranked.sort((a, b) => b.created - a.created || a.index - b.index);
  const seen = new Set<string>();
  return ranked.filter(({ model }) => !seen.has(model.slug) && seen.add(model.slug)).map(({ model }) => model);
}

/**
 * Where the provider says what a model produces and accepts (OpenRouter's `architecture` and
 * `supported_parameters`), text output and tools are required. Otherwise the slug decides.
 */
function chatCapable(slug: string, entry: Entry): boolean {
  const architecture = entry["architecture"] as { output_modalities?: unknown } | undefined;
  if (architecture && Array.isArray(architecture.output_modalities)) {
    const parameters = entry["supported_parameters"];
    return architecture.output_modalities.includes("text") && (!Array.isArray(parameters) || parameters.includes("tools"));
  }
  const lower = slug.toLowerCase();
  return !NON_CHAT_MARKERS.some((marker) => lower.includes(marker));
}

function stringField(entry: Entry, key: string): string | undefined {
  const value = entry[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function firstCount(entry: Entry, keys: string[], topProviderKey: string, min: number): number | undefined {
  const top = entry["top_provider"] as Entry | undefined;
  for (const value of [...keys.map((key) => entry[key]), top?.[topProviderKey]]) {
    if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= INT32) return value;
  }
  return undefined;
}

/**
 * OpenRouter's `pricing` (US dollars per token, decimal strings: `prompt`, `completion`, `input_cache_read`,
 * `input_cache_write`) as prices per million tokens. Input and output are both needed; a price that is not
 * a plain non-negative decimal (OpenRouter writes "-1" for "varies") or needs more than 6 decimals per
 * million is left out, and without input or output nothing is suggested.
 */
function listedPricing(entry: Entry): PricingBody | undefined {
  const listed = entry["pricing"];
  if (typeof listed !== "object" || listed === null) return undefined;
  const price = (key: string) => perMillion((listed as Entry)[key]);
  const input = price("prompt");
  const output = price("completion");
  if (input === undefined || output === undefined) return undefined;
  const pricing: PricingBody = { input_per_mtok: input, output_per_mtok: output };
  const cacheRead = price("input_cache_read");
  const cacheWrite = price("input_cache_write");
  if (cacheRead !== undefined) pricing.cache_read_per_mtok = cacheRead;
  if (cacheWrite !== undefined) pricing.cache_write_per_mtok = cacheWrite;
  return pricing;
}

/** A per-token decimal string times a million, exactly (the point moves six places), in the API's spelling. */
function perMillion(value: unknown): string | undefined {
  if (typeof value !== "string" || !/^\d{1,12}(\.\d{1,12})?$/.test(value)) return undefined;
  const [whole, fraction = ""] = value.split(".");
  const digits = fraction.padEnd(6, "0");
  const integer = `${whole}${digits.slice(0, 6)}`.replace(/^0+(?=\d)/, "");
  const rest = digits.slice(6);
  if (integer.length > 12) return undefined;
  return canonicalDecimal(rest ? `${integer}.${rest}` : integer);
}

/** Unix seconds (`created`, OpenAI and OpenRouter) or RFC 3339 (`created_at`, Anthropic); 0 when absent. */
function createdAt(entry: Entry): number {
  if (typeof entry["created"] === "number") return entry["created"];
  if (typeof entry["created_at"] === "string") {
    const ms = Date.parse(entry["created_at"]);
    if (!Number.isNaN(ms)) return ms / 1000;
  }
  return 0;
}
