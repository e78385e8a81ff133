import type { Command } from "commander";
import { unwrap, type SvcClient } from "@svc/sdk";
import { apiClient } from "./answers.js";
import { readCredentials, type Credentials } from "./credentials.js";
import { jsonText, printLine, visible } from "./output.js";

/** Exit codes scripts can rely on (docs/cli.md). */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** A problem with how the command was called: exit code 2. */
export class UsageError extends Error {}

export interface GlobalOptions {
  url?: string;
  token?: string;
  org?: string;
  project?: string;
  json?: boolean;
}

const DEFAULT_URL = "http://localhost:8080";

/** Everything a command needs: options merged from flags, environment and the stored credentials. */
export interface Context {
  url: string;
  json: boolean;
  /** What `svc login` and `svc … use` stored for this server (nothing when they were for another). */
  own: Credentials;
  client(): SvcClient;
  org(): Promise<string>;
  project(): Promise<string>;
  print(value: unknown, human: () => string): void;
}

export async function context(command: Command): Promise<Context> {
  const options = command.optsWithGlobals<GlobalOptions>();
  const stored = await readCredentials();
  const url = options.url ?? process.env["SVC_URL"] ?? stored.url ?? DEFAULT_URL;
  // The stored token, org and project belong to the server they came from; another one gets none of them.
  const own: Credentials = sameServer(stored.url, url) ? stored : {};
  const token = options.token ?? process.env["SVC_TOKEN"] ?? own.token;
  const json = options.json === true;
  let client: SvcClient | undefined;
  const ctx: Context = {
    url,
    json,
    own,
    client: () => (client ??= apiClient(url, token)),
    org: async () => options.org ?? process.env["SVC_ORG"] ?? own.org ?? (await onlyOrg(ctx.client())),
    project: async () => options.project ?? process.env["SVC_PROJECT"] ?? own.project ?? (await onlyProject(ctx.client(), await ctx.org())),
    print(value, human) {
      printLine(json ? jsonText(value, 2) : human());
    },
  };
  return ctx;
}

function sameServer(stored: string | undefined, url: string): boolean {
  return stored !== undefined && normalized(stored) === normalized(url);
}

/** The address as a URL spells it (scheme and host lower-cased, default port dropped), without trailing slashes. */
function normalized(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
  } catch {
    return url;
  }
}

async function onlyOrg(client: SvcClient): Promise<string> {
  const me = await unwrap(client.GET("/api/v1/me"));
  const [first, ...rest] = me.orgs;
  if (!first || rest.length > 0) throw new UsageError(`choose an organization with --org, SVC_ORG or \`svc orgs use\` (you are in ${me.orgs.length})`);
  return first.id;
}

async function onlyProject(client: SvcClient, orgId: string): Promise<string> {
  const page = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: orgId }, query: { limit: 2 } } }));
  const [first, ...rest] = page.data;
  if (!first || rest.length > 0) throw new UsageError("choose a project with --project, SVC_PROJECT or `svc projects use`");
  return first.id;
}

/** Rows as aligned columns, for the human form of lists; a cell is one line, whatever the server sent. */
export function table(cells: string[][]): string {
  if (cells.length === 0) return "(none)";
  const rows = cells.map((row) => row.map(visible));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n");
}
