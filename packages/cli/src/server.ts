import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { printError } from "./output.js";

/**
 * The server's own commands (packages/server/src/main.ts). `svc serve …` and `svc server serve …` run the
 * `svc-server` program in this same process, so signals reach svc itself and every existing doc keeps working.
 */
export const SERVER_COMMANDS = ["serve", "api", "worker", "maintenance", "migrate", "backup", "restore", "fake-provider"];

export async function runServer(args: string[]): Promise<void> {
  let main: string;
  try {
    main = createRequire(import.meta.url).resolve("@svc/server");
  } catch {
    printError("svc: the server commands need @svc/server installed beside the CLI (run `npm run build` in the repository)");
    process.exit(2);
  }
  process.argv = [process.argv[0]!, main, ...args];
  await import(pathToFileURL(main).href);
}
