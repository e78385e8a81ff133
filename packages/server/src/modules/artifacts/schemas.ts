import { Type, type Static } from "typebox";
import { Id, Metadata, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;
export const TAG = "Artifacts";

/** The media types an inline media block may carry: exactly the reference's list. */
export const MEDIA_TYPES = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "application/pdf",
  "text/plain",
  "text/markdown",
  "text/csv",
  "text/tab-separated-values",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
] as const;

export type MediaType = (typeof MEDIA_TYPES)[number];

/*
 * Content blocks, composed by the routes that accept or return them (inputs, tool results, events).
 * Submissions use text, media and structured_data; what is read back has media_ref in place of media.
 */

export const ContentBlockMetadata = Metadata;
const metadata = { metadata: Type.Optional(ContentBlockMetadata) };

export const TextContentBlock = component("TextContentBlock", Type.Object({ type: Type.Literal("text"), text: Type.String(), ...metadata }, strict));

export const InlineMediaContentBlock = component("InlineMediaContentBlock", Type.Object(
  {
    type: Type.Literal("media"),
    media_type: Type.Enum([...MEDIA_TYPES]),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
    // `contentEncoding` documents base64 (the OpenAPI document shows it as `format: byte`) without the
    // validator checking it: ajv-formats' `byte` regex overflows the stack on multi-megabyte strings.
    // The service checks base64 strictly instead (content.ts).
    data: Type.String({
      minLength: 1,
      contentEncoding: "base64",
      description: "The file's bytes in base64 (RFC 4648 standard alphabet, padded, no whitespace); at most 10 MiB decoded.",
    }),
    ...metadata,
  },
  { ...strict, description: "Accepted on submission; stored as an artifact and read back as a media_ref block." },
));

export const StructuredDataContentBlock = component("StructuredDataContentBlock", Type.Object(
  { type: Type.Literal("structured_data"), value: Type.Unknown({ description: "Any JSON value." }), ...metadata },
  strict,
));

export const MediaRefContentBlock = component("MediaRefContentBlock", Type.Object(
  {
    type: Type.Literal("media_ref"),
    artifact_id: Id("artifact"),
    exclude_from_model_context: Type.Optional(Type.Boolean()),
    ...metadata,
  },
  { ...strict, description: "A file stored as an artifact; its bytes are at .../artifacts/{artifact_id}/content." },
));

export type TextBlock = Static<typeof TextContentBlock>;
export type InlineMediaBlock = Static<typeof InlineMediaContentBlock>;
export type StructuredDataBlock = Static<typeof StructuredDataContentBlock>;
export type MediaRefBlock = Static<typeof MediaRefContentBlock>;

export const Artifact = component("Artifact", Type.Object(
  {
    id: Id("artifact"),
    org_id: Id("org"),
    project_id: Id("project"),
    agent_id: Id("agent"),
    content_type: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
    digest: Type.Optional(Type.String({ pattern: "^sha256:[0-9a-f]{64}$", description: "`sha256:` and the hex SHA-256 of the bytes." })),
    size_bytes: Type.Optional(Type.Integer({ minimum: 0 })),
    created_at: Timestamp,
  },
  strict,
));

export const ArtifactParams = Type.Object(
  { orgID: Id("org"), projectID: Id("project"), agentID: Id("agent"), artifactID: Id("artifact") },
  strict,
);
