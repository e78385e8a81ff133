#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { SvcError } from "@svc/sdk";
import { EXIT, UsageError } from "./context.js";
import { authCommands } from "./commands/auth.js";
import { orgCommands } from "./commands/orgs.js";
import { configCommands, FileIssues } from "./commands/configs.js";
import { agentCommands } from "./commands/agents.js";
import { tailCommand } from "./commands/tail.js";
import { interactionCommands } from "./commands/interactions.js";
import { resourceCommands } from "./commands/resources.js";
import { budgetCommands } from "./commands/budgets.js";
import { memoryCommands } from "./commands/memory.js";
import { runServer, SERVER_COMMANDS } from "./server.js";
import { version } from "./version.js";
import { printError, visible } from "./output.js";

function program(): Command {
  const root = new Command("svc")
    .description("svc from the command line: the API (login, orgs, projects, agents, tail, …) and the server's own commands (serve, migrate, …)")
    .option("--url <url>", "svc's address (else SVC_URL, the stored login's, or http://localhost:8080)")
    .option("--token <token>", "an API key (else SVC_TOKEN or the stored login's)")
    .option("--org <id>", "the organization (else SVC_ORG, `svc orgs use`, or your only one)")
    .option("--project <id>", "the project (else SVC_PROJECT, `svc projects use`, or the org's only one)")
    .option("--json", "print the API's JSON instead of text")
    .version(version(), "-V, --version", "print svc's version")
    .showHelpAfterError("(svc --help lists the commands)")
    .exitOverride();
  authCommands(root);
  orgCommands(root);
  resourceCommands(root);
  configCommands(root);
  agentCommands(root);
  tailCommand(root);
  interactionCommands(root);
  budgetCommands(root);
  memoryCommands(root);
  root.command("server").description("the server's commands: svc server serve|api|worker|maintenance|migrate|backup|restore|fake-provider (also without `server`)").helpOption(false).allowUnknownOption().argument("[args...]");
  for (const name of SERVER_COMMANDS) root.command(name).description(`the server's \`${name}\` (svc-server ${name}; see docs/configuration.md)`).helpOption(false).allowUnknownOption().argument("[args...]");
  return root;
}

async function main(argv: string[]): Promise<number | undefined> {
  // Forwarded before parsing: the server's commands parse their own arguments.
  const server = argv[0] === "server" ? argv.slice(1) : argv[0] !== undefined && SERVER_COMMANDS.includes(argv[0]) ? argv : undefined;
  // svc-server reads no --help of its own: `svc serve --help` would start a server rather than describe one.
  if (server) return void (await runServer(server.some((a) => a === "--help" || a === "-h") ? ["help"] : server));
  try {
    await program().parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    return failed(err);
  }
}

function failed(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version end through here too, successfully.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof UsageError) {
    printError(`svc: ${visible(err.message)}`);
    return EXIT.usage;
  }
  if (err instanceof FileIssues) {
    printError(err.message);
    return EXIT.error;
  }
  if (err instanceof SvcError) {
    printError(`svc: ${visible(err.message)} (${visible(err.code)}, HTTP ${err.status})`);
    for (const issue of err.issues) printError(`  ${visible(issue.path || "/")}: ${visible(issue.message)}`);
    return EXIT.error;
  }
  if (err instanceof TypeError && err.message === "fetch failed") {
    // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is in its cause.
    const cause = err.cause instanceof Error ? ((err.cause as NodeJS.ErrnoException).code ?? err.cause.message) : "no answer";
    printError(`svc: cannot reach svc (${visible(cause)}): is it running, and is --url (or SVC_URL) its address?`);
    return EXIT.error;
  }
  printError(`svc: ${visible(err instanceof Error ? err.message : String(err))}`);
  return EXIT.error;
}

const code = await main(process.argv.slice(2));
// The server's commands end the process themselves; the API commands leave no handles open but the
// stdin of a finished `tail`, so exit explicitly.
if (code !== undefined) process.exit(code);
