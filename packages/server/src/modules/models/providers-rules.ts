import { invalidField, Issues } from "./issues.js";
import type {
  ApiFormat,
  ApiVariant,
  AuthKind,
  CreateModelProviderConfigRequest,
  Preset,
  UpdateModelProviderConfigRequest,
} from "./providers-schemas.js";

/** A provider config's settings as stored, after presets and defaults. */
export interface ProviderSettings {
  apiFormat: ApiFormat;
  apiVariant: ApiVariant;
  baseUrl: string;
  endpointPath: string;
  requestTimeoutMs: number;
  authKind: AuthKind;
  authHeaderName: string | null;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;

export const DEFAULT_ENDPOINT_PATHS: Record<ApiFormat, string> = {
  "openai-responses": "/responses",
  "openai-chat-completions": "/chat/completions",
  "anthropic-messages": "/messages",
};

interface PresetSettings {
  apiFormat: ApiFormat;
  apiVariant: ApiVariant;
  baseUrl: string;
  authKind: AuthKind;
  authHeaderName: string | null;
}

export const PRESET_SETTINGS: Record<Preset, PresetSettings> = {
  openai: { apiFormat: "openai-responses", apiVariant: "default", baseUrl: "https://api.openai.com/v1", authKind: "bearer_token", authHeaderName: null },
  openrouter: {
    apiFormat: "openai-chat-completions",
    apiVariant: "openrouter",
    baseUrl: "https://openrouter.ai/api/v1",
    authKind: "bearer_token",
    authHeaderName: null,
  },
  anthropic: {
    apiFormat: "anthropic-messages",
    apiVariant: "default",
    baseUrl: "https://api.anthropic.com/v1",
    authKind: "api_key_header",
    authHeaderName: "x-api-key",
  },
};

/** Headers the transport or the bearer scheme own; an API key must not be placed in them. */
const RESERVED_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "host",
  "content-type",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The settings a create request asks for: its preset, then its own fields, then the format's defaults. */
export function settingsForCreate(input: CreateModelProviderConfigRequest): ProviderSettings {
  const issues = new Issues();
  const preset = input.preset === undefined ? undefined : PRESET_SETTINGS[input.preset];
  if (preset && input.api_format !== undefined && input.api_format !== preset.apiFormat) {
    issues.add("/api_format", `must be ${preset.apiFormat} with preset ${input.preset}, or be omitted`);
  }
  if (preset && input.api_variant !== undefined && input.api_variant !== preset.apiVariant) {
    issues.add("/api_variant", `must be ${preset.apiVariant} with preset ${input.preset}, or be omitted`);
  }
  const apiFormat = input.api_format ?? preset?.apiFormat;
  if (apiFormat === undefined) issues.add("/api_format", "is required without a preset");
  const rawBaseUrl = input.base_url ?? preset?.baseUrl;
  if (rawBaseUrl === undefined) issues.add("/base_url", "is required without a preset");
  issues.throwIfAny();

  const format = apiFormat!;
  const apiVariant = input.api_variant ?? preset?.apiVariant ?? "default";
  checkVariant(format, apiVariant);
  const authKind = input.auth_kind ?? preset?.authKind ?? defaultAuthKind(format);
  const presetHeader = preset && preset.authKind === authKind ? preset.authHeaderName : null;
  return {
    apiFormat: format,
    apiVariant,
    baseUrl: normalizeBaseUrl(rawBaseUrl!),
    endpointPath: checkEndpointPath(input.endpoint_path ?? DEFAULT_ENDPOINT_PATHS[format]),
    requestTimeoutMs: input.request_timeout_ms ?? DEFAULT_REQUEST_TIMEOUT_MS,
    authKind,
    authHeaderName: headerFor(format, authKind, input.auth_options?.header_name ?? presetHeader ?? undefined, input.auth_options !== undefined),
  };
}

/** `current` with a partial update applied; format and variant never change. */
export function settingsForUpdate(current: ProviderSettings, patch: UpdateModelProviderConfigRequest): ProviderSettings {
  const authKind = patch.auth_kind ?? current.authKind;
  let authHeaderName: string | null;
  if (patch.auth_options !== undefined) {
    authHeaderName = headerFor(current.apiFormat, authKind, patch.auth_options.header_name, true);
  } else if (authKind !== current.authKind) {
    authHeaderName = headerFor(current.apiFormat, authKind, undefined, false);
  } else {
    authHeaderName = current.authHeaderName;
  }
  return {
    ...current,
    baseUrl: patch.base_url === undefined ? current.baseUrl : normalizeBaseUrl(patch.base_url),
    endpointPath: patch.endpoint_path === undefined ? current.endpointPath : checkEndpointPath(patch.endpoint_path),
    requestTimeoutMs: patch.request_timeout_ms ?? current.requestTimeoutMs,
    authKind,
    authHeaderName,
  };
}

export function sameSettings(a: ProviderSettings, b: ProviderSettings): boolean {
  return (
    a.baseUrl === b.baseUrl &&
    a.endpointPath === b.endpointPath &&
    a.requestTimeoutMs === b.requestTimeoutMs &&
    a.authKind === b.authKind &&
    a.authHeaderName === b.authHeaderName
  );
}

function defaultAuthKind(format: ApiFormat): AuthKind {
  return format === "anthropic-messages" ? "api_key_header" : "bearer_token";
}

function checkVariant(format: ApiFormat, variant: ApiVariant): void {
  if (variant === "openrouter" && format !== "openai-chat-completions") {
    throw invalidField("/api_variant", "openrouter needs api_format openai-chat-completions");
  }
  if (variant === "bedrock" && format !== "anthropic-messages") {
    throw invalidField("/api_variant", "bedrock needs api_format anthropic-messages");
  }
}

/**
 * The credential header for `authKind`: none with bearer_token (where a header_name is an error), the given
 * or default one with api_key_header. Only Anthropic Messages has a default (`x-api-key`).
 */
function headerFor(format: ApiFormat, authKind: AuthKind, headerName: string | undefined, optionsGiven: boolean): string | null {
  if (authKind === "bearer_token") {
    if (headerName !== undefined && optionsGiven) throw invalidField("/auth_options/header_name", "is not used with bearer_token; send {}");
    return null;
  }
  const name = headerName ?? (format === "anthropic-messages" ? "x-api-key" : undefined);
  if (name === undefined) throw invalidField("/auth_options/header_name", "is required with api_key_header");
  if (!HEADER_TOKEN.test(name)) throw invalidField("/auth_options/header_name", "is not a valid HTTP header name");
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    throw invalidField("/auth_options/header_name", `${name} is reserved; use bearer_token for Authorization`);
  }
  return name;
}

/** http(s), a host, no credentials, query or fragment; lower-cased host and no trailing slash. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField("/base_url", "is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidField("/base_url", "must use http or https");
  if (url.hostname === "") throw invalidField("/base_url", "must name a host");
  if (url.username !== "" || url.password !== "") throw invalidField("/base_url", "must not carry credentials; use credential_secret_id");
  if (raw.includes("?") || raw.includes("#")) throw invalidField("/base_url", "must not have a query or a fragment");
  return url.href.replace(/\/+$/, "");
}

function checkEndpointPath(path: string): string {
  if (path.includes("?") || path.includes("#")) throw invalidField("/endpoint_path", "must not have a query or a fragment");
  return path;
}
