import { spawn } from "node:child_process";
import type { Command } from "commander";
import { createClient, startDeviceLogin, unwrap, waitForDeviceLogin } from "@svc/sdk";
import { context } from "../context.js";
import { credentialsPath, removeCredentials, writeCredentials } from "../credentials.js";

export function authCommands(program: Command): void {
  program
    .command("login")
    .description("sign in through the browser (device login) and keep the token in the config directory")
    .option("--no-browser", "print the address to open instead of opening a browser")
    .option("--token-name <name>", "the name of the personal access token the login makes", "svc CLI")
    .action(async (options: { browser: boolean; tokenName: string }, command: Command) => {
      const ctx = await context(command);
      const client = createClient({ baseUrl: ctx.url });
      const code = await startDeviceLogin(client, { client_name: "svc CLI", token_name: options.tokenName });
      // On stderr, so --json's stdout stays one JSON document.
      console.error(`Open ${code.verification_uri_complete}\nand check that it shows the code ${code.user_code}.`);
      if (options.browser) openBrowser(code.verification_uri_complete);
      console.error("Waiting for approval…");
      const token = await waitForDeviceLogin(client, code);
      const me = await unwrap(createClient({ baseUrl: ctx.url, token }).GET("/api/v1/me"));
      // A new server or account starts without the default org and project of the previous one.
      await writeCredentials({ url: ctx.url, token });
      ctx.print({ url: ctx.url, user: me.user, credentials: credentialsPath() }, () => `Logged in to ${ctx.url} as ${me.user.email}.`);
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
      ctx.print(me, () => [`${me.user.email} (${me.user.id}) on ${ctx.url}`, ...me.orgs.map((o) => `  ${o.id}  ${o.name}  ${o.role}`)].join("\n"));
    });
}

/** Best effort: without a browser the address printed above still works. */
function openBrowser(url: string): void {
  const [command, ...args] = process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : ["xdg-open", url];
  const child = spawn(command!, args, { stdio: "ignore", detached: true });
  child.on("error", () => {});
  child.unref();
}
