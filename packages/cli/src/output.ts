/*
 * Everything svc writes to the terminal goes through this module. Much of it comes from the server: names,
 * agent output, the inputs of outside users (a Slack message, a GitHub comment), error messages. A terminal
 * obeys the control sequences in what it is sent: ESC ] 8 draws a link that shows one address and opens
 * another, ESC ] 0 retitles the window, ESC [ 2 J clears the screen, ESC ] 52 writes the clipboard. So every
 * C0 and C1 control character, DEL and ESC is written out as text (`\x1b`), shown rather than obeyed.
 */

/** C0 (U+0000–U+001F, ESC among them), DEL and C1 (U+0080–U+009F: a terminal may read U+009B as ESC [). */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

const shown = (char: string) => NAMED[char] ?? `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;

/** A one-line value (a name, an id, a title): every control character shown, newlines and tabs too. */
export function visible(text: string): string {
  return text.replace(CONTROLS, shown);
}

/** A body meant to span lines (agent output, a message): newlines and tabs kept, every other control shown. */
export function visibleLines(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(CONTROLS, (char) => (char === "\n" || char === "\t" ? char : shown(char)));
}

/**
 * JSON for `--json`. JSON.stringify escapes C0 characters (ESC is `\u001b`) but writes DEL and C1 as they
 * are; escaping them too keeps the same JSON value and the terminal safe.
 */
export function jsonText(value: unknown, indent?: number): string {
  // JSON.stringify gives undefined for undefined (a tool call without input): shown as such.
  return (JSON.stringify(value, null, indent) ?? "undefined").replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A line on standard output. The CLI's own layout (newlines, tabs) is kept; any other control is shown. */
export const printLine = (text: string) => void process.stdout.write(`${visibleLines(text)}\n`);

/** Text on standard output without ending the line (model output as it is written). */
export const printPart = (text: string) => void process.stdout.write(visibleLines(text));

/** A line on standard error: errors, progress, and what must not mix with `--json`'s document. */
export const printError = (text: string) => void process.stderr.write(`${visibleLines(text)}\n`);

/** A prompt on standard error, the answer typed after it on the same line. */
export const printPrompt = (text: string) => void process.stderr.write(visibleLines(text));
