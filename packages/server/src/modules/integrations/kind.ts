import type { Issue } from "../../platform/errors.js";
import type { SecretKind, SecretMaterial } from "../secrets/schemas.js";

/**
 * What every integration kind provides, behind one interface: its capability catalog (spec:
 * Integration, "Capabilities object"), its provider_config rules, and how it verifies a credential with
 * its provider. Each kind lives in its own folder (kinds/<kind>/); the kind-neutral core knows kinds only
 * through this interface, and is handed them where the app is composed (kinds/index.ts): nothing else in
 * the server names a kind (docs/architecture.md, "Integrations").
 */

/** `{description?, input_schema}`: a static JSON Schema for a tool's, the settings', a handler's or a schedule's arguments. */
export interface CapabilityDefinition {
  description?: string;
  input_schema: Record<string, unknown>;
}

export interface Capabilities {
  /** Keyed by operation; an integration named `eng` exposes operation `read` to agents as `int__eng__read`. */
  tools: Record<string, CapabilityDefinition>;
  settings?: CapabilityDefinition;
  subscription?: { conversation_schema: Record<string, unknown> };
  interaction_handler?: CapabilityDefinition;
  schedule?: CapabilityDefinition;
}

/** The identity a provider confirmed for a credential: what the Integration shows and what later routing needs. */
export interface VerifiedIdentity {
  tenantId: string;
  accountRef: string;
  /** Only kinds whose provider mentions an app by slug set this (spec: bot_mention is GitHub's). */
  botMention?: string;
  /** The bot's name at the provider: the display name when setup is given none (reference docs: integrations/discord). */
  displayName?: string;
  /** Facts kept for the runtime and never shown (for Slack: app and bot ids, the workspace name). */
  facts: Record<string, string>;
}

/** What a setup request claims; a claim the provider contradicts is refused before anything is saved. */
export interface IdentityClaim {
  tenantId?: string;
  accountRef?: string;
}

/** A credential the provider refused, or a claim it contradicted: the caller's input, reported as issues. */
export class CredentialRejected extends Error {
  constructor(readonly issues: Issue[]) {
    super(issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
    this.name = "CredentialRejected";
  }
}

/** The app credentials a user hands over to start an OAuth install (the reference's IntegrationOAuthSetup request). */
export interface OAuthAppCredentials {
  client_id: string;
  client_secret: string;
  signing_secret: string;
}

/** A kind whose provider installs an app through an OAuth consent page (Slack). */
export interface OAuthInstaller {
  provider: string;
  /** The consent page's URL for `state`, sending the browser back to `redirectUri`. */
  authorizeUrl(app: OAuthAppCredentials, redirectUri: string, state: string): string;
  /** Redeems the code and verifies the token it bought; answers the identity and the secret material to store. */
  redeem(app: OAuthAppCredentials, code: string, redirectUri: string): Promise<{ identity: VerifiedIdentity; material: SecretMaterial }>;
  /** Where the provider posts events and interactions for this kind, under svc's public origin. */
  eventPaths: { events: string; actions: string };
  /**
   * Registers a new app with the provider from svc's manifest, as the holder of `configurationToken`
   * (Slack's app configuration token), and answers its credentials. A refused token or name is
   * CredentialRejected (paths in the reference's CreateSlackSetupRequest); an unreachable provider an AppError.
   */
  createApp?(configurationToken: string, app: AppRegistration): Promise<OAuthAppCredentials & { appId: string }>;
}

/** What a new provider app is registered with: its name and the URLs svc serves it at. */
export interface AppRegistration {
  name: string;
  redirectUri: string;
  eventsUrl: string;
  actionsUrl: string;
}

/** What the catalog publishes about a kind (`GET …/integration-definitions`); static, so known without a provider. */
export interface IntegrationKindCatalog {
  readonly name: string;
  readonly description: string;
  readonly capabilities: Capabilities;
}

export interface IntegrationKind extends IntegrationKindCatalog {
  /** The secret kinds a credential may be; anything else is refused at setup. */
  readonly credentialKinds: readonly SecretKind[];
  /** The agent profiles (public `aprf_` ids) valid settings name, with where: they must exist in the project when saved. */
  profileReferences(settings: Record<string, unknown>): Array<{ pointer: string; profileId: string }>;
  /** Rules of schema-valid settings a JSON Schema cannot state, paths relative to the settings; none when absent. */
  settingsIssues?(settings: Record<string, unknown>): Issue[];
  /** Problems with a provider_config, paths relative to it (spec: provider_config per kind). */
  providerConfigIssues(config: Record<string, unknown>): Issue[];
  /** Asks the provider who the credential is; throws CredentialRejected, or an AppError when the provider cannot answer. */
  verify(material: SecretMaterial, claim: IdentityClaim): Promise<VerifiedIdentity>;
  /**
   * The event names a subscription may select with `events` (reference docs: integrations/github,
   * "Configure incoming PR work"); a kind without them forwards everything and refuses a filter.
   */
  readonly subscriptionEvents?: readonly string[];
  readonly oauth?: OAuthInstaller;
  readonly inbound?: InboundReceiver;
  /** Runs the operations of `capabilities.tools` for agents; a kind without it offers tools no agent can run yet. */
  readonly tools?: IntegrationToolExecutor;
  /** svc posts the interaction handler's questions and approvals in this kind's conversations (its receipt handlers post them). */
  readonly postsInteractions?: boolean;
  /** svc fires this kind's schedule capability (its receipt handlers post the opening message and launch). */
  readonly runsSchedules?: boolean;
}

/** The implemented kinds by name, as composed at startup (kinds/index.ts). */
export type IntegrationKinds = ReadonlyMap<string, IntegrationKind>;

/** A file an agent asked an integration tool to send: one of the agent's artifacts or a file of its attached memory, with its bytes. */
export interface ToolArtifact {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** What a tool call acts with: the conversation assigned at launch, the integration's credential as loaded for this call and its settings, the agent's artifacts. */
export interface ToolContext {
  conversation: Record<string, unknown>;
  credential: SecretMaterial;
  settings: Record<string, unknown>;
  /** Aborts when the worker stops or the agent is canceled: a kind that waits (a provider's Retry-After) stops waiting. */
  signal: AbortSignal;
  /** The integration's provider_account_ref (for github_pr the App installation id its tokens are minted for). */
  accountRef?: string;
  /** The agent's artifact `art_…` (public id), or a message for the model when it is not one of the agent's. */
  artifact(publicId: string): Promise<ToolArtifact | { missing: string }>;
  /**
   * The file an exact path names: `/artifacts/<artifact_id>` (one of the agent's) or `/memory/<store>/<file>`
   * (a store its config attaches), or a message for the model: a pattern, a store not attached, no such file.
   */
  file(path: string): Promise<ToolArtifact | { missing: string }>;
}

/** A tool's answer for the model: a result, or a tool error it can act on. */
export type ToolAnswer = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Runs an integration tool (spec: Integration, capability definitions: "Shipped integration tools take action
 * arguments and use the conversation assigned at launch"). The arguments were validated against the
 * operation's input_schema. A provider that is rate limiting or down throws AppError `rate_limited` (with
 * `retryAfterSeconds`) or `upstream_unavailable`; the caller records it as the integration's runtime failure.
 * A kind may wait out a short Retry-After within the call (bounded, ending when `signal` aborts); any
 * longer retry is the model's to make.
 */
export interface IntegrationToolExecutor {
  execute(operation: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolAnswer>;
}

/** An inbound provider request exactly as received: the raw body is what the provider signed. */
export interface InboundRequest {
  /** Which of the kind's inbound routes it reached (InboundReceiver.routes). */
  endpoint: string;
  /** The route's path parameters (Discord's application id, GitHub's App id). */
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** One provider event to keep as a receipt and handle later. */
export interface InboundEvent {
  providerEventId: string;
  eventKind: string;
  payload: Record<string, unknown>;
}

/**
 * What a request says about its signature, read without trusting it and without any database work:
 * enough to refuse it at once, or to find whose keys may verify it.
 */
export interface InboundSignature {
  /** When the provider says it signed (Unix seconds); undefined for a scheme without one (GitHub's), whose deliveries are deduplicated by id. */
  signedAt?: number;
  /** The provider tenant the request names (an integration's provider_tenant_id); undefined for Slack's URL verification, which names none. */
  tenantId?: string;
  /** Narrows the tenant's candidates by their verified identity facts (Slack: the app the request names). */
  routesTo?(identity: Record<string, string>): boolean;
}

/** A candidate integration's key, as the receiver caches it: a signing secret or a public key. */
export interface VerificationSource {
  /** The integration's credential, decrypted; only for a kind whose key is in its credential (`keyIn: "credential"`). */
  credential?: SecretMaterial;
  providerConfig: Record<string, unknown>;
}

/**
 * A kind whose provider pushes signed requests to svc (docs/architecture.md, "Inbound requests"). The
 * kind-neutral receiver (inbound-receiver.ts) reads the signature's claims, refuses a stale or unsigned
 * request at once, verifies the rest with the candidates' cached keys, and only then hands the request and
 * the integrations that signed it to the kind's acceptor for the per-integration work.
 */
export interface InboundReceiver {
  /** Paths under `/api/integrations/` (Fastify syntax) and the endpoint each is. */
  readonly routes: ReadonlyArray<{ path: string; endpoint: string }>;
  /** The biggest body the provider sends; a bigger one is refused before it is read whole. */
  readonly maxBodyBytes: number;
  /** Where a candidate's key is: its credential (decrypted once and cached) or its provider_config (public). */
  readonly keyIn: "credential" | "provider_config";
  /** Reads the signature's claims; throws AppError unauthorized when the request is not signed, invalid_request when it is not the provider's format. */
  signature(request: InboundRequest): InboundSignature;
  /** The candidate's key, or undefined when it has none of this kind. */
  keyOf(source: VerificationSource): string | undefined;
  /** Checks the request's signature with one key, in constant time where the scheme allows. */
  verify(key: string, request: InboundRequest): boolean;
}
