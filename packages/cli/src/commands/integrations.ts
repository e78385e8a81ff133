import type { Command } from "commander";
import { unwrap } from "@svc/sdk";
import { context, table } from "../context.js";
import { listAll, pageQuery } from "../lists.js";
import { projectPath } from "./agents.js";
import { limitOption } from "./options.js";

/** Read-only views: integrations are set up in the console or the API (docs/integrations.md), schedules through the API (docs/schedules.md). */
export function integrationCommands(program: Command): void {
  const integrations = program.command("integrations").description("Slack, Discord and GitHub connections of the projects (read-only)");
  integrations
    .command("list")
    .description("the integrations of every project of the organization you can read")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/integrations", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((i) => [i.id, i.name, i.integration_kind, i.state, i.project_id])));
    });
  integrations
    .command("get <integration>")
    .description("one integration of the project: settings, provider config and capabilities")
    .action(async (integrationID: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const found = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/integrations/{integrationID}", { params: { path: { ...(await projectPath(ctx)), integrationID } } }));
      ctx.print(found, () => JSON.stringify(found, null, 2));
    });

  const schedules = program.command("schedules").description("the project's cron triggers (read-only)");
  schedules
    .command("list", { isDefault: true })
    .description("the project's schedules, with their next firing")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/cron-triggers", { params: { path, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((t) => [t.id, t.name, `${t.cron} ${t.timezone}`, t.enabled ? `next ${t.next_fire_at ?? "-"}` : "disabled", t.failure_report ? "last firing failed" : ""])));
    });
}
