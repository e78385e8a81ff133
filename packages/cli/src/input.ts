import { readFile } from "node:fs/promises";
import { UsageError } from "./context.js";
import { printPrompt } from "./output.js";

/** Everything on standard input, until it ends (Ctrl-D at a terminal). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A file's text, or standard input's for `-`. */
export function readSource(path: string): Promise<string> {
  return path === "-" ? readStdin() : readFile(path, "utf8");
}

/** The one line ending that `printf '%s\n'`, `echo` and editors add is not part of a value. */
export const withoutFinalNewline = (text: string) => text.replace(/\r?\n$/, "");

/**
 * A password: typed at a terminal without echo, else the first line of standard input (for scripts:
 * `printf %s "$PASSWORD" | svc signup …`). Never an argument, which shell history and `ps` would keep.
 */
export async function readPassword(prompt: string): Promise<string> {
  const password = process.stdin.isTTY ? await typeHidden(prompt) : withoutFinalNewline((await readStdin()).split("\n")[0] ?? "");
  if (!password) throw new UsageError("no password given (type it when asked, or pipe it on standard input)");
  return password;
}

const CTRL_C = "\u0003";
const CTRL_D = "\u0004";
const BACKSPACE = new Set(["\u007f", "\b"]);

/** Reads one line from the terminal in raw mode, so what is typed is not shown. */
function typeHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  printPrompt(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      printPrompt("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n" || char === CTRL_D) return finish();
        if (char === CTRL_C) return finish(new UsageError("canceled"));
        typed = BACKSPACE.has(char) ? typed.slice(0, -1) : typed + char;
      }
    };
    stdin.on("data", onData);
  });
}
