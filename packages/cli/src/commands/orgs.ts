import { InvalidArgumentError, type Command } from "commander";
import { collect, paginate, unwrap } from "@svc/sdk";
import { context, table } from "../context.js";
import { writeCredentials } from "../credentials.js";
import { visible } from "../output.js";

export function orgCommands(program: Command): void {
  const orgs = program.command("orgs").description("organizations");
  orgs
    .command("list")
    .description("the organizations you belong to")
    .action(async (_o: unknown, command: Command) => {
      const ctx = await context(command);
      const me = await unwrap(ctx.client().GET("/api/v1/me"));
      ctx.print(me.orgs, () => table(me.orgs.map((o) => [o.id, o.name, o.role])));
    });
  orgs
    .command("create <name>")
    .description("create an organization (with its default project)")
    .action(async (name: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const created = await unwrap(ctx.client().POST("/api/v1/orgs", { body: { name } }));
      ctx.print(created, () => `${created.org.id}  ${visible(created.org.name)} (project ${created.project.id})`);
    });
  orgs
    .command("use <org>")
    .description("make commands use this organization when --org is not given")
    .action(async (org: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}", { params: { path: { orgID: org } } }));
      const { project: _project, ...rest } = ctx.own;
      await writeCredentials({ ...rest, url: ctx.url, org });
      ctx.print({ org }, () => `Using organization ${org}.`);
    });

  const projects = program.command("projects").description("projects of an organization");
  projects
    .command("list")
    .description("the projects you can see")
    .option("--limit <n>", "at most this many", parseCount, 100)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await collect(
        paginate((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
        options.limit,
      );
      ctx.print(items, () => table(items.map((p) => [p.id, p.name])));
    });
  projects
    .command("create <name>")
    .description("create a project")
    .action(async (name: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const created = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: await ctx.org() } }, body: { name } }));
      ctx.print(created, () => `${created.id}  ${visible(created.name)}`);
    });
  projects
    .command("use <project>")
    .description("make commands use this project when --project is not given")
    .action(async (project: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const org = await ctx.org();
      await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}", { params: { path: { orgID: org, projectID: project } } }));
      await writeCredentials({ ...ctx.own, url: ctx.url, org, project });
      ctx.print({ org, project }, () => `Using project ${project}.`);
    });
}

export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`not a positive whole number: ${value}`);
  return n;
}
