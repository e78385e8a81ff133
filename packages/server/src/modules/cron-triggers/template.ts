/**
 * The message template (reference: CronMessageTemplate, and docs/integrations "the existing cron
 * variables"): text with `{{.trigger.<variable>}}` actions in Go text/template's notation, trim markers
 * (`{{- ` and ` -}}`) included. Only variable actions are supported; anything else, and any variable not
 * listed here, is refused when the trigger is saved.
 */

export const TEMPLATE_VARIABLES = ["name", "fired_at", "last_fired_at", "local_date"] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** The rendered message's limit (reference: 64 KiB of output). */
export const MAX_RENDERED_BYTES = 65_536;

type Part = { text: string } | { variable: TemplateVariable; trimLeft: boolean; trimRight: boolean };

export class TemplateError extends Error {}

/** Parses the template; throws TemplateError saying what is wrong and where. */
export function parseTemplate(source: string): Part[] {
  const parts: Part[] = [];
  let position = 0;
  while (position < source.length) {
    const open = source.indexOf("{{", position);
    if (open < 0) {
      parts.push({ text: source.slice(position) });
      break;
    }
    if (open > position) parts.push({ text: source.slice(position, open) });
    const close = source.indexOf("}}", open + 2);
    if (close < 0) throw new TemplateError(`the action opened at character ${open + 1} is never closed with }}`);
    parts.push(parseAction(source.slice(open + 2, close)));
    position = close + 2;
  }
  return parts;
}

function parseAction(inner: string): Part {
  const trimLeft = /^-\s/.test(inner);
  const trimRight = /\s-$/.test(inner);
  const body = inner.slice(trimLeft ? 2 : 0, trimRight ? inner.length - 2 : inner.length).trim();
  const match = /^\.trigger\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(body);
  const known = TEMPLATE_VARIABLES.map((v) => `{{.trigger.${v}}}`).join(", ");
  if (!match) throw new TemplateError(`{{${inner}}} is not supported: a template may only use the variables ${known}`);
  const variable = match[1] as TemplateVariable;
  if (!TEMPLATE_VARIABLES.includes(variable)) throw new TemplateError(`unknown variable .trigger.${match[1]}; the variables are ${known}`);
  return { variable, trimLeft, trimRight };
}

/** Renders a template that parsed when it was saved; throws TemplateError when the output is too large. */
export function renderTemplate(source: string, values: Record<TemplateVariable, string>): string {
  const parts = parseTemplate(source);
  const out: string[] = [];
  parts.forEach((part, i) => {
    if ("text" in part) {
      const before = parts[i - 1];
      const after = parts[i + 1];
      let text = part.text;
      if (before && "variable" in before && before.trimRight) text = text.trimStart();
      if (after && "variable" in after && after.trimLeft) text = text.trimEnd();
      out.push(text);
    } else {
      out.push(values[part.variable]);
    }
  });
  const message = out.join("");
  if (Buffer.byteLength(message, "utf8") > MAX_RENDERED_BYTES) {
    throw new TemplateError(`the rendered message is larger than ${MAX_RENDERED_BYTES} bytes`);
  }
  return message;
}
