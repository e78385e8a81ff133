import { Type, type TSchema } from "typebox";
import { ERROR_STATUS } from "../errors.js";
import { idPattern, type IdKind } from "../ids.js";
import { component } from "./components.js";

export const Timestamp = component("Timestamp", Type.String({ format: "date-time" }));
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** The spec's resource name: 1 to 64 characters, no surrounding whitespace, no control or invisible characters. */
export const ResourceName = component(
  "ResourceName",
  Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: "^(?![\\s\\u200B-\\u200F\\u2060\\uFEFF])(?:(?![\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}])[\\s\\S])*(?<![\\s\\u200B-\\u200F\\u2060\\uFEFF])$",
    description: "1 to 64 characters; no leading or trailing whitespace, no invisible or control characters.",
  }),
);

/** String key/value pairs: at most 64 keys of 1 to 128 characters, values up to 512 characters. */
export const Metadata = component(
  "Metadata",
  Type.Unsafe<Record<string, string>>({
    type: "object",
    propertyNames: { minLength: 1, maxLength: 128 },
    additionalProperties: { type: "string", maxLength: 512 },
    maxProperties: 64,
  }),
);

export const Email = Type.String({ format: "email", minLength: 3, maxLength: 254 });

/** Each id kind's component name: the reference's where it has the kind. */
const ID_NAMES: Record<IdKind, string> = {
  org: "OrganizationID",
  project: "ProjectID",
  user: "UserID",
  pat: "PersonalAccessTokenID",
  orgApiKey: "OrgAPIKeyID",
  invitation: "OrgInvitationID",
  secret: "SecretID",
  secretGrant: "SecretGrantID",
  secretVersion: "SecretVersionID",
  session: "BrowserSessionID",
  deviceFlow: "DeviceLoginFlowID",
  mcpOAuthFlow: "MCPOAuthFlowID",
  modelProviderConfig: "ModelProviderConfigID",
  configuredModel: "ConfiguredModelID",
  modelRevision: "ConfiguredModelRevisionID",
  modelGrant: "ProjectModelGrantID",
  agentConfig: "AgentConfigID",
  agentProfile: "AgentProfileID",
  agent: "AgentID",
  actor: "ActorID",
  agentInput: "AgentInputID",
  event: "AgentEventID",
  turn: "AgentTurnID",
  modelCallContext: "ModelCallContextID",
  toolCall: "ToolCallID",
  interaction: "AgentInteractionID",
  artifact: "ArtifactID",
  contextCheckpoint: "ContextCheckpointID",
  skill: "SkillID",
  skillRevision: "SkillRevisionID",
  skillGrant: "SkillGrantID",
  machine: "MachineID",
  daemonToken: "MachineDaemonTokenID",
  machineGrant: "ProjectMachineGrantID",
  machinePool: "MachinePoolID",
  machinePoolGrant: "ProjectMachinePoolGrantID",
  daemonRuntime: "DaemonRuntimeID",
  installation: "InstallationID",
  machineBinding: "AgentMachineBindingID",
  process: "ProcessID",
  processAction: "ProcessActionID",
  skillInstall: "SkillInstallID",
  cronTrigger: "CronTriggerID",
  integration: "IntegrationID",
  integrationOAuthFlow: "IntegrationOAuthFlowID",
  integrationInstall: "IntegrationInstallID",
  integrationSubscription: "IntegrationSubscriptionID",
  memoryStore: "MemoryStoreID",
  memory: "MemoryID",
  webhookEndpoint: "WebhookEndpointID",
  webhookDelivery: "WebhookDeliveryID",
  webhookMessage: "WebhookMessageID",
  budget: "BudgetID",
};

/** A public id of one kind, named in the OpenAPI document (`Id("agent")` is `AgentID`). */
export function Id(kind: IdKind) {
  return component(ID_NAMES[kind], Type.String({ pattern: idPattern(kind) }));
}

export const IdempotencyKeyHeader = Type.Object({
  "idempotency-key": Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

/** One problem in a submitted document (the spec's issue object). */
export const Issue = component(
  "ErrorIssue",
  Type.Object(
  {
    path: Type.String(),
    message: Type.String(),
    line: Type.Optional(Type.Integer({ minimum: 1 })),
    column: Type.Optional(Type.Integer({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
);

/** The spec's error envelope. */
export const ErrorEnvelope = component(
  "Error",
  Type.Object(
    {
      error: Type.String(),
      code: Type.String({ description: `Stable code; extensible. Known: ${Object.keys(ERROR_STATUS).join(", ")}` }),
      current_digest: Type.Optional(Type.String({ pattern: "^sha256:[0-9a-f]{64}$" })),
      issues: Type.Optional(Type.Array(Issue)),
    },
    { additionalProperties: false },
  ),
);

const CLIENT_CODES = Object.entries(ERROR_STATUS).flatMap(([code, status]) => (status < 500 && code !== "managed_work_admission_denied" ? [code] : []));
const SERVER_CODES = Object.entries(ERROR_STATUS).flatMap(([code, status]) => (status >= 500 ? [code] : []));

/** A 4xx or 5xx a route does not list: only `{error, code}`, the code from the client or server subset. */
const genericError = (name: string, codes: string[]) =>
  component(name, Type.Object({ error: Type.String(), code: component(`${name}Code`, Type.Enum(codes)) }, { additionalProperties: false }));
const GenericClientError = genericError("ClientError", CLIENT_CODES);
const GenericServerError = genericError("ServerError", SERVER_CODES);

export function Page<T extends TSchema>(item: T) {
  return Type.Object(
    { data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) },
    { additionalProperties: false },
  );
}

export const OkResponse = component("OKResponse", Type.Object({ ok: Type.Literal(true) }, { additionalProperties: false }));

/** Error responses every authenticated route may give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  const out: Record<string, TSchema> = { "4xx": GenericClientError, "5xx": GenericServerError };
  for (const status of [400, 401, 403, 404, ...statuses]) out[status] = ErrorEnvelope;
  return out;
}

/** A database time as the API writes it (RFC 3339, UTC, milliseconds). */
export function iso(time: Date): string {
  return time.toISOString();
}

export function isoOrNull(time: Date | null): string | null {
  return time ? time.toISOString() : null;
}

/**
 * A route option for responses whose views build every object exactly in its schema's shape and
 * property order (the timeline's): the schema still documents the response, but it is written with
 * JSON.stringify. fast-json-stringify picks each item's branch of a union by validating the item
 * against the branches, which cost an event page more than the rest of the request (issue 8).
 */
export const writtenByViews = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };
