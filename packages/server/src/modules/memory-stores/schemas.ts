import { Type } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { component } from "../../platform/http/components.js";
import { Id, Metadata, Timestamp } from "../../platform/http/schemas.js";

const strict = { additionalProperties: false } as const;

export const TAG = "Memory";

/** The largest file a store holds, in UTF-8 bytes. */
export const MAX_MEMORY_BYTES = 10 * 1024 * 1024;
/** A path's UTF-8 bytes at most. */
export const MAX_PATH_BYTES = 512;
/** Live files a store holds at most. */
export const MAX_MEMORIES_PER_STORE = 10_000;
/**
 * A PUT's whole body: JSON may spell each byte of the content as a six-character `\u00XX` escape, so the
 * largest file takes up to six times its size on the wire. Raised for that route only.
 */
export const PUT_MEMORY_BODY_LIMIT = 6 * MAX_MEMORY_BYTES + 64 * 1024;

const Digest = component("MemoryDigest", Type.String({ pattern: "^sha256:[0-9a-f]{64}$", description: "`sha256:` and the hex SHA-256 of the content's UTF-8 bytes." }));

/** A store's name is a path segment of the agents' memory mount: letters, digits, `.`, `_`, `-`; no leading dot. */
const StoreName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z0-9_-][A-Za-z0-9._-]*$",
  description: "1 to 64 of A-Z, a-z, 0-9, `.`, `_`, `-`, not starting with `.`; unique in the project.",
});
const Description = Type.String({ maxLength: 1024, description: "Shown to the agents that use the store." });

export const MemoryStore = component("MemoryStore", Type.Object(
  {
    id: Id("memoryStore"),
    org_id: Id("org"),
    project_id: Id("project"),
    name: StoreName,
    description: Description,
    writable: Type.Boolean({ description: "When false, every write and delete of the store's files is refused (409 file_read_only)." }),
    metadata: Metadata,
    memory_count: Type.Integer({ description: "Files in the store (deleted ones not counted)." }),
    size_bytes: Type.Integer({ description: "Total UTF-8 bytes of the store's files." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...strict, description: "A named store of text files (memories) in a project." },
));

export const CreateMemoryStoreRequest = component("CreateMemoryStoreRequest", Type.Object(
  {
    name: StoreName,
    description: Type.Optional(Description),
    writable: Type.Optional(Type.Boolean({ default: true })),
    metadata: Type.Optional(Metadata),
  },
  strict,
));

export const UpdateMemoryStoreRequest = component("UpdateMemoryStoreRequest", Type.Object(
  { description: Type.Optional(Description), writable: Type.Optional(Type.Boolean()), metadata: Type.Optional(Metadata) },
  { ...strict, description: "Members left out keep their value; metadata is replaced as a whole." },
));

export const ListMemoryStoresQuery = Type.Object(
  { name: Type.Optional(NameFilter), sort: Type.Optional(ResourceSort), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  strict,
);

export const MemoryStoreParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), memoryStoreID: Id("memoryStore") });

const memoryFields = {
  id: Id("memory"),
  memory_store_id: Id("memoryStore"),
  path: Type.String({ description: "Relative, `/`-separated, no empty, `.` or `..` segments; at most 512 bytes." }),
  digest: Digest,
  size_bytes: Type.Integer(),
  version: Type.Integer({ description: "The memory's latest version; starts at 1, each write or delete adds one." }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Memory = component("Memory", Type.Object(memoryFields, { ...strict, description: "A text file in a memory store, without its content." }));

export const MemoryWithContent = component("MemoryWithContent", Type.Object(
  { ...memoryFields, content: Type.String() },
  { ...strict, description: "A text file in a memory store with its content." },
));

export const PutMemoryRequest = component("PutMemoryRequest", Type.Object(
  {
    path: Type.String({ minLength: 1, description: "Relative, `/`-separated, no empty, `.` or `..` segments; at most 512 bytes." }),
    content: Type.String({ description: "UTF-8 text without NUL, at most 10 MiB; may be empty." }),
    expected_digest: Type.Optional(Digest),
  },
  { ...strict, description: "With expected_digest, the file's current digest must match it, else nothing changes (409 file_content_conflict)." },
));

export const ListMemoriesQuery = Type.Object(
  {
    path_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: "Only paths starting with this text." })),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: "Full-text search over path and content (web search syntax); ranks the results." }),
    ),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const MemoryParams = Type.Object({ ...MemoryStoreParams.properties, memoryID: Id("memory") });

const WrittenBy = component("MemoryWriter", Type.Object(
  {
    kind: Type.Enum(["user", "agent", "api_key"]),
    id: Type.String({ description: "A user id (usr_), agent id (agt_) or org API key id (oak_)." }),
  },
  { ...strict, description: "Who made a change: a user, an agent (through a tool call) or an org API key." },
));

const versionFields = {
  version: Type.Integer(),
  deleted: Type.Boolean({ description: "True for the version that deleted the file; it has no content or digest." }),
  digest: Type.Union([Digest, Type.Null()]),
  size_bytes: Type.Integer(),
  written_by: WrittenBy,
  agent_id: Type.Optional(Id("agent")),
  tool_call_id: Type.Optional(Id("toolCall")),
  created_at: Timestamp,
};

export const MemoryVersion = component("MemoryVersion", Type.Object(versionFields, { ...strict, description: "One immutable change of a memory, without its content." }));

export const MemoryVersionWithContent = component("MemoryVersionWithContent", Type.Object(
  { ...versionFields, content: Type.Union([Type.String(), Type.Null()]) },
  { ...strict, description: "One immutable change of a memory with the content it wrote (null for a delete)." },
));

export const ListMemoryVersionsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, strict);

export const MemoryVersionParams = Type.Object({ ...MemoryParams.properties, version: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
