import { Type, type Static } from "typebox";
import { pageQuery } from "../../platform/http/lists.js";
import { Id } from "../../platform/http/schemas.js";
import { Tagged } from "../secrets/schemas.js";
import { component } from "../../platform/http/components.js";

export { TAG } from "../agent-configs/schemas.js";

const strict = { additionalProperties: false } as const;
const OpenObject = Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true });

export const McpServerAuth = component("MCPServerAuth", Tagged(
  "type",
  {
    none: Type.Object({ type: Type.Literal("none") }, strict),
    bearer: Type.Object({ type: Type.Literal("bearer"), secret_id: Id("secret") }, strict),
    oauth: Type.Object({ type: Type.Literal("oauth"), secret_id: Id("secret") }, strict),
  },
  "How svc authenticates to the server, as an agent config's `mcp.<key>.auth` says it: `none`; `bearer` with a generic " +
    "secret the project owns or was granted, whose value is sent as the bearer token; or `oauth` with an oauth_token_set " +
    "secret (POST /orgs/{orgID}/secrets/mcp-oauth), whose access token is sent and refreshed when near expiry.",
));

export const McpServerToolsRequest = component("MCPServerToolsRequest", Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, format: "uri", description: "The server's Streamable HTTP endpoint (http or https, no credentials in it)." }),
    auth: McpServerAuth,
  },
  strict,
));
export type McpServerToolsRequest = Static<typeof McpServerToolsRequest>;

const McpServerInfo = component("MCPServerInfo", Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    website_url: Type.Optional(Type.String()),
  },
  strict,
));

const McpServerToolAnnotations = component("MCPServerToolAnnotations", Type.Object(
  {
    title: Type.Optional(Type.String()),
    read_only_hint: Type.Optional(Type.Boolean()),
    destructive_hint: Type.Optional(Type.Boolean()),
    idempotent_hint: Type.Optional(Type.Boolean()),
    open_world_hint: Type.Optional(Type.Boolean()),
  },
  strict,
));

const McpServerTool = component("MCPServerTool", Type.Object(
  {
    name: Type.String({ description: "The tool's name on the server; an agent config names it under `mcp.<key>.tools.<name>`." }),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    input_schema: OpenObject,
    output_schema: Type.Optional(OpenObject),
    annotations: Type.Optional(McpServerToolAnnotations),
  },
  strict,
));

export const McpServerToolsResponse = component("MCPServerToolsResponse", Type.Object(
  {
    protocol_version: Type.String({ description: "The MCP protocol version the server agreed to." }),
    server_info: McpServerInfo,
    tools: Type.Array(McpServerTool),
  },
  strict,
));
export type McpServerToolsResponse = Static<typeof McpServerToolsResponse>;

export const McpServerAuthHint = component("MCPServerAuthHint", Type.Object(
  {
    type: Type.Union([Type.Literal("oauth"), Type.Literal("bearer")], {
      description: "`oauth` when the server advertises an OAuth authorization server (MCP authorization); `bearer` when it asks for a token without OAuth metadata.",
    }),
    scopes: Type.Optional(Type.Array(Type.String())),
    authorization_server: Type.Optional(Type.String()),
  },
  strict,
));
export type McpServerAuthHint = Static<typeof McpServerAuthHint>;

export const McpServerToolsError = component("MCPServerToolsError", Type.Object(
  {
    error: Type.String(),
    code: Type.Literal("unprocessable"),
    auth: Type.Optional(McpServerAuthHint),
  },
  { ...strict, description: "The server answered, but not with tools: `auth` says what it expects when it refused the authentication (HTTP 401 or 403)." },
));

const McpRegistryHeader = component("MCPRegistryHeader", Type.Object(
  { name: Type.String(), description: Type.Optional(Type.String()), is_required: Type.Boolean(), is_secret: Type.Boolean() },
  strict,
));

const McpRegistryRemote = component("MCPRegistryRemote", Type.Object(
  {
    type: Type.String({ description: "Always `streamable-http`: the snapshot keeps no other transport." }),
    url: Type.String(),
    headers: Type.Optional(Type.Array(McpRegistryHeader)),
  },
  strict,
));

const McpRegistryIcon = component("MCPRegistryIcon", Type.Object(
  {
    src: Type.String({ description: "Absolute https URL of the icon." }),
    mime_type: Type.Optional(Type.String()),
    sizes: Type.Optional(Type.Array(Type.String())),
    theme: Type.Optional(Type.String()),
  },
  strict,
));

export const McpRegistryServer = component("MCPRegistryServer", Type.Object(
  {
    name: Type.String({ description: "The registry's reverse-DNS name, such as `io.github.owner/server`." }),
    title: Type.Optional(Type.String()),
    description: Type.String(),
    version: Type.String(),
    website_url: Type.Optional(Type.String()),
    status: Type.String(),
    updated_at: Type.String({ format: "date-time" }),
    remotes: Type.Array(McpRegistryRemote),
    icons: Type.Array(McpRegistryIcon),
  },
  strict,
));

export const ListMcpServersQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Words that must each begin a word of the server's name, title, description or a remote URL; results are ranked by where they match.",
      }),
    ),
    remote_url: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: "Only servers with a remote at this URL, compared without scheme, case or trailing slashes (`MCP.linear.app/mcp/` finds `https://mcp.linear.app/mcp`).",
      }),
    ),
    ...pageQuery,
  },
  strict,
);
