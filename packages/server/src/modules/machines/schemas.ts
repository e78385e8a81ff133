import { Type, type Static } from "typebox";
import { GrantSort, namedPageQuery, pageQuery, ResourceSort } from "../../platform/http/lists.js";
import { idPattern } from "../../platform/ids.js";
import { Id, Metadata, NullableTimestamp, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { MachineFailureReport } from "../daemon/failures.js";
import { component } from "../../platform/http/components.js";

export const TAG = "Machines";

export const SOURCE_KINDS = ["byo", "pool"] as const;
export const LIFECYCLE_STATES = ["provisioning", "provision_failed", "active", "deleting", "delete_failed", "deleted"] as const;
export const CONNECTION_STATES = ["online", "asleep", "offline"] as const;
export const GRANT_SOURCE_KINDS = ["explicit", "pool"] as const;

export type SourceKind = (typeof SOURCE_KINDS)[number];
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];
export type ConnectionState = (typeof CONNECTION_STATES)[number];
export type GrantSourceKind = (typeof GRANT_SOURCE_KINDS)[number];

/** Names are checked as JSON Schema `propertyNames`: no `=` or NUL. `SVC_` names are svc's own (the service checks). */
const ENV_NAME = { minLength: 1, maxLength: 256, pattern: "^[^=\\u0000]+$" };
const MAX_ENV_ENTRIES = 4096;

/** A map from environment variable names to values of `value`'s schema. */
export function envMap<T>(value: object, description: string) {
  return Type.Unsafe<Record<string, T>>({ type: "object", propertyNames: ENV_NAME, additionalProperties: value, maxProperties: MAX_ENV_ENTRIES, description });
}

const EnvValue = { type: "string", maxLength: 131072 };
const SecretRef = { type: "string", pattern: idPattern("secret") };

export const Env = component("MachineEnv", envMap<string>(EnvValue, "Environment variables set for every process. Names starting with SVC_ are reserved."));
export const SecretEnv = component(
  "MachineSecretEnv",
  envMap<string>(
    SecretRef,
    "Environment variables whose values are the current value of a generic secret, read when a process starts; the " +
      "record keeps only the sec_ reference.",
  ),
);
export const EnvOverlay = component(
  "MachineEnvOverlay",
  envMap<string | null>({ anyOf: [EnvValue, { type: "null" }] }, "Merged over the inherited env; null removes a name."),
);
export const SecretEnvOverlay = component(
  "MachineSecretEnvOverlay",
  envMap<string | null>(
    { anyOf: [SecretRef, { type: "null" }] },
    "Merged over the inherited secret_env; null removes a name. Secrets are resolved when a process starts.",
  ),
);
export const Cwd = Type.String({ maxLength: 4096, description: "Working directory of processes; empty means the daemon's own." });
export const Description = Type.String({ maxLength: 1024 });

/** svc sets observed_platform from the daemon's report, so that key is refused (checked by the service). */
export const MachineMetadata = component(
  "MachineMetadata",
  Type.Unsafe<Record<string, string>>({
    ...Metadata,
    maxProperties: 63,
    description: "String key/value pairs; observed_platform is reserved for the platform the daemon reports.",
  }),
);

const machineSummaryFields = {
  id: Id("machine"),
  org_id: Id("org"),
  source_kind: Type.Enum([...SOURCE_KINDS]),
  display_name: ResourceName,
  description: Type.String(),
  provider: Type.String({ description: "`byo` for a connected machine; the pool's provider for a pool machine." }),
  lifecycle_state: Type.Enum([...LIFECYCLE_STATES], { description: "A BYO machine is active until deleted." }),
  connection_state: Type.Enum([...CONNECTION_STATES], {
    description:
      "Derived, never stored: online while a daemon holds an unexpired lease, asleep when a sleeping machine can be " +
      "woken, otherwise offline.",
  }),
  last_observed_at: NullableTimestamp,
  deleted_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const MachineSummary = component("MachineSummary", Type.Object(machineSummaryFields, { additionalProperties: false }));

export const Machine = component("Machine", Type.Object(
  {
    ...machineSummaryFields,
    machine_pool_id: Type.Union([Id("machinePool"), Type.Null()]),
    cwd: Type.String(),
    env: Type.Record(Type.String(), Type.String()),
    secret_env: Type.Record(Type.String(), Id("secret")),
    lifecycle_reason_code: Type.String(),
    lifecycle_reason_message: Type.String(),
    failure_report: Type.Optional(MachineFailureReport),
    next_reconcile_after: NullableTimestamp,
    provision_attempts: Type.Integer(),
    delete_attempts: Type.Integer(),
    metadata: Metadata,
  },
  { additionalProperties: false },
));

export const MachineAccessSource = component("MachineAccessSource", Type.Object(
  {
    kind: Type.Enum(["org_role", "project_machine_grant"]),
    project_id: Type.Optional(Id("project")),
    grant_id: Type.Optional(Id("machineGrant")),
    grant_source_kind: Type.Optional(Type.Enum([...GRANT_SOURCE_KINDS])),
  },
  { additionalProperties: false },
));

export const VisibleMachine = component("VisibleMachine", Type.Object(
  {
    ...machineSummaryFields,
    access: Type.Object(
      {
        can_manage: Type.Boolean({ description: "Whether the caller may change, delete and mint tokens for the machine (org.manage)." }),
        sources: Type.Array(MachineAccessSource, {
          description: "Why the caller sees the machine: its org role, and each grant to a project the caller can read.",
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
));

const machineInput = {
  display_name: ResourceName,
  description: Type.Optional(Description),
  cwd: Type.Optional(Cwd),
  env: Type.Optional(Env),
  secret_env: Type.Optional(SecretEnv),
  metadata: Type.Optional(MachineMetadata),
};

export const CreateMachineRequest = component("CreateMachineRequest", Type.Object(machineInput, { additionalProperties: false }));
export type CreateMachineRequest = Static<typeof CreateMachineRequest>;

export const ConnectMachineRequest = component("ConnectBYOMachineRequest", Type.Object(
  {
    ...machineInput,
    project_ids: Type.Optional(Type.Array(Id("project"), { maxItems: 100, uniqueItems: true })),
    token_name: Type.Optional(ResourceName),
  },
  { additionalProperties: false },
));

export const UpdateMachineRequest = component("UpdateMachineRequest", Type.Object(
  { cwd: Type.Optional(Cwd), env: Type.Optional(Env), secret_env: Type.Optional(SecretEnv) },
  { additionalProperties: false, minProperties: 1 },
));
export type UpdateMachineRequest = Static<typeof UpdateMachineRequest>;

export const DaemonToken = component("MachineDaemonToken", Type.Object(
  {
    id: Id("daemonToken"),
    org_id: Id("org"),
    machine_id: Id("machine"),
    name: ResourceName,
    metadata: Metadata,
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
    revoke_reason: Type.String({ description: "Empty while active; `revoked` or `machine_deleted` once revoked." }),
  },
  { additionalProperties: false },
));

export const CreateDaemonTokenRequest = component("CreateMachineDaemonTokenRequest", Type.Object(
  { name: Type.Optional(ResourceName), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
));

export const CreateDaemonTokenResponse = component("CreateMachineDaemonTokenResponse", Type.Object(
  { token: Type.String({ minLength: 1, description: "The daemon's bearer credential, shown once; opaque." }), token_record: DaemonToken },
  { additionalProperties: false },
));

export const MachineGrant = component("ProjectMachineGrant", Type.Object(
  {
    id: Id("machineGrant"),
    org_id: Id("org"),
    project_id: Id("project"),
    machine_id: Id("machine"),
    source_kind: Type.Enum([...GRANT_SOURCE_KINDS]),
    project_machine_pool_grant_id: Type.Union([Id("machinePoolGrant"), Type.Null()]),
    description: Type.String(),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
));

export const ConnectMachineResponse = component("ConnectBYOMachineResponse", Type.Object(
  { machine: Machine, token: CreateDaemonTokenResponse.properties.token, token_record: DaemonToken, project_grants: Type.Array(MachineGrant) },
  { additionalProperties: false },
));

export const CreateMachineGrantRequest = component("CreateProjectMachineGrantRequest", Type.Object(
  { machine_id: Id("machine"), description: Type.Optional(Description), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
));

export const CreateMachineGrantResponse = component("CreateProjectMachineGrantResponse", Type.Object({ grant: MachineGrant, machine: Machine }, { additionalProperties: false }));
export const MachineGrantListItem = component("ProjectMachineGrantListItem", Type.Object({ grant: MachineGrant, machine: MachineSummary }, { additionalProperties: false }));

const SourceKindFilter = Type.Optional(Type.Enum([...SOURCE_KINDS], { description: "Only machines of this source kind." }));

export const ListMachinesQuery = Type.Object(
  { ...namedPageQuery, source_kind: SourceKindFilter, sort: Type.Optional(ResourceSort) },
  { additionalProperties: false },
);
export const ListGrantsQuery = Type.Object({ ...namedPageQuery, sort: Type.Optional(GrantSort) }, { additionalProperties: false });
export const ListTokensQuery = Type.Object(pageQuery, { additionalProperties: false });

export const OrgParams = Type.Object({ orgID: Id("org") });
export const MachineParams = Type.Object({ orgID: Id("org"), machineID: Id("machine") });
export const TokenParams = Type.Object({ orgID: Id("org"), machineID: Id("machine"), tokenID: Id("daemonToken") });
export const ProjectParams = Type.Object({ orgID: Id("org"), projectID: Id("project") });
export const GrantParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), grantID: Id("machineGrant") });

/** A machine an agent holds (reference `AgentMachineBinding`), made at launch from the config's machine_sources. */
export const AgentMachineBinding = component("AgentMachineBinding", Type.Object(
  {
    id: Id("machineBinding"),
    project_id: Id("project"),
    agent_id: Id("agent"),
    machine_id: Id("machine"),
    machine_ref: Type.String({ description: "The binding's short name, mchr-…" }),
    binding_kind: Type.Union([Type.Literal("explicit"), Type.Literal("pool")]),
    state: Type.Union([Type.Literal("attached"), Type.Literal("released")]),
    description: Type.String(),
    cwd: Type.String(),
    env_overlay: EnvOverlay,
    secret_env_overlay: SecretEnvOverlay,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
));
