import { InvalidArgumentError, type Command } from "commander";
import { unwrap, type components } from "@svc/sdk";
import { context, table, UsageError, type Context } from "../context.js";
import { grantFor, listAll, pageQuery } from "../lists.js";
import { projectPath } from "./agents.js";
import { idOfProvider, idOfSecret } from "../names.js";
import { visible } from "../output.js";
import { limitOption } from "./options.js";
import { parseCount } from "./orgs.js";

type ProviderRequest = components["schemas"]["CreateModelProviderConfigRequest"];
const PRESETS = ["openai", "openrouter", "anthropic"] as const;
const FORMATS = ["openai-responses", "openai-chat-completions", "anthropic-messages"] as const;
const VARIANTS = ["default", "openrouter", "bedrock"] as const;

export function modelCommands(program: Command): void {
  providerCommands(program);
  const models = program.command("models").description("configured models, and the ones granted to the project (the names agent configs use)");
  models
    .command("list", { isDefault: true })
    .description("the models granted to the project, or with --provider the models configured on that provider")
    .option("--provider <provider>", "a model provider config (its id or name)")
    .option(...limitOption)
    .action(async (options: { provider?: string; limit: number }, command: Command) => {
      const ctx = await context(command);
      if (options.provider) return listConfigured(ctx, await idOfProvider(ctx, options.provider), options.limit);
      const path = await projectPath(ctx);
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((i) => [i.model.provider_config, i.model.name, i.model.id])));
    });
  models
    .command("create <provider> <name>")
    .description("name one of the provider's models for agent configs (`model: {provider_config, name}`)")
    .requiredOption("--slug <model>", "the model's id at the provider (gpt-4.1, claude-sonnet-4-5, …)")
    .requiredOption("--context-window <tokens>", "input and output tokens together", parseCount)
    .option("--max-output <tokens>", "the output ceiling (default: the smaller of 8192 and half the window)", parseCount)
    .option("--no-tools", "the model takes no tool definitions")
    .option("--reasoning", "use the model's reasoning features")
    .action(async (provider: string, name: string, options: { slug: string; contextWindow: number; maxOutput?: number; tools: boolean; reasoning?: boolean }, command: Command) => {
      const ctx = await context(command);
      const path = { orgID: await ctx.org(), modelProviderConfigID: await idOfProvider(ctx, provider) };
      const body = { name, provider_model_slug: options.slug, context_window_tokens: options.contextWindow, supports_tools: options.tools, supports_reasoning: options.reasoning === true, ...(options.maxOutput ? { max_output_tokens: options.maxOutput } : {}) };
      const model = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path }, body }));
      ctx.print(model, () => model.id);
    });
  models
    .command("delete <provider> <model>")
    .description("delete a configured model (agents that use it stop finding it)")
    .action(async (provider: string, configuredModelID: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = { orgID: await ctx.org(), modelProviderConfigID: await idOfProvider(ctx, provider), configuredModelID };
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models/{configuredModelID}", { params: { path } }));
      ctx.print({ deleted: configuredModelID }, () => "Deleted.");
    });
  models
    .command("grant <model>")
    .description("let the project (the current one, or --project) use a configured model (mdl_…)")
    .action(async (model: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const granted = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path: await projectPath(ctx) }, body: { configured_model_id: model } }));
      ctx.print(granted, () => `Granted ${model} to ${granted.grant.project_id} (${granted.grant.id}).`);
    });
  models
    .command("revoke <model>")
    .description("take a model back from the project (the model's id, or the grant's)")
    .action(async (model: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const item = await grantFor((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path, query: pageQuery(cursor) } })), (i) => i.grant.configured_model_id === model || i.grant.id === model, model);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants/{modelGrantID}", { params: { path: { ...path, modelGrantID: item.grant.id } } }));
      ctx.print({ revoked: item.grant.id }, () => `Revoked ${visible(item.model.name)} from ${path.projectID}.`);
    });
}

function providerCommands(program: Command): void {
  const providers = program.command("providers").alias("model-providers").description("model provider configs: where the organization's models are, and the key svc calls them with");
  providers
    .command("list")
    .description("the organization's model provider configs")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((p) => [p.id, p.name, p.api_format, p.base_url])));
    });
  providers
    .command("create <name>")
    .description("connect a model API: a --preset, or --format and --base-url; the API key is an org-owned generic secret (`svc secrets create`)")
    .requiredOption("--secret <secret>", "the secret (its id or name) whose value is the API key")
    .option("--preset <preset>", PRESETS.join(", "), choice(PRESETS))
    .option("--format <format>", FORMATS.join(", "), choice(FORMATS))
    .option("--base-url <url>", "the API's base address (e.g. http://localhost:11434/v1)")
    .option("--variant <variant>", VARIANTS.join(", "), choice(VARIANTS))
    .option("--endpoint-path <path>", "the path under the base URL model calls go to (default by format)")
    .option("--header <name>", "send the key in this header instead of `Authorization: Bearer`")
    .action(async (name: string, options: ProviderOptions, command: Command) => {
      const ctx = await context(command);
      if (!options.preset && !(options.format && options.baseUrl)) throw new UsageError("give --preset, or --format and --base-url");
      const created = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: await ctx.org() } }, body: providerBody(name, { ...options, secret: await idOfSecret(ctx, options.secret) }) }));
      ctx.print(created, () => created.config.id);
    });
  providers
    .command("get <provider>")
    .description("one model provider config (its id or name)")
    .action(async (provider: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = { orgID: await ctx.org(), modelProviderConfigID: await idOfProvider(ctx, provider) };
      const found = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}", { params: { path } }));
      ctx.print(found, () => JSON.stringify(found, null, 2));
    });
  providers
    .command("delete <provider>")
    .description("delete a model provider config (its id or name)")
    .action(async (provider: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = { orgID: await ctx.org(), modelProviderConfigID: await idOfProvider(ctx, provider) };
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}", { params: { path } }));
      ctx.print({ deleted: path.modelProviderConfigID }, () => "Deleted.");
    });
}

interface ProviderOptions {
  secret: string;
  preset?: (typeof PRESETS)[number];
  format?: (typeof FORMATS)[number];
  baseUrl?: string;
  variant?: (typeof VARIANTS)[number];
  endpointPath?: string;
  header?: string;
}

function providerBody(name: string, o: ProviderOptions): ProviderRequest {
  return {
    name,
    credential_secret_id: o.secret,
    ...(o.preset ? { preset: o.preset } : {}),
    ...(o.format ? { api_format: o.format } : {}),
    ...(o.baseUrl ? { base_url: o.baseUrl } : {}),
    ...(o.variant ? { api_variant: o.variant } : {}),
    ...(o.endpointPath ? { endpoint_path: o.endpointPath } : {}),
    ...(o.header ? { auth_kind: "api_key_header" as const, auth_options: { header_name: o.header } } : {}),
  };
}

async function listConfigured(ctx: Context, modelProviderConfigID: string, limit: number): Promise<void> {
  const path = { orgID: await ctx.org(), modelProviderConfigID };
  const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/model-provider-configs/{modelProviderConfigID}/models", { params: { path, query: pageQuery(cursor) } })), limit);
  ctx.print(items, () => table(items.map((m) => [m.id, m.name, m.provider_model_slug])));
}

function choice<T extends string>(values: readonly T[]): (value: string) => T {
  return (value) => {
    const found = values.find((v) => v === value);
    if (!found) throw new InvalidArgumentError(values.join(", "));
    return found;
  };
}
