import { readFile } from "node:fs/promises";
import { InvalidArgumentError, type Command } from "commander";
import { unwrap, type components } from "@svc/sdk";
import { context, table, UsageError } from "../context.js";
import { grantFor, listAll, pageQuery } from "../lists.js";
import { readSource, readStdin, withoutFinalNewline } from "../input.js";
import { idOfSecret } from "../names.js";
import { limitOption, ownerKind, ownerOf, type OwnerKind } from "./options.js";

type Material = components["schemas"]["SecretMaterial"];

/** The secret kinds of the spec (Secrets): generic holds one value, the others a JSON object of fields. */
const SECRET_KINDS = ["generic", "oauth_token_set", "slack_app_credentials", "aws_credentials", "github_app_credentials"] as const;
type SecretKind = (typeof SECRET_KINDS)[number];

interface MaterialOptions {
  kind: SecretKind;
  fromFile?: string;
  fieldFile: Record<string, string>;
}

export function secretCommands(program: Command): void {
  const secrets = program.command("secrets").description("secrets, named by id or name (their values are never shown)");
  secrets
    .command("list")
    .description("the secrets you may list in the organization")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((s) => [s.id, s.name, s.kind, s.owner.kind])));
    });
  secrets
    .command("get <secret>")
    .description("one secret: its kind, owner and the names of its fields, never their values")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      const secret = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets/{secretID}", { params: { path: { orgID: await ctx.org(), secretID } } }));
      ctx.print(secret, () => table([["id", secret.id], ["name", secret.name], ["kind", secret.kind], ["owner", secret.owner.kind], ["version", String(secret.current_version_number)], ["fields", secret.payload_keys.join(", ")]]));
    });
  materialOptions(secrets.command("create <name>"))
    .description("store a secret; its value comes from standard input or a file, never the command line (shell history keeps that)")
    .option("--owner <kind>", "org, project (the current one) or user", ownerKind, "org")
    .option("--metadata <key=value>", "a metadata pair, repeatable (list filters use it)", pairs, {})
    .action(async (name: string, options: MaterialOptions & { owner: OwnerKind; metadata: Record<string, string> }, command: Command) => {
      const ctx = await context(command);
      const material = await readMaterial(options);
      const body = { owner: await ownerOf(ctx, options.owner), name, material, ...(Object.keys(options.metadata).length ? { metadata: options.metadata } : {}) };
      const secret = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: await ctx.org() } }, body }));
      ctx.print(secret, () => secret.id);
    });
  materialOptions(secrets.command("update <secret>"))
    .description("store a new version of the secret's value (read as `create` reads it); the kind must stay the same")
    .action(async (given: string, options: MaterialOptions, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      const material = await readMaterial(options);
      const secret = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/secrets/{secretID}/versions", { params: { path: { orgID: await ctx.org(), secretID } }, body: { material } }));
      ctx.print(secret, () => `${secret.id} is at version ${secret.current_version_number}.`);
    });
  secrets
    .command("delete <secret>")
    .description("delete a secret")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}", { params: { path: { orgID: await ctx.org(), secretID } } }));
      ctx.print({ deleted: secretID }, () => "Deleted.");
    });
  secretGrantCommands(secrets);
}

function secretGrantCommands(secrets: Command): void {
  secrets
    .command("grant <secret>")
    .description("let the project (the current one, or --project) use an org or user secret")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      const grant = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path: { orgID: await ctx.org(), secretID } }, body: { target_project_id: await ctx.project() } }));
      ctx.print(grant, () => `Granted ${secretID} to ${grant.target_project_id}.`);
    });
  secrets
    .command("revoke <secret>")
    .description("take the secret back from the project (the current one, or --project)")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      const [orgID, projectID] = [await ctx.org(), await ctx.project()];
      const path = { orgID, secretID };
      const item = await grantFor((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path, query: pageQuery(cursor) } })), (i) => i.target_project.id === projectID, secretID);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}/grants/{grantID}", { params: { path: { ...path, grantID: item.grant.id } } }));
      ctx.print({ revoked: item.grant.id }, () => `Revoked ${secretID} from ${projectID}.`);
    });
  secrets
    .command("grants <secret>")
    .description("the projects the secret is granted to")
    .option(...limitOption)
    .action(async (given: string, options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const secretID = await idOfSecret(ctx, given);
      const path = { orgID: await ctx.org(), secretID };
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () => table(items.map((i) => [i.grant.id, i.target_project.id, i.target_project.name])));
    });
}

function materialOptions(command: Command): Command {
  return command
    .option("--kind <kind>", `${SECRET_KINDS.join(", ")}`, secretKind, "generic")
    .option("--from-file <path>", "read the value (generic) or the JSON object of fields (other kinds) from this file instead of standard input")
    .option("--field-file <field=path>", "read one field of a structured kind from a file (a PEM key, say), repeatable", pairs, {});
}

/**
 * The material the options describe. The server validates each kind's fields (and says which is wrong);
 * here only the shape: a generic value, or a JSON object for the other kinds.
 */
async function readMaterial(options: MaterialOptions): Promise<Material> {
  const fieldFiles = Object.entries(options.fieldFile);
  if (options.kind === "generic") {
    if (fieldFiles.length > 0) throw new UsageError("--field-file is for the structured kinds; a generic secret has one value");
    const value = withoutFinalNewline(options.fromFile ? await readSource(options.fromFile) : await readStdin());
    // The generated type keeps only `kind`: the kinds' fields sit in if/then branches it does not model.
    return { kind: "generic", value } as Material;
  }
  // With every field from files at a terminal there is nothing more to read; a pipe may still add fields.
  const skipStdin = !options.fromFile && fieldFiles.length > 0 && process.stdin.isTTY;
  const text = options.fromFile ? await readSource(options.fromFile) : skipStdin ? "{}" : await readStdin();
  const fields = jsonObject(text, options.fromFile ?? "standard input");
  if (fields["kind"] !== undefined && fields["kind"] !== options.kind) throw new UsageError(`the JSON says kind ${String(fields["kind"])} but --kind is ${options.kind}`);
  for (const [field, path] of fieldFiles) fields[field] = withoutFinalNewline(await readFile(path, "utf8"));
  // Which fields the kind needs is the server's to check (it names the wrong one).
  return { ...fields, kind: options.kind } as Material;
}

function jsonObject(text: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() || "{}");
  } catch (err) {
    throw new UsageError(`${source} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError(`${source} must hold a JSON object of the secret's fields`);
  return parsed as Record<string, unknown>;
}

function secretKind(value: string): SecretKind {
  const kind = SECRET_KINDS.find((k) => k === value);
  if (!kind) throw new InvalidArgumentError(SECRET_KINDS.join(", "));
  return kind;
}

/** `key=value` into a record; repeated options add pairs. */
function pairs(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf("=");
  if (at < 1) throw new InvalidArgumentError(`not key=value: ${value}`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}
