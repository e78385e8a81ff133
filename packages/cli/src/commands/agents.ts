import type { Command } from "commander";
import { collect, paginate, unwrap } from "@svc/sdk";
import { context, table, UsageError, type Context } from "../context.js";
import { createConfig } from "./configs.js";
import { parseCount } from "./orgs.js";
import { idOfAgent } from "../names.js";

export function agentCommands(program: Command): void {
  const agents = program.command("agents").description("launch and manage agents (name one by its id or its name)");
  agents
    .command("launch")
    .description("launch an agent from a config id, a config file or a profile")
    .option("--config <id>", "an agent config id (acfg_…)")
    .option("-f, --file <path>", "a config file, compiled first (as `svc configs create -f`)")
    .option("--profile <id>", "an agent profile id")
    .option("--name <name>", "the agent's name")
    .option("-m, --message <text>", "an opening message")
    .action(async (options: { config?: string; file?: string; profile?: string; name?: string; message?: string }, command: Command) => {
      const ctx = await context(command);
      const given = [options.config, options.file, options.profile].filter((v) => v !== undefined).length;
      if (given !== 1) throw new UsageError("give exactly one of --config, --file and --profile");
      const config = options.file ? (await createConfig(ctx, options.file)).id : options.config;
      const body = {
        ...(config ? { config } : {}),
        ...(options.profile ? { profile: options.profile } : {}),
        ...(options.name ? { name: options.name } : {}),
        ...(options.message ? { message: options.message } : {}),
      };
      const launched = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: await projectPath(ctx) }, body }));
      ctx.print(launched, () => launched.agent.id);
    });
  agents
    .command("list")
    .description("the project's agents")
    .option("--limit <n>", "at most this many", parseCount, 100)
    .option("--parent <agent>", "only the delegates this coordinator launched (its id or name; docs/delegation.md)")
    .action(async (options: { limit: number; parent?: string }, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const parent = options.parent === undefined ? {} : { parent_agent_id: await idOfAgent(ctx, options.parent) };
      const items = await collect(
        paginate((cursor) =>
          unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path, query: { limit: 100, ...parent, ...(cursor ? { cursor } : {}) } } })),
        ),
        options.limit,
      );
      ctx.print(items, () => table(items.map((a) => [a.id, a.name, a.state, `${a.model.provider_config}/${a.model.name}`])));
    });
  agents
    .command("get <agent>")
    .description("one agent")
    .action(async (agent: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await agentPath(ctx, agent);
      const found = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path } }));
      ctx.print(found, () => table(Object.entries(found.agent).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])));
    });
  agents
    .command("send <agent> <text...>")
    .description("send the agent a message")
    .option("--steer", "join the current turn at its next model call instead of waiting for it to end")
    .action(async (agent: string, words: string[], options: { steer?: boolean }, command: Command) => {
      const ctx = await context(command);
      const path = await agentPath(ctx, agent);
      const body = { content_blocks: [{ type: "text" as const, text: words.join(" ") }], delivery_mode: options.steer ? ("steering" as const) : ("queued" as const) };
      const sent = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs", { params: { path }, body }));
      ctx.print(sent, () => sent.agent_input.id);
    });
  agents
    .command("cancel <agent>")
    .description("cancel what the agent is doing")
    .action(async (agent: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await agentPath(ctx, agent);
      const canceled = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/cancel", { params: { path }, body: {} }));
      ctx.print(canceled, () => (canceled.affected ? "Canceled." : "Nothing to cancel."));
    });
  agents
    .command("archive <agent>")
    .description("archive the agent: it takes no more input")
    .action(async (agent: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await agentPath(ctx, agent);
      const archived = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/archive", { params: { path } }));
      ctx.print(archived, () => "Archived.");
    });
}

export async function projectPath(ctx: Context): Promise<{ orgID: string; projectID: string }> {
  return { orgID: await ctx.org(), projectID: await ctx.project() };
}

/** The path of an agent of the project, named by its id or its name. */
export async function agentPath(ctx: Context, agent: string): Promise<{ orgID: string; projectID: string; agentID: string }> {
  return { ...(await projectPath(ctx)), agentID: await idOfAgent(ctx, agent) };
}
