import { unwrap, type CursorPage } from "@svc/sdk";
import { UsageError, type Context } from "./context.js";

/** How one kind of thing is found by name: its id prefix, its list with a name filter, and the list command. */
interface Named {
  prefix: string;
  /** How one of them and several of them are called in messages. */
  one: string;
  many: string;
  listCommand: string;
  list(ctx: Context, query: { name: string; limit: number }): Promise<CursorPage<{ id: string }>>;
}

/**
 * The id of the thing the user named, as the console accepts it: its id, or its name looked up through
 * the list's name filter. The filter is a case-insensitive glob (spec, Common list query parameters), so
 * the name's wildcards are escaped to match only itself; one match is used, none or several are an error.
 */
async function idOf(ctx: Context, kind: Named, given: string): Promise<string> {
  if (new RegExp(`^${kind.prefix}_[a-z2-7]{26}$`).test(given)) return given;
  const name = given.replace(/[\\*?]/g, (c) => `\\${c}`);
  const page = await kind.list(ctx, { name, limit: 2 });
  const [first, ...rest] = page.data;
  if (!first) throw new UsageError(`no ${kind.one} is named ${given} (\`${kind.listCommand}\` lists them)`);
  if (rest.length > 0) throw new UsageError(`several ${kind.many} are named ${given}: give the id (${kind.prefix}_…) of one (\`${kind.listCommand}\` lists them)`);
  return first.id;
}

const AGENT: Named = {
  prefix: "agt",
  one: "agent of the project",
  many: "agents of the project",
  listCommand: "svc agents list",
  list: async (ctx, query) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: await ctx.org(), projectID: await ctx.project() }, query } })),
};

const SECRET: Named = {
  prefix: "sec",
  one: "secret",
  many: "secrets",
  listCommand: "svc secrets list",
  list: async (ctx, query) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: await ctx.org() }, query } })),
};

const SKILL: Named = {
  prefix: "skl",
  one: "skill",
  many: "skills",
  listCommand: "svc skills list",
  list: async (ctx, query) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/skills", { params: { path: { orgID: await ctx.org() }, query } })),
};

const MACHINE: Named = {
  prefix: "mch",
  one: "machine",
  many: "machines",
  listCommand: "svc machines list",
  list: async (ctx, query) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/machines", { params: { path: { orgID: await ctx.org() }, query } })),
};

const PROVIDER: Named = {
  prefix: "mpc",
  one: "model provider config",
  many: "model provider configs",
  listCommand: "svc providers list",
  list: async (ctx, query) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/model-provider-configs", { params: { path: { orgID: await ctx.org() }, query } })),
};

const MEMORY_STORE: Named = {
  prefix: "mst",
  one: "memory store of the project",
  many: "memory stores of the project",
  listCommand: "svc memory stores list",
  list: async (ctx, query) =>
    unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores", { params: { path: { orgID: await ctx.org(), projectID: await ctx.project() }, query } })),
};

export const idOfAgent = (ctx: Context, given: string) => idOf(ctx, AGENT, given);
export const idOfSecret = (ctx: Context, given: string) => idOf(ctx, SECRET, given);
export const idOfSkill = (ctx: Context, given: string) => idOf(ctx, SKILL, given);
export const idOfMachine = (ctx: Context, given: string) => idOf(ctx, MACHINE, given);
export const idOfProvider = (ctx: Context, given: string) => idOf(ctx, PROVIDER, given);
export const idOfMemoryStore = (ctx: Context, given: string) => idOf(ctx, MEMORY_STORE, given);
