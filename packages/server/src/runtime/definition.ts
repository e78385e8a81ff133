/**
 * A compiled agent config: what the worker needs to run a model step, resolved once when the config is
 * created and stored immutably with it. The source stays beside it for people; this is for the loop.
 */

export type PermissionMode = "always_allow" | "always_ask" | "always_deny";
export type ToolType = "built_in" | "custom" | "mcp";

export interface ToolDefinition {
  name: string;
  type: ToolType;
  description: string;
  /** A closed JSON Schema object (`{"type":"object", ...}`). */
  inputSchema: Record<string, unknown>;
  permission: PermissionMode;
}

export interface ModelBinding {
  modelProviderConfigId: string;
  providerConfigName: string;
  configuredModelId: string;
  configuredModelRevisionId: string;
  /** The configured model's name, as written in the config. */
  name: string;
  apiFormat: "openai-responses" | "openai-chat-completions" | "anthropic-messages";
  providerModelSlug: string;
  contextWindowTokens: number;
  maxOutputTokens: number;
  cacheRetention: "none" | "short" | "long";
  supportsReasoning: boolean;
  /** Empty when the model does not reason or the config leaves it to the model's default. */
  reasoningEffort: string;
}

export interface AgentDefinition {
  version: "v1";
  instruction: string;
  model: ModelBinding;
  /** Enabled tools only, sorted by name. */
  tools: ToolDefinition[];
  mcp: Record<string, unknown>;
  machineSources: unknown[];
  skills: string[];
}
