import { MAX_QUALIFIED_NAME, mcpToolName, type McpServerDefinition, type PermissionMode } from "../../runtime/definition.js";
import { MCP_TOOL_PERMISSIONS } from "../../runtime/tools/catalog.js";
import { decodeId } from "../../platform/ids.js";
import { describe, has, isObject, readPermission, unknownKeys, type Obj, type Path } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * The `mcp` section: MCP servers by key, each reached over Streamable HTTP, whose tools the model sees as
 * `mcp__<key>__<tool>`. Keys may not contain `__` or end in `_`, so a qualified tool name has one reading.
 * Secrets are named here and checked against the project when the config is compiled.
 */

/** A server as written, with its bearer secret still a public id. */
export interface McpServerChoice extends Omit<McpServerDefinition, "auth"> {
  key: string;
  auth: { type: "none" } | { type: "bearer" | "oauth"; secretId: string; publicSecretId: string };
}

const SERVER_KEYS = ["url", "auth", "permission", "tools"];
const SERVER_KEY = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;
const MAX_SERVER_KEY = 32;
const MAX_SERVERS = 16;
const MAX_URL = 2048;
const MCP_TOOL_NAME = /^[A-Za-z0-9_-]+$/;

export function readMcpSection(issues: ConfigIssues, value: unknown): McpServerChoice[] {
  if (!isObject(value)) {
    issues.add(["mcp"], `must be an object from server keys to {url, ...}; got ${describe(value)}`);
    return [];
  }
  const keys = Object.keys(value);
  if (keys.length > MAX_SERVERS) issues.add(["mcp"], `at most ${MAX_SERVERS} MCP servers; got ${keys.length}`);
  const servers: McpServerChoice[] = [];
  for (const key of keys) {
    const server = readServer(issues, key, value[key]);
    if (server) servers.push(server);
  }
  return servers;
}

function readServer(issues: ConfigIssues, key: string, value: unknown): McpServerChoice | undefined {
  const path = ["mcp", key];
  if (key.length > MAX_SERVER_KEY || !SERVER_KEY.test(key)) {
    issues.addAtKey(path, `server keys are 1 to ${MAX_SERVER_KEY} letters and digits, with single - or _ between them`);
    return undefined;
  }
  if (!isObject(value)) {
    issues.add(path, `must be an object with the server's url; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, SERVER_KEYS);
  const url = readUrl(issues, [...path, "url"], value);
  const auth = has(value, "auth") ? readAuth(issues, [...path, "auth"], value["auth"]) : { type: "none" as const };
  const permission = readPermission(issues, path, value, MCP_TOOL_PERMISSIONS);
  const toolPermissions = has(value, "tools") ? readToolPermissions(issues, key, value["tools"]) : {};
  if (issues.count !== before || url === undefined || auth === undefined) return undefined;
  return { key, url, auth, permission, toolPermissions };
}

function readUrl(issues: ConfigIssues, path: Path, server: Obj): string | undefined {
  if (!has(server, "url")) {
    issues.add(path, "is required: the server's Streamable HTTP endpoint, such as https://mcp.example.com/mcp");
    return undefined;
  }
  const value = server["url"];
  if (typeof value !== "string" || value.length > MAX_URL) {
    issues.add(path, `must be an http(s) URL of at most ${MAX_URL} characters; got ${describe(value)}`);
    return undefined;
  }
  const problem = mcpUrlProblem(value);
  if (problem === undefined) return value;
  issues.add(path, problem);
  return undefined;
}

/** Why `value` cannot be an MCP server's URL, or undefined: it must be http(s) and carry no credentials. */
export function mcpUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `is not a URL; got ${describe(value)}`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `must use https (or http); got ${url.protocol}`;
  if (url.username || url.password) return "must not carry credentials; use auth with a secret";
  return undefined;
}

function readAuth(issues: ConfigIssues, path: Path, value: unknown): McpServerChoice["auth"] | undefined {
  if (!isObject(value)) {
    issues.add(path, `must be an object such as {type: bearer, secret_id: sec_…}; got ${describe(value)}`);
    return undefined;
  }
  const type = value["type"];
  if (type === "none") {
    unknownKeys(issues, path, value, ["type"]);
    return { type: "none" };
  }
  if (type === "sigv4") {
    issues.add([...path, "type"], "sigv4 authentication for MCP servers is not supported yet; use none, bearer or oauth");
    return undefined;
  }
  if (type !== "bearer" && type !== "oauth") {
    issues.add([...path, "type"], `must be one of: none, bearer, oauth; got ${describe(type)}`);
    return undefined;
  }
  unknownKeys(issues, path, value, ["type", "secret_id"]);
  const publicSecretId = value["secret_id"];
  const secretId = typeof publicSecretId === "string" ? decodeId("secret", publicSecretId) : null;
  const holds = type === "bearer" ? "a generic secret of the project whose value is the bearer token" : "an oauth_token_set secret of the project (POST /orgs/{orgID}/secrets/mcp-oauth)";
  if (!has(value, "secret_id")) issues.add([...path, "secret_id"], `is required: ${holds}`);
  else if (secretId === null) issues.add([...path, "secret_id"], `must be a secret id (sec_…); got ${describe(publicSecretId)}`);
  else return { type, secretId, publicSecretId: publicSecretId as string };
  return undefined;
}

function readToolPermissions(issues: ConfigIssues, key: string, value: unknown): Record<string, PermissionMode> {
  const path = ["mcp", key, "tools"];
  if (!isObject(value)) {
    issues.add(path, `must be an object from the server's tool names to {permission: {mode}}; got ${describe(value)}`);
    return {};
  }
  const permissions: Record<string, PermissionMode> = {};
  for (const [name, tool] of Object.entries(value)) {
    const toolPath = [...path, name];
    if (!MCP_TOOL_NAME.test(name) || mcpToolName(key, name).length > MAX_QUALIFIED_NAME) {
      issues.addAtKey(toolPath, `MCP tool names are letters, digits, _ or -, and mcp__${key}__<tool> is at most ${MAX_QUALIFIED_NAME} characters`);
      continue;
    }
    if (!isObject(tool)) {
      issues.add(toolPath, `must be an object such as {permission: {mode: always_allow}}; got ${describe(tool)}`);
      continue;
    }
    unknownKeys(issues, toolPath, tool, ["permission"]);
    if (!has(tool, "permission")) issues.add([...toolPath, "permission"], "is required: the mode for this tool, overriding the server's");
    else permissions[name] = readPermission(issues, toolPath, tool, MCP_TOOL_PERMISSIONS);
  }
  return permissions;
}
