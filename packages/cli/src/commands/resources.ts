import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { basename, resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { collect, paginate, SvcError, unwrap } from "@svc/sdk";
import { context, table, type Context } from "../context.js";
import { projectPath } from "./agents.js";
import { parseCount } from "./orgs.js";

export function resourceCommands(program: Command): void {
  secretCommands(program);
  modelCommands(program);
  machineCommands(program);
  skillCommands(program);
}

const limitOption = ["--limit <n>", "at most this many", parseCount, 100] as const;
const ownerKind = (value: string) => {
  if (value !== "org" && value !== "project" && value !== "user") throw new InvalidArgumentError("org, project or user");
  return value;
};

function secretCommands(program: Command): void {
  const secrets = program.command("secrets").description("secrets (their values are never shown)");
  secrets
    .command("list")
    .description("the secrets you may list in the organization")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await collect(paginate((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))), options.limit);
      ctx.print(items, () => table(items.map((s) => [s.id, s.name, s.kind, s.owner.kind])));
    });
  secrets
    .command("create <name>")
    .description("a generic secret whose value is read from standard input (so it stays out of shell history)")
    .option("--owner <kind>", "org, project (the current one) or user", ownerKind, "org")
    .action(async (name: string, options: { owner: "org" | "project" | "user" }, command: Command) => {
      const ctx = await context(command);
      const value = (await readStdin()).replace(/\r?\n$/, "");
      const owner = options.owner === "project" ? { kind: "project" as const, project_id: await ctx.project() } : { kind: options.owner };
      const body = { owner, name, material: { kind: "generic" as const, value } };
      const secret = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: await ctx.org() } }, body }));
      ctx.print(secret, () => secret.id);
    });
  secrets
    .command("delete <secret>")
    .description("delete a secret")
    .action(async (secretID: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}", { params: { path: { orgID: await ctx.org(), secretID } } }));
      ctx.print({ deleted: secretID }, () => "Deleted.");
    });
}

function modelCommands(program: Command): void {
  program
    .command("models")
    .description("the models granted to the project (the names agent configs use)")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const items = await collect(paginate((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/model-grants", { params: { path, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))), options.limit);
      ctx.print(items, () => table(items.map((i) => [i.model.provider_config, i.model.name, i.model.id])));
    });
}

function machineCommands(program: Command): void {
  const machines = program.command("machines").description("machines agents run commands on");
  machines
    .command("list")
    .description("the organization's machines you can see")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await collect(paginate((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))), options.limit);
      ctx.print(items, () => table(items.map((m) => [m.id, m.display_name, m.connection_state])));
    });
  machines
    .command("connect <name>")
    .description("register this computer (granted to the project) and print the one svcd command to run on it")
    .option("--cwd <dir>", "where its commands run (default: this directory)")
    .action(async (name: string, options: { cwd?: string }, command: Command) => {
      const ctx = await context(command);
      const { orgID, projectID } = await projectPath(ctx);
      const body = { display_name: name, cwd: resolve(options.cwd ?? process.cwd()), project_ids: [projectID] };
      const connected = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/machines/connect", { params: { path: { orgID } }, body }));
      const run = svcdCommand(ctx, connected.token);
      ctx.print({ ...connected, command: run }, () => `Machine ${connected.machine.id} is ready. Run on it (the token is shown only now):\n\n  ${run}\n`);
    });
}

/** The token goes in the environment rather than the arguments, which other users can see in `ps`. */
function svcdCommand(ctx: Context, token: string): string {
  return `SVC_DAEMON_TOKEN=${quote(token)} npx svcd run --url ${quote(ctx.url)} --home ~/.svcd`;
}

const quote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`);

function skillCommands(program: Command): void {
  const skills = program.command("skills").description("skills: SKILL.md and its files");
  skills
    .command("list")
    .description("the skills you may list in the organization")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await collect(paginate((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/skills", { params: { path: { orgID }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))), options.limit);
      ctx.print(items, () => table(items.map((s) => [s.id, s.name, s.owner.kind])));
    });
  skills
    .command("push <dir>")
    .description("upload a directory holding SKILL.md as a skill (a new revision when the owner has one of that name)")
    .option("--owner <kind>", "org, project (the current one) or user", ownerKind, "org")
    .action(async (dir: string, options: { owner: "org" | "project" | "user" }, command: Command) => {
      const ctx = await context(command);
      const owner = options.owner === "project" ? { kind: "project", project_id: await ctx.project() } : { kind: options.owner };
      const form = new FormData();
      form.set("owner", JSON.stringify(owner));
      form.set("archive", new Blob([await tarGz(dir)], { type: "application/gzip" }), `${basename(resolve(dir))}.tar.gz`);
      const client = ctx.client();
      const headers: Record<string, string> = client.token ? { authorization: `Bearer ${client.token}` } : {};
      const response = await client.fetch(`${client.baseUrl}/api/v1/orgs/${encodeURIComponent(await ctx.org())}/skills`, { method: "POST", headers, body: form });
      const body: unknown = await response.json().catch(() => undefined);
      if (!response.ok) throw SvcError.from(response.status, body);
      const skill = body as { id: string; name: string };
      ctx.print(skill, () => `${skill.id}  ${skill.name}`);
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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
