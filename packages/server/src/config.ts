import { join, resolve } from "node:path";
import { DEFAULT_PASSWORD_HASH_COST } from "./platform/crypto/passwords.js";

/** Every environment variable svc reads, parsed and validated once at boot. */
export interface Config {
  /** Interface to listen on; loopback unless the operator chooses to be reachable from the network. */
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** The embedded database's shared_buffers, in MB: its page cache, resident from the start (docs/performance.md, "Memory"). */
  readonly embeddedSharedBuffersMb: number;
  /** Origin the browser sees, without a trailing slash; decides cookie names and CSRF origin checks. */
  readonly publicUrl: string;
  /** SVC_PUBLIC_URL was set; otherwise what a client must be told to call (the svcd installer) is the origin it used. */
  readonly publicUrlSet: boolean;
  readonly secureCookies: boolean;
  readonly databaseUrl: string | undefined;
  /** Base64 or hex encoding of the 32-byte master key; undefined means "generate into the data dir". */
  readonly secretKey: string | undefined;
  readonly logLevel: LogLevel;
  /** `pretty` text for a terminal, or JSON lines; by default pretty only when standard output is a terminal. */
  readonly logFormat: LogFormat;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly trustProxy: boolean;
  /** Who may create an account with POST /api/auth/signup (docs/operations.md, "Production checklist"). */
  readonly signup: SignupPolicy;
  /**
   * Whether outbound calls (model providers, MCP servers, later webhooks) may reach loopback, private,
   * link-local and other internal addresses. Default: true only embedded and listening on loopback (one
   * person's svc beside a local model server), false otherwise: a server others reach must not be a proxy
   * into its own network.
   */
  readonly allowPrivateNetwork: boolean;
  /**
   * The MCP registry whose snapshot `GET /mcp-servers` searches (an API like the official registry's);
   * undefined (`SVC_MCP_REGISTRY_URL=off`) keeps the snapshot that ships with svc and never syncs.
   */
  readonly mcpRegistryUrl: string | undefined;
  readonly integrations: IntegrationsConfig;
  readonly shutdownTimeoutMs: number;
  /**
   * How often a quiet process checks whether to give back the heap a burst of work left (platform/heap-trim.ts);
   * 0 turns it off.
   */
  readonly heapTrimIntervalMs: number;
  /**
   * How long a process may answer from memory which principal a bearer token is and what it may access in
   * an org or project; 0 turns the cache off. A revocation served by another process is honoured within it.
   */
  readonly authCacheTtlMs: number;
  /** scrypt's cost for new password hashes, as log2 N (see platform/crypto/passwords.ts). */
  readonly passwordHashCost: number;
  /** How often an open event stream re-checks its caller's access (platform/http/access-watch.ts). */
  readonly streamAccessRecheckMs: number;
  /** API requests worked on at once; more wait their turn (platform/http/admission.ts). 0: no limit. */
  readonly maxConcurrentRequests: number;
  /** API requests started per turn of the event loop; more start in the next turns (platform/http/pacing.ts). 0: no pacing. */
  readonly requestStartsPerTurn: number;
  readonly rateLimits: RateLimitConfig;
  readonly deviceLogin: DeviceLoginConfig;
  readonly runtime: RuntimeConfig;
  readonly machines: MachinesConfig;
  /** Where artifact bytes live; see `platform/blobs`. */
  readonly blobs: BlobConfig;
  /** OpenTelemetry traces over OTLP/HTTP; undefined (off) unless an OTLP endpoint is set. */
  readonly tracing: TracingConfig | undefined;
}

/**
 * The OpenTelemetry settings svc reads itself, by their standard names. The exporter reads the rest of
 * the standard `OTEL_EXPORTER_OTLP_*` variables (headers, timeout, compression, certificates) on its own.
 */
export interface TracingConfig {
  /** `OTEL_TRACES_SAMPLER`; the default samples every trace a caller did not mark as unsampled. */
  readonly sampler: TraceSampler;
  /** `OTEL_TRACES_SAMPLER_ARG`: the share of traces kept by the ratio samplers, from 0 to 1. */
  readonly samplerRatio: number;
  /** `OTEL_BSP_SCHEDULE_DELAY`: how long finished spans wait to be sent in one batch. */
  readonly scheduleDelayMs: number;
  /** `OTEL_BSP_EXPORT_TIMEOUT`: how long one batch may take to send before it is dropped. */
  readonly exportTimeoutMs: number;
  /** `OTEL_BSP_MAX_QUEUE_SIZE`: spans held while the collector is slow; beyond it new spans are dropped. */
  readonly maxQueueSize: number;
  /** `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`: spans sent in one request. */
  readonly maxExportBatchSize: number;
}

const TRACE_SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** Where svc reaches each integration provider; tests and self-hosters can point them at their own servers. */
export interface IntegrationsConfig {
  /** Base of Slack's Web API (`SVC_SLACK_API_URL`), without a trailing slash; methods are `<base>/<method>`. */
  readonly slackApiUrl: string;
  /** Slack's OAuth consent page (`SVC_SLACK_AUTHORIZE_URL`); only handed to browsers, never called by svc. */
  readonly slackAuthorizeUrl: string;
  /** Base of Discord's REST API (`SVC_DISCORD_API_URL`), version included, without a trailing slash; the Gateway address comes from its `GET /gateway/bot`. */
  readonly discordApiUrl: string;
  /**
   * How long a Discord Gateway lease lasts unrenewed (`SVC_DISCORD_GATEWAY_LEASE_SECONDS`): the longest a
   * crashed holder's connection stays down before another process takes it over; renewed every third of it.
   */
  readonly discordGatewayLeaseSeconds: number;
  /** Base of GitHub's REST API (`SVC_GITHUB_API_URL`), without a trailing slash; `https://HOST/api/v3` for GitHub Enterprise Server. */
  readonly githubApiUrl: string;
  /**
   * Requests a minute one client address may send to the providers' public inbound routes
   * (`SVC_INBOUND_RATE_LIMIT`, per process); beyond it svc answers 429 with Retry-After. 0 turns the limit off.
   */
  readonly inboundRateLimit: number;
}

export interface RuntimeConfig {
  /** Steps (model calls or batches of MCP calls) one worker process runs at once. */
  readonly workerConcurrency: number;
  /** How long a worker's claim on an agent lasts without renewal; renewed every third of it. */
  readonly leaseSeconds: number;
  /** How long an idle worker waits for a wakeup hint before looking at the queue anyway. */
  readonly pollMs: number;
  /** How often maintenance runs (lease reaping, expiry sweeps). */
  readonly maintenanceIntervalMs: number;
  /** How often maintenance looks for embedded tables that changed enough to ANALYZE (PGlite has no autovacuum); 0: never. */
  readonly embeddedAnalyzeIntervalMs: number;
  /**
   * How long a model provider may take to start answering a call (its response headers) before the attempt
   * fails as a retryable timeout. A provider that accepts the connection and never answers is caught here,
   * long before the provider config's `request_timeout_ms`, which bounds the whole streamed answer.
   */
  readonly modelResponseTimeoutMs: number;
  /** Deadline for initializing an MCP server and listing its tools. */
  readonly mcpConnectTimeoutMs: number;
  /** Deadline for one MCP tool call. */
  readonly mcpCallTimeoutMs: number;
  /** How long a process's machine may stay offline before its run_command call fails as machine_unreachable. */
  readonly machineGraceSeconds: number;
  /** How often the scheduler looks for due cron trigger firings. */
  readonly schedulerIntervalMs: number;
  /** How long a claimed firing stays with the process that claimed it before another may take it over. */
  readonly schedulerLeaseSeconds: number;
}

/** Pool machines and the `local` provider (docs/machines.md, "Pools that make machines"). */
export interface MachinesConfig {
  /**
   * The pool providers the operator enabled (`SVC_MACHINE_PROVIDERS`); none by default, so no tenant can
   * make machines until the operator chooses a provider fit for the tenants it serves.
   */
  readonly providers: readonly MachineProvider[];
  /** svc's origin as local pool machines dial it; default `http://127.0.0.1:$PORT`. */
  readonly localUrl: string;
  /** The argv that runs `svcd` for local pool machines; default: node and the repository's daemon. */
  readonly localDaemonCommand: readonly string[] | undefined;
  /** `bubblewrap` runs each local machine in a sandbox and refuses to start it without `bwrap`; `none` runs it as svc's user. */
  readonly localIsolation: "none" | "bubblewrap";
  /** How often maintenance provisions, checks and deletes pool machines. */
  readonly reconcileIntervalMs: number;
  /** How long a pool machine may take from its daemon's start to online before the attempt fails. */
  readonly provisionTimeoutSeconds: number;
  /** The length of one minute of `delete_after_idle_minutes`, in seconds: 60, or less for tests and trials. */
  readonly idleMinuteSeconds: number;
  /** How long a `skill` call waits for its machines to report an install before it says `timeout`. */
  readonly skillInstallTimeoutSeconds: number;
  /** How long a skill archive download token stays valid after svc offers it to a daemon. */
  readonly skillDownloadTokenSeconds: number;
  /**
   * How long a pool machine of a provider that can sleep stays awake with no process work before it is put
   * to sleep (it wakes when work arrives); 0 keeps pool machines awake.
   */
  readonly sleepAfterIdleSeconds: number;
}

/** The pool providers svc implements (modules/machines/providers). */
export const MACHINE_PROVIDERS = ["local"] as const;
export type MachineProvider = (typeof MACHINE_PROVIDERS)[number];

export interface RateLimitConfig {
  /** Attempts allowed per window on sign-in and sign-up, per client address. */
  readonly authPerWindow: number;
  /**
   * Failed sign-ins per window on one account, from all addresses together, before a client that has failed
   * on it is refused (modules/identity/sign-in-throttle.ts); a client that has not failed is never refused.
   */
  readonly authPerAccountPerWindow: number;
  /** Attempts allowed per window on device-login routes, per client address. */
  readonly devicePerWindow: number;
  readonly windowSeconds: number;
}

export interface DeviceLoginConfig {
  /** Lifetime of a device-login flow (`expires_in`); RFC 8628 suggests minutes, svc defaults to 15. */
  readonly codeTtlSeconds: number;
  /** The polling interval first advertised to a device (`interval`); slow_down raises it per flow. */
  readonly pollIntervalSeconds: number;
}

export type BlobConfig = FileBlobConfig | S3BlobConfig;

export interface FileBlobConfig {
  readonly kind: "file";
  /** `$SVC_DATA_DIR/blobs`. */
  readonly dir: string;
}

export interface S3BlobConfig {
  readonly kind: "s3";
  /** Origin of the S3 API, e.g. `http://127.0.0.1:9000`; defaults to AWS's regional endpoint. */
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** `endpoint/bucket/key` (MinIO and most self-hosted stores) rather than `bucket.endpoint/key`. */
  readonly forcePathStyle: boolean;
}

const SIGNUP_POLICIES = ["open", "invite", "closed"] as const;
/** `open`: anyone; `invite`: an email with a pending org invitation; `closed`: nobody. The first account may always sign up. */
export type SignupPolicy = (typeof SIGNUP_POLICIES)[number];

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): Config {
  const port = intVar(env, "PORT", 8080, 0, 65535);
  const publicUrl = originVar(env, "SVC_PUBLIC_URL", `http://localhost:${port}`);
  const databaseUrl = nonEmpty(env["DATABASE_URL"]);
  const dataDir = resolve(nonEmpty(env["SVC_DATA_DIR"]) ?? "./.svc");
  const secretKey = nonEmpty(env["SVC_SECRET_KEY"]);
  if (databaseUrl && !secretKey) {
    throw new ConfigError("SVC_SECRET_KEY is required when DATABASE_URL is set (see docs/configuration.md)");
  }
  const host = nonEmpty(env["HOST"]) ?? "127.0.0.1";
  return Object.freeze({
    host,
    port,
    dataDir,
    embeddedSharedBuffersMb: intVar(env, "SVC_EMBEDDED_SHARED_BUFFERS_MB", 16, 1, 16_384),
    publicUrl,
    publicUrlSet: nonEmpty(env["SVC_PUBLIC_URL"]) !== undefined,
    secureCookies: publicUrl.startsWith("https://"),
    databaseUrl,
    secretKey,
    logLevel: enumVar(env, "SVC_LOG_LEVEL", LOG_LEVELS, "info"),
    logFormat: enumVar(env, "SVC_LOG_FORMAT", LOG_FORMATS, process.stdout.isTTY === true ? "pretty" : "json"),
    smtpUrl: nonEmpty(env["SVC_SMTP_URL"]),
    mailFrom: nonEmpty(env["SVC_MAIL_FROM"]) ?? "svc <no-reply@localhost>",
    trustProxy: boolVar(env, "SVC_TRUST_PROXY", false),
    signup: enumVar(env, "SVC_SIGNUP", SIGNUP_POLICIES, "open"),
    allowPrivateNetwork: boolVar(env, "SVC_ALLOW_PRIVATE_NETWORK", databaseUrl === undefined && isLoopbackHost(host)),
    mcpRegistryUrl: registryUrlVar(env, "SVC_MCP_REGISTRY_URL", "https://registry.modelcontextprotocol.io"),
    integrations: Object.freeze({
      slackApiUrl: httpUrlVar(env, "SVC_SLACK_API_URL", "https://slack.com/api"),
      slackAuthorizeUrl: httpUrlVar(env, "SVC_SLACK_AUTHORIZE_URL", "https://slack.com/oauth/v2/authorize"),
      discordApiUrl: httpUrlVar(env, "SVC_DISCORD_API_URL", "https://discord.com/api/v10"),
      // 30 s by default (reference docs: integrations/discord, "normally within 30 seconds"); at least 3, so renewals come every second at most.
      discordGatewayLeaseSeconds: intVar(env, "SVC_DISCORD_GATEWAY_LEASE_SECONDS", 30, 3, 600),
      githubApiUrl: httpUrlVar(env, "SVC_GITHUB_API_URL", "https://api.github.com"),
      // Slack allows an app 30,000 events an hour per workspace (about 500 a minute), spread over its many senders.
      inboundRateLimit: intVar(env, "SVC_INBOUND_RATE_LIMIT", 600, 0, 1_000_000),
    }),
    shutdownTimeoutMs: intVar(env, "SVC_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    heapTrimIntervalMs: intVar(env, "SVC_HEAP_TRIM_INTERVAL_MS", 10_000, 0, 3_600_000),
    authCacheTtlMs: intVar(env, "SVC_AUTH_CACHE_TTL_MS", 5_000, 0, 60_000),
    // 17 is OWASP's recommendation (128 MiB per hash); above it a burst of sign-ins could exhaust memory.
    passwordHashCost: intVar(env, "SVC_PASSWORD_HASH_COST", DEFAULT_PASSWORD_HASH_COST, 10, 17),
    streamAccessRecheckMs: intVar(env, "SVC_STREAM_ACCESS_RECHECK_MS", 60_000, 1_000, 3_600_000),
    maxConcurrentRequests: intVar(env, "SVC_MAX_CONCURRENT_REQUESTS", 32, 0, 100_000),
    requestStartsPerTurn: intVar(env, "SVC_REQUEST_STARTS_PER_TURN", 16, 0, 100_000),
    rateLimits: Object.freeze({
      authPerWindow: intVar(env, "SVC_RATE_LIMIT_AUTH", 20, 1, 1_000_000),
      authPerAccountPerWindow: intVar(env, "SVC_RATE_LIMIT_AUTH_ACCOUNT", 10, 1, 1_000_000),
      devicePerWindow: intVar(env, "SVC_RATE_LIMIT_DEVICE", 30, 1, 1_000_000),
      windowSeconds: intVar(env, "SVC_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    }),
    runtime: Object.freeze({
      workerConcurrency: intVar(env, "SVC_WORKER_CONCURRENCY", 16, 1, 1024),
      leaseSeconds: intVar(env, "SVC_RUNTIME_LEASE_SECONDS", 90, 1, 1800),
      pollMs: intVar(env, "SVC_WORKER_POLL_MS", 1000, 10, 60_000),
      modelResponseTimeoutMs: intVar(env, "SVC_MODEL_RESPONSE_TIMEOUT_MS", 60_000, 100, 3_600_000),
      mcpConnectTimeoutMs: intVar(env, "SVC_MCP_CONNECT_TIMEOUT_MS", 30_000, 100, 300_000),
      mcpCallTimeoutMs: intVar(env, "SVC_MCP_CALL_TIMEOUT_MS", 300_000, 100, 3_600_000),
      maintenanceIntervalMs: intVar(env, "SVC_MAINTENANCE_INTERVAL_MS", 15_000, 100, 3_600_000),
      embeddedAnalyzeIntervalMs: intVar(env, "SVC_EMBEDDED_ANALYZE_INTERVAL_MS", 15_000, 0, 86_400_000),
      machineGraceSeconds: intVar(env, "SVC_MACHINE_GRACE_SECONDS", 600, 1, 604_800),
      schedulerIntervalMs: intVar(env, "SVC_SCHEDULER_INTERVAL_MS", 5_000, 50, 60_000),
      schedulerLeaseSeconds: intVar(env, "SVC_SCHEDULER_LEASE_SECONDS", 60, 1, 3600),
    }),
    machines: Object.freeze({
      providers: listVar(env, "SVC_MACHINE_PROVIDERS", MACHINE_PROVIDERS),
      localUrl: originVar(env, "SVC_LOCAL_MACHINE_URL", `http://127.0.0.1:${port}`),
      localDaemonCommand: argvVar(env, "SVC_LOCAL_DAEMON_COMMAND"),
      localIsolation: enumVar(env, "SVC_LOCAL_MACHINE_ISOLATION", ["bubblewrap", "none"] as const, "bubblewrap"),
      reconcileIntervalMs: intVar(env, "SVC_MACHINE_RECONCILE_INTERVAL_MS", 1000, 50, 600_000),
      provisionTimeoutSeconds: intVar(env, "SVC_MACHINE_PROVISION_TIMEOUT_SECONDS", 120, 1, 3600),
      idleMinuteSeconds: intVar(env, "SVC_MACHINE_IDLE_MINUTE_SECONDS", 60, 1, 60),
      skillInstallTimeoutSeconds: intVar(env, "SVC_SKILL_INSTALL_TIMEOUT_SECONDS", 30, 1, 600),
      skillDownloadTokenSeconds: intVar(env, "SVC_SKILL_DOWNLOAD_TOKEN_SECONDS", 300, 1, 3600),
      sleepAfterIdleSeconds: intVar(env, "SVC_MACHINE_SLEEP_AFTER_IDLE_SECONDS", 300, 0, 604_800),
    }),
    deviceLogin: Object.freeze({
      codeTtlSeconds: intVar(env, "SVC_DEVICE_CODE_TTL_SECONDS", 900, 1, 86_400),
      pollIntervalSeconds: intVar(env, "SVC_DEVICE_POLL_INTERVAL_SECONDS", 5, 1, 300),
    }),
    blobs: blobConfig(env, dataDir),
    tracing: tracingConfig(env),
  });
}

function tracingConfig(env: Env): TracingConfig | undefined {
  if (boolVar(env, "OTEL_SDK_DISABLED", false)) return undefined;
  const endpoints = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"].filter((name) => nonEmpty(env[name]) !== undefined);
  if (endpoints.length === 0) return undefined;
  // The exporter would drop every batch to a malformed endpoint with no more than a debug message.
  for (const name of endpoints) originVar(env, name, "");
  const maxQueueSize = intVar(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1, 1_000_000);
  return Object.freeze({
    sampler: enumVar(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, "parentbased_always_on"),
    samplerRatio: ratioVar(env, "OTEL_TRACES_SAMPLER_ARG", 1),
    scheduleDelayMs: intVar(env, "OTEL_BSP_SCHEDULE_DELAY", 5000, 0, 600_000),
    exportTimeoutMs: intVar(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000, 1, 600_000),
    maxQueueSize,
    maxExportBatchSize: intVar(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", Math.min(512, maxQueueSize), 1, maxQueueSize),
  });
}

function blobConfig(env: Env, dataDir: string): BlobConfig {
  const kind = enumVar(env, "SVC_BLOB_STORE", ["file", "s3"] as const, "file");
  if (kind === "file") return Object.freeze({ kind, dir: join(dataDir, "blobs") });
  const required = (name: string): string => {
    const value = nonEmpty(env[name]);
    if (value === undefined) throw new ConfigError(`${name} is required when SVC_BLOB_STORE=s3 (see docs/configuration.md)`);
    return value;
  };
  const bucket = required("SVC_S3_BUCKET");
  // S3's bucket naming rules; a name outside them cannot be addressed in a path or a host name.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(`SVC_S3_BUCKET must be 3 to 63 lowercase letters, digits, dots or hyphens, got "${bucket}"`);
  }
  const accessKeyId = required("SVC_S3_ACCESS_KEY_ID");
  const secretAccessKey = required("SVC_S3_SECRET_ACCESS_KEY");
  const region = nonEmpty(env["SVC_S3_REGION"]) ?? "us-east-1";
  return Object.freeze({
    kind,
    endpoint: originVar(env, "SVC_S3_ENDPOINT", `https://s3.${region}.amazonaws.com`),
    region,
    bucket,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: boolVar(env, "SVC_S3_FORCE_PATH_STYLE", true),
  });
}

/**
 * Every `SVC_*` variable svc reads, here, in `svcd` or in the `svc` command (whose settings may share a shell with svc's), so
 * that a misspelt one is named at start rather than silently ignored. A test keeps it equal to the names
 * this file reads.
 */
export const KNOWN_SETTINGS: readonly string[] = [
  "SVC_ALLOW_PRIVATE_NETWORK",
  "SVC_AUTH_CACHE_TTL_MS",
  "SVC_BLOB_STORE",
  "SVC_DATA_DIR",
  "SVC_DEVICE_CODE_TTL_SECONDS",
  "SVC_DEVICE_POLL_INTERVAL_SECONDS",
  "SVC_DISCORD_API_URL",
  "SVC_DISCORD_GATEWAY_LEASE_SECONDS",
  "SVC_EMBEDDED_ANALYZE_INTERVAL_MS",
  "SVC_EMBEDDED_SHARED_BUFFERS_MB",
  "SVC_GITHUB_API_URL",
  "SVC_HEAP_TRIM_INTERVAL_MS",
  "SVC_INBOUND_RATE_LIMIT",
  "SVC_LOCAL_DAEMON_COMMAND",
  "SVC_LOCAL_MACHINE_ISOLATION",
  "SVC_LOCAL_MACHINE_URL",
  "SVC_LOG_FORMAT",
  "SVC_LOG_LEVEL",
  "SVC_MACHINE_GRACE_SECONDS",
  "SVC_MACHINE_IDLE_MINUTE_SECONDS",
  "SVC_MACHINE_PROVIDERS",
  "SVC_MACHINE_PROVISION_TIMEOUT_SECONDS",
  "SVC_MACHINE_RECONCILE_INTERVAL_MS",
  "SVC_MACHINE_SLEEP_AFTER_IDLE_SECONDS",
  "SVC_MAIL_FROM",
  "SVC_MAINTENANCE_INTERVAL_MS",
  "SVC_MAX_CONCURRENT_REQUESTS",
  "SVC_MCP_CALL_TIMEOUT_MS",
  "SVC_MCP_CONNECT_TIMEOUT_MS",
  "SVC_MCP_REGISTRY_URL",
  "SVC_MODEL_RESPONSE_TIMEOUT_MS",
  "SVC_PASSWORD_HASH_COST",
  "SVC_PUBLIC_URL",
  "SVC_RATE_LIMIT_AUTH",
  "SVC_RATE_LIMIT_AUTH_ACCOUNT",
  "SVC_RATE_LIMIT_DEVICE",
  "SVC_RATE_LIMIT_WINDOW_SECONDS",
  "SVC_REQUEST_STARTS_PER_TURN",
  "SVC_RUNTIME_LEASE_SECONDS",
  "SVC_S3_ACCESS_KEY_ID",
  "SVC_S3_BUCKET",
  "SVC_S3_ENDPOINT",
  "SVC_S3_FORCE_PATH_STYLE",
  "SVC_S3_REGION",
  "SVC_S3_SECRET_ACCESS_KEY",
  "SVC_SCHEDULER_INTERVAL_MS",
  "SVC_SCHEDULER_LEASE_SECONDS",
  "SVC_SECRET_KEY",
  "SVC_SHUTDOWN_TIMEOUT_MS",
  "SVC_SIGNUP",
  "SVC_SKILL_DOWNLOAD_TOKEN_SECONDS",
  "SVC_SKILL_INSTALL_TIMEOUT_SECONDS",
  "SVC_SLACK_API_URL",
  "SVC_SLACK_AUTHORIZE_URL",
  "SVC_SMTP_URL",
  "SVC_STREAM_ACCESS_RECHECK_MS",
  "SVC_TRUST_PROXY",
  "SVC_WORKER_CONCURRENCY",
  "SVC_WORKER_POLL_MS",
  // svcd's, read by the daemon (packages/daemon), not by svc.
  "SVC_DAEMON_TOKEN",
  "SVC_HOME",
  // The svc command's (packages/cli, docs/cli.md), which shares a shell with the server it runs.
  "SVC_CONFIG_DIR",
  "SVC_ORG",
  "SVC_PROJECT",
  "SVC_TOKEN",
  "SVC_URL",
];

/**
 * A warning for each `SVC_*` variable in `env` that svc does not read, with the known name it most
 * likely meant: `SVC_DATADIR` → "did you mean SVC_DATA_DIR?".
 */
export function unknownSettings(env: Env = process.env): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith("SVC_") && !KNOWN_SETTINGS.includes(name))
    .sort()
    .map((name) => {
      const guess = closestSetting(name);
      return `unknown setting ${name}; ${guess ? `did you mean ${guess}?` : "see docs/configuration.md for the settings svc reads"}`;
    });
}

/** Settings svc reads without the prefix, as most servers do. */
const UNPREFIXED_SETTINGS = ["PORT", "HOST", "DATABASE_URL"];

/** The known name nearest to `name`: the same letters without underscores, or at most 2 edits away. */
function closestSetting(name: string): string | undefined {
  const unprefixed = UNPREFIXED_SETTINGS.find((known) => `SVC_${known}` === name);
  if (unprefixed) return unprefixed;
  const bare = (value: string) => value.replaceAll("_", "");
  let best: { name: string; distance: number } | undefined;
  for (const known of KNOWN_SETTINGS) {
    const distance = bare(known) === bare(name) ? 0 : editDistance(known, name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: known, distance };
  }
  return best?.name;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** A command line as a JSON array of strings (paths may hold spaces), or undefined when unset. */
function argvVar(env: Env, name: string): readonly string[] | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((part) => typeof part === "string" && part !== "")) {
    throw new ConfigError(`${name} must be a JSON array of non-empty strings, such as ["node", "/opt/svcd/main.js"]`);
  }
  return Object.freeze(value as string[]);
}

/** A comma-separated list of known names, each at most once; unset or empty is none. */
function listVar<T extends string>(env: Env, name: string, values: readonly T[]): readonly T[] {
  const items = (nonEmpty(env[name]) ?? "").split(",").map((item) => item.trim().toLowerCase()).filter((item) => item !== "");
  const unknown = items.filter((item) => !(values as readonly string[]).includes(item));
  if (unknown.length > 0) throw new ConfigError(`${name} lists ${unknown.map((item) => `"${item}"`).join(", ")}; known: ${values.join(", ")}`);
  return Object.freeze([...new Set(items)] as T[]);
}

function ratioVar(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return value;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function enumVar<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

/** An http(s) base URL without a trailing slash, query or fragment; `off` for none. */
function registryUrlVar(env: Env, name: string, fallback: string): string | undefined {
  const raw = nonEmpty(env[name]) ?? fallback;
  if (raw === "off") return undefined;
  return httpUrlVar(env, name, raw);
}

/** An absolute http(s) URL without credentials, query or fragment, and without a trailing slash. */
function httpUrlVar(env: Env, name: string, fallback: string): string {
  const raw = nonEmpty(env[name]) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${name} must be an http(s) URL without credentials, query or fragment, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, "");
}

function originVar(env: Env, name: string, fallback: string): string {
  const raw = nonEmpty(env[name]) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${name} must use http or https, got "${raw}"`);
  }
  return url.origin;
}
