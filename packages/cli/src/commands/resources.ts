import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { SvcError, svcdInstallCommand, unwrap } from "@svc/sdk";
import { context, table } from "../context.js";
import { grantFor, listAll, pageQuery } from "../lists.js";
import { idOfMachine, idOfSkill } from "../names.js";
import { visible } from "../output.js";
import { projectPath } from "./agents.js";
import { integrationCommands } from "./integrations.js";
import { modelCommands } from "./models.js";
import { limitOption, ownerKind, ownerOf, type OwnerKind } from "./options.js";
import { secretCommands } from "./secrets.js";

export function resourceCommands(program: Command): void {
  secretCommands(program);
  modelCommands(program);
  machineCommands(program);
  skillCommands(program);
  integrationCommands(program);
}

function machineCommands(program: Command): void {
  const machines = program.command("machines").description("machines agents run commands on (name one by its id or its name)");
  machines
    .command("list")
    .description("the organization's machines you can see")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((m) => [m.id, m.display_name, m.connection_state])));
    });
  machines
    .command("connect <name>")
    .description("register this computer (granted to the project) and print the one command that installs svcd on it")
    .option("--cwd <dir>", "where its commands run (default: this directory)")
    .action(async (name: string, options: { cwd?: string }, command: Command) => {
      const ctx = await context(command);
      const { orgID, projectID } = await projectPath(ctx);
      const body = { display_name: name, cwd: resolve(options.cwd ?? process.cwd()), project_ids: [projectID] };
      const connected = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/machines/connect", { params: { path: { orgID } }, body }));
      // The token goes in the environment of the installer's shell, never in an argument (docs/machines.md).
      const run = svcdInstallCommand(ctx.url, connected.token);
      const said = `Machine ${connected.machine.id} is ready. Run this on it to install svcd (Node.js ^20.19 || >=22.12; the token is shown only now):\n\n  ${run}\n`;
      ctx.print({ ...connected, command: run }, () => said);
    });
  machineGrantCommands(machines);
}

function machineGrantCommands(machines: Command): void {
  machines
    .command("grant <machine>")
    .description("let the project (the current one, or --project) run commands on a machine (its id or name)")
    .action(async (machine: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const body = { machine_id: await idOfMachine(ctx, machine) };
      const granted = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants", { params: { path: await projectPath(ctx) }, body }));
      ctx.print(granted, () => `Granted ${visible(granted.machine.display_name)} to ${granted.grant.project_id} (${granted.grant.id}).`);
    });
  machines
    .command("revoke <machine>")
    .description("take a machine back from the project (the machine's id or name, or the grant's id)")
    .action(async (machine: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const grantID = /^pmg_[a-z2-7]{26}$/.test(machine) ? machine : undefined;
      const machineID = grantID ? undefined : await idOfMachine(ctx, machine);
      const matches = (i: { grant: { id: string }; machine: { id: string } }) => (grantID ? i.grant.id === grantID : i.machine.id === machineID);
      const item = await grantFor((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants", { params: { path, query: pageQuery(cursor) } })), matches, machine);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/machine-grants/{grantID}", { params: { path: { ...path, grantID: item.grant.id } } }));
      ctx.print({ revoked: item.grant.id }, () => `Revoked ${visible(item.machine.display_name)} from ${path.projectID}.`);
    });
  machines
    .command("delete <machine>")
    .description("delete a machine (its id or name): its daemon is refused from then on")
    .action(async (machine: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const machineID = await idOfMachine(ctx, machine);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/machines/{machineID}", { params: { path: { orgID: await ctx.org(), machineID } } }));
      ctx.print({ deleted: machineID }, () => "Deleted.");
    });
}

function skillCommands(program: Command): void {
  const skills = program.command("skills").description("skills: SKILL.md and its files (name one by its id or its name)");
  skills
    .command("list")
    .description("the skills you may list in the organization")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/skills", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((s) => [s.id, s.name, s.owner.kind])));
    });
  skills
    .command("push <dir>")
    .description("upload a directory holding SKILL.md as a skill (a new revision when the owner has one of that name)")
    .option("--owner <kind>", "org, project (the current one) or user", ownerKind, "org")
    .action(async (dir: string, options: { owner: OwnerKind }, command: Command) => {
      const ctx = await context(command);
      const owner = await ownerOf(ctx, options.owner);
      const form = new FormData();
      form.set("owner", JSON.stringify(owner));
      form.set("archive", new Blob([await tarGz(dir)], { type: "application/gzip" }), `${basename(resolve(dir))}.tar.gz`);
      const client = ctx.client();
      const headers: Record<string, string> = client.token ? { authorization: `Bearer ${client.token}` } : {};
      const response = await client.fetch(`${client.baseUrl}/api/v1/orgs/${encodeURIComponent(await ctx.org())}/skills`, { method: "POST", headers, body: form });
      const body: unknown = await response.json().catch(() => undefined);
      if (!response.ok) throw SvcError.from(response.status, body);
      const skill = body as { id: string; name: string };
      ctx.print(skill, () => `${skill.id}  ${visible(skill.name)}`);
    });
  skillGrantCommands(skills);
}

function skillGrantCommands(skills: Command): void {
  skills
    .command("grant <skill>")
    .description("let the project (the current one, or --project) use an org or user skill")
    .action(async (skill: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const skillID = await idOfSkill(ctx, skill);
      const grant = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/skills/{skillID}/grants", { params: { path: { orgID: await ctx.org(), skillID } }, body: { target_project_id: await ctx.project() } }));
      ctx.print(grant, () => `Granted ${skillID} to ${grant.target_project_id}.`);
    });
  skills
    .command("revoke <skill>")
    .description("take the skill back from the project (the current one, or --project)")
    .action(async (skill: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const skillID = await idOfSkill(ctx, skill);
      const [orgID, projectID] = [await ctx.org(), await ctx.project()];
      const item = await grantFor((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/skills/{skillID}/grants", { params: { path: { orgID, skillID }, query: pageQuery(cursor) } })), (i) => i.target_project.id === projectID, skillID);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/skills/{skillID}/grants/{grantID}", { params: { path: { orgID, skillID, grantID: item.grant.id } } }));
      ctx.print({ revoked: item.grant.id }, () => `Revoked ${skillID} from ${projectID}.`);
    });
  skills
    .command("grants <skill>")
    .description("the projects the skill is granted to")
    .option(...limitOption)
    .action(async (skill: string, options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const skillID = await idOfSkill(ctx, skill);
      const path = { orgID: await ctx.org(), skillID };
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/skills/{skillID}/grants", { params: { path, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((i) => [i.grant.id, i.target_project.id, i.target_project.name])));
    });
}

/** The directory as a .tar.gz, made by the system's tar (present on Linux, macOS and Windows 10 and later). */
function tarGz(dir: string): Promise<Buffer> {
  return new Promise((done, fail) => {
    // The folder's entries by name, not ".": svc refuses an entry named "./" (it would not stay one skill folder's).
    const child = spawn("tar", ["-czf", "-", "-C", dir, "--", ...readdirSync(dir)], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(Buffer.concat(chunks)) : fail(new Error(`tar could not pack ${dir}: ${errors.trim()}`))));
  });
}
