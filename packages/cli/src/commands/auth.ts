import { spawn } from "node:child_process";
import type { Command } from "commander";
import { startDeviceLogin, unwrap, waitForDeviceLogin, type SvcClient } from "@svc/sdk";
import { apiClient } from "../answers.js";
import { context, type Context } from "../context.js";
import { credentialsPath, removeCredentials, writeCredentials } from "../credentials.js";
import { readPassword } from "../input.js";
import { printError, visible } from "../output.js";
import { signIn, signUp, tokenThroughSession } from "../session.js";

const CLIENT_NAME = "svc CLI";

export function authCommands(program: Command): void {
  program
    .command("signup")
    .description("create an account with a password (read without echo, or from standard input) and log in as it")
    .requiredOption("--email <address>", "the account's email address")
    .requiredOption("--name <name>", "your display name")
    .option("--token-name <name>", "the name of the personal access token the login makes", CLIENT_NAME)
    .action(async (options: { email: string; name: string; tokenName: string }, command: Command) => {
      const ctx = await context(command);
      const client = apiClient(ctx.url);
      const password = await readPassword("Choose a password (8 characters or more): ");
      const { session, user } = await signUp(client, { email: options.email, password, display_name: options.name });
      if (!session) {
        // SVC_SMTP_URL is set: the account signs in only after the mailed link is followed.
        ctx.print({ url: ctx.url, user, email_verification_required: true }, () => `Account created. Follow the link mailed to ${visible(user.email)}, then run \`svc login --email ${visible(user.email)}\`.`);
        return;
      }
      await finishLogin(ctx, client, await tokenThroughSession(client, session, { client_name: CLIENT_NAME, token_name: options.tokenName }));
    });

  program
    .command("login")
    .description("sign in through the browser (device login), or with --email and a password, and keep the token in the config directory")
    .option("--no-browser", "print the address to open instead of opening a browser")
    .option("--email <address>", "sign in with this account's password instead of a browser (read without echo, or from standard input)")
    .option("--token-name <name>", "the name of the personal access token the login makes", CLIENT_NAME)
    .action(async (options: { browser: boolean; email?: string; tokenName: string }, command: Command) => {
      const ctx = await context(command);
      const client = apiClient(ctx.url);
      const names = { client_name: CLIENT_NAME, token_name: options.tokenName };
      if (options.email) {
        const session = await signIn(client, { email: options.email, password: await readPassword("Password: ") });
        return finishLogin(ctx, client, await tokenThroughSession(client, session, names));
      }
      const code = await startDeviceLogin(client, names);
      // On stderr, so --json's stdout stays one JSON document.
      printError(`Open ${visible(code.verification_uri_complete)}\nand check that it shows the code ${visible(code.user_code)}.`);
      if (options.browser) openBrowser(code.verification_uri_complete);
      printError("Waiting for approval…");
      await finishLogin(ctx, client, await waitForDeviceLogin(client, code));
    });

  program
    .command("logout")
    .description("forget the stored token (it stays valid until revoked)")
    .action(async (_options: unknown, command: Command) => {
      const ctx = await context(command);
      const removed = await removeCredentials();
      ctx.print({ removed }, () => (removed ? "Logged out." : "Not logged in."));
    });

  program
    .command("whoami")
    .description("the signed-in user and their organizations")
    .action(async (_options: unknown, command: Command) => {
      const ctx = await context(command);
      const me = await unwrap(ctx.client().GET("/api/v1/me"));
      ctx.print(me, () => [`${visible(me.user.email)} (${visible(me.user.id)}) on ${visible(ctx.url)}`, ...me.orgs.map((o) => `  ${visible(o.id)}  ${visible(o.name)}  ${visible(o.role)}`)].join("\n"));
    });
}

/** Stores the new token for this server and says who it belongs to. */
async function finishLogin(ctx: Context, client: SvcClient, token: string): Promise<void> {
  const me = await unwrap(apiClient(client.baseUrl, token).GET("/api/v1/me"));
  // A new server or account starts without the default org and project of the previous one.
  await writeCredentials({ url: ctx.url, token });
  ctx.print({ url: ctx.url, user: me.user, credentials: credentialsPath() }, () => `Logged in to ${visible(ctx.url)} as ${visible(me.user.email)}.`);
}

/**
 * Best effort: without a browser the address printed above still works. Only a web address is opened: the
 * server chose it, and the system's opener would as readily run a `file:` or another scheme's handler.
 */
function openBrowser(url: string): void {
  if (!URL.canParse(url) || !["http:", "https:"].includes(new URL(url).protocol)) return;
  const [command, ...args] = process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : ["xdg-open", url];
  const child = spawn(command!, args, { stdio: "ignore", detached: true });
  child.on("error", () => {});
  child.unref();
}
