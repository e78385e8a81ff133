import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { Command } from "commander";
import { SvcError, unwrap, type components } from "@svc/sdk";
import { context, type Context } from "../context.js";
import { visible } from "../output.js";

type AgentConfig = components["schemas"]["AgentConfig"];

export function configCommands(program: Command): void {
  const configs = program.command("configs").description("agent configs (docs/agent-configs.md)");
  configs
    .command("create")
    .description("compile a config file into an immutable agent config; problems are shown at their line and column")
    .requiredOption("-f, --file <path>", "the config document (.yaml, .yml or .json)")
    .action(async (options: { file: string }, command: Command) => {
      const ctx = await context(command);
      const config = await createConfig(ctx, options.file);
      ctx.print(config, () => config.id);
    });
  configs
    .command("get <config>")
    .description("one agent config")
    .action(async (id: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = { orgID: await ctx.org(), projectID: await ctx.project(), agentConfigID: id };
      const config = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs/{agentConfigID}", { params: { path } }));
      ctx.print(config, () => JSON.stringify(config, null, 2));
    });
}

/** Sends the file's text as is, so the server's line and column point into the file the user has open. */
export async function createConfig(ctx: Context, file: string): Promise<AgentConfig> {
  const source = await readFile(file, "utf8");
  const path = { orgID: await ctx.org(), projectID: await ctx.project() };
  const format = extname(file).toLowerCase() === ".json" ? "json" : "yaml";
  try {
    return await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs", { params: { path }, body: { source, source_format: format } }));
  } catch (err) {
    if (err instanceof SvcError && err.issues.length > 0) throw new FileIssues(file, err);
    throw err;
  }
}

/** A rejected document: printed as `file:line:column: message (path)`, one line per issue, like a compiler. */
export class FileIssues extends Error {
  constructor(
    readonly file: string,
    readonly error: SvcError,
  ) {
    super(error.issues.map((i) => `${file}${i.line ? `:${i.line}` : ""}${i.column ? `:${i.column}` : ""}: ${visible(i.message)}${i.path ? ` (${visible(i.path)})` : ""}`).join("\n"));
  }
}
