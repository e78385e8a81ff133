import { Type, type Static, type TInteger, type TSchema } from "typebox";
import { GrantSort, namedPageQuery, ResourceSort } from "../../platform/http/lists.js";
import { Id, Metadata, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { Cwd, Description, Env, EnvOverlay, MachineMetadata, SecretEnv, SecretEnvOverlay } from "./schemas.js";
import { component } from "../../platform/http/components.js";

export const POOLS_TAG = "Machine pools";

const INT32_MAX = 2147483647;
const int = (minimum: number, description?: string) => Type.Integer({ minimum, maximum: INT32_MAX, ...(description ? { description } : {}) });
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const ProviderOptions = component(
  "MachineProviderOptions",
  Type.Record(Type.String(), Type.Unknown(), { description: "Provider-specific options; the provider says which it accepts." }),
);
const IdleMinutes = component("MachinePoolIdleMinutes", int(5, "Idle minutes before a pool machine is deleted; at least 5."));
/** A grant may also turn idle deletion off for its project with 0. */
const GrantIdleMinutes = component("MachinePoolGrantIdleMinutes", Type.Union([Type.Literal(0), IdleMinutes], { description: "0 turns idle deletion off for this project; otherwise at least 5." }));

type Limits<T> = Record<"max_total_cpu" | "max_total_memory_mb" | "min_machine_cpu" | "min_machine_memory_mb" | "max_machine_cpu" | "max_machine_memory_mb", T>;

/** Capacity limits of pools and of grants (which narrow their pool), each wrapped as the request needs. */
function limits<T extends TSchema>(wrap: (schema: TInteger) => T): Limits<T> {
  return {
    max_total_cpu: wrap(int(0)),
    max_total_memory_mb: wrap(int(0)),
    min_machine_cpu: wrap(int(0)),
    min_machine_memory_mb: wrap(int(0)),
    max_machine_cpu: wrap(int(1)),
    max_machine_memory_mb: wrap(int(1)),
  };
}

const poolSummaryFields = {
  id: Id("machinePool"),
  org_id: Id("org"),
  name: ResourceName,
  management_kind: Type.Enum(["tenant", "cluster"]),
  description: Type.String(),
  provider: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const MachinePoolSummary = component("MachinePoolSummary", Type.Object(poolSummaryFields, { additionalProperties: false }));

export const MachinePool = component("MachinePool", Type.Object(
  {
    ...poolSummaryFields,
    default_machine_cpu: nullable(int(1)),
    default_machine_memory_mb: nullable(int(1)),
    default_machine_env: Type.Record(Type.String(), Type.String()),
    default_machine_secret_env: Type.Record(Type.String(), Id("secret")),
    default_machine_provider_options: ProviderOptions,
    default_cwd: Type.String(),
    provider_auth_secret_id: Type.Optional(Id("secret")),
    provider_config: ProviderOptions,
    runtime_protection_enabled: Type.Boolean(),
    max_total_machines: int(0),
    ...limits(nullable),
    delete_after_idle_minutes: nullable(IdleMinutes),
    metadata: Metadata,
    usage: Type.Optional(
      Type.Object(
        { machines: Type.Integer({ minimum: 0 }), cpu: Type.Integer({ minimum: 0 }), memory_mb: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false, description: "Live machines of the pool and their size; given by the list." },
      ),
    ),
  },
  { additionalProperties: false },
));

export const CreateMachinePoolRequest = component("CreateMachinePoolRequest", Type.Object(
  {
    name: ResourceName,
    description: Type.Optional(Description),
    provider: Type.String({ minLength: 1, maxLength: 64, description: "Who runs the pool's machines; svc implements `local`." }),
    default_machine_cpu: Type.Optional(int(1)),
    default_machine_memory_mb: Type.Optional(int(1)),
    default_machine_env: Type.Optional(Env),
    default_machine_secret_env: Type.Optional(SecretEnv),
    default_machine_provider_options: Type.Optional(ProviderOptions),
    default_cwd: Type.Optional(Cwd),
    provider_config: Type.Optional(ProviderOptions),
    provider_auth_secret_id: Type.Optional(Id("secret")),
    runtime_protection_enabled: Type.Optional(Type.Boolean()),
    max_total_machines: int(0),
    ...limits(Type.Optional),
    delete_after_idle_minutes: Type.Optional(IdleMinutes),
    metadata: Type.Optional(MachineMetadata),
  },
  { additionalProperties: false },
));
export type CreateMachinePoolRequest = Static<typeof CreateMachinePoolRequest>;

export const UpdateMachinePoolRequest = component("UpdateMachinePoolRequest", Type.Object(
  {
    name: Type.Optional(ResourceName),
    description: Type.Optional(Description),
    default_machine_cpu: Type.Optional(nullable(int(1))),
    default_machine_memory_mb: Type.Optional(nullable(int(1))),
    default_machine_env: Type.Optional(Env),
    default_machine_secret_env: Type.Optional(SecretEnv),
    default_machine_provider_options: Type.Optional(ProviderOptions),
    default_cwd: Type.Optional(Cwd),
    provider_config: Type.Optional(ProviderOptions),
    provider_auth_secret_id: Type.Optional(Id("secret")),
    runtime_protection_enabled: Type.Optional(Type.Boolean()),
    max_total_machines: Type.Optional(int(0)),
    ...limits((schema) => Type.Optional(nullable(schema))),
    delete_after_idle_minutes: Type.Optional(nullable(IdleMinutes)),
    metadata: Type.Optional(MachineMetadata),
  },
  { additionalProperties: false },
));
export type UpdateMachinePoolRequest = Static<typeof UpdateMachinePoolRequest>;

export const PoolGrant = component("ProjectMachinePoolGrant", Type.Object(
  {
    id: Id("machinePoolGrant"),
    org_id: Id("org"),
    project_id: Id("project"),
    machine_pool_id: Id("machinePool"),
    description: Type.String(),
    default_machine_cpu: nullable(int(1)),
    default_machine_memory_mb: nullable(int(1)),
    default_machine_env_overlay: Type.Record(Type.String(), nullable(Type.String())),
    default_machine_secret_env_overlay: Type.Record(Type.String(), nullable(Id("secret"))),
    default_machine_provider_options_overlay: ProviderOptions,
    default_cwd: Type.String(),
    max_total_machines: nullable(int(0)),
    ...limits(nullable),
    delete_after_idle_minutes: nullable(GrantIdleMinutes),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
));

const grantOverrides = {
  description: Type.Optional(Description),
  default_machine_cpu: Type.Optional(nullable(int(1))),
  default_machine_memory_mb: Type.Optional(nullable(int(1))),
  default_machine_env_overlay: Type.Optional(EnvOverlay),
  default_machine_secret_env_overlay: Type.Optional(SecretEnvOverlay),
  default_machine_provider_options_overlay: Type.Optional(ProviderOptions),
  default_cwd: Type.Optional(Cwd),
  max_total_machines: Type.Optional(nullable(int(0))),
  ...limits((schema) => Type.Optional(nullable(schema))),
  delete_after_idle_minutes: Type.Optional(nullable(GrantIdleMinutes)),
  metadata: Type.Optional(Metadata),
};

export const CreatePoolGrantRequest = component("CreateProjectMachinePoolGrantRequest", Type.Object({ machine_pool_id: Id("machinePool"), ...grantOverrides }, { additionalProperties: false }));
export const UpdatePoolGrantRequest = component("UpdateProjectMachinePoolGrantRequest", Type.Object(grantOverrides, { additionalProperties: false, minProperties: 1 }));
/** A grant's overrides as submitted: absent keeps (or inherits), null clears back to the pool's value. */
export type PoolGrantOverrides = Static<typeof UpdatePoolGrantRequest>;

export const PoolGrantListItem = component("ProjectMachinePoolGrantListItem", Type.Object({ grant: PoolGrant, machine_pool: MachinePoolSummary }, { additionalProperties: false }));

export const ListPoolsQuery = Type.Object({ ...namedPageQuery, sort: Type.Optional(ResourceSort) }, { additionalProperties: false });
export const ListPoolGrantsQuery = Type.Object({ ...namedPageQuery, sort: Type.Optional(GrantSort) }, { additionalProperties: false });

export const PoolParams = Type.Object({ orgID: Id("org"), poolID: Id("machinePool") });
export const PoolGrantParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), poolGrantID: Id("machinePoolGrant") });
