import { Cron } from "croner";

/**
 * Five-field cron schedules in an IANA timezone (reference: CronExpression, CronTimezone).
 *
 * The syntax is checked here, field by field, so a mistake is reported at its field; croner only computes
 * occurrences, from the normalized expression. Its timezone handling gives the daylight-saving rules the
 * issue asks for: a local time skipped by a spring-forward fires once at the first valid instant after
 * the gap. A local time repeated by a fall-back fires only at its first occurrence: croner would fire a
 * wildcard-hour schedule in both, so `nextOccurrence` skips the second.
 */

interface FieldRule {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The first name's number: months are named from 1, weekdays from 0. */
  namesFrom?: number;
}

const FIELDS: readonly FieldRule[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], namesFrom: 1 },
  // 0 and 7 are both Sunday, as in Vixie cron.
  { name: "day of week", min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], namesFrom: 0 },
];

export class CronSyntaxError extends Error {}

/** A checked schedule: the expression as croner reads it, and the zone it runs in. */
export interface Schedule {
  readonly cron: Cron;
  readonly timezone: string;
}

/** Checks a five-field expression; throws CronSyntaxError naming the field at fault. Returns it normalized. */
export function normalizeExpression(expression: string): string {
  const trimmed = expression.trim();
  if (/^(CRON_)?TZ=/i.test(trimmed)) throw new CronSyntaxError("TZ= and CRON_TZ= prefixes are not accepted; set the timezone field instead");
  if (trimmed.startsWith("@")) throw new CronSyntaxError("macros such as @daily are not accepted; write the five fields, e.g. 0 0 * * *");
  const parts = trimmed.split(/\s+/);
  if (parts.length !== 5) {
    throw new CronSyntaxError(`must have exactly five fields (minute hour day-of-month month day-of-week), found ${parts.length}`);
  }
  return parts.map((part, i) => normalizeField(part, FIELDS[i]!)).join(" ");
}

function normalizeField(field: string, rule: FieldRule): string {
  return field
    .split(",")
    .map((item) => {
      if (item === "") throw new CronSyntaxError(`${rule.name} field "${field}" has an empty list item`);
      return normalizeItem(item, rule);
    })
    .join(",");
}

/** One list item: `*`, `*` with a step, `n`, `n-m`, or `n-m` with a step. */
function normalizeItem(item: string, rule: FieldRule): string {
  const [range, step, extra] = item.split("/");
  if (extra !== undefined) throw new CronSyntaxError(`${rule.name} field: "${item}" has more than one step`);
  let stepText = "";
  if (step !== undefined) {
    if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > rule.max) {
      throw new CronSyntaxError(`${rule.name} field: the step in "${item}" must be a whole number from 1 to ${rule.max}`);
    }
    stepText = `/${Number(step)}`;
  }
  if (range === "*") return `*${stepText}`;
  const bounds = range!.split("-");
  if (bounds.length > 2) throw new CronSyntaxError(`${rule.name} field: "${item}" is not a value or a range`);
  if (bounds.length === 1 && step !== undefined) {
    throw new CronSyntaxError(`${rule.name} field: a step needs * or a range before it, e.g. */${step} or ${range}-${rule.max}/${step}`);
  }
  const [from, to] = bounds.map((bound) => value(bound, item, rule));
  if (to !== undefined && to < from!) throw new CronSyntaxError(`${rule.name} field: the range "${item}" ends before it starts`);
  return `${from}${to === undefined ? "" : `-${to}`}${stepText}`;
}

function value(text: string, item: string, rule: FieldRule): number {
  const named = rule.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + rule.namesFrom!;
  if (!/^\d+$/.test(text)) {
    const names = rule.names ? ` or a name (${rule.names[0]}…${rule.names.at(-1)})` : "";
    throw new CronSyntaxError(`${rule.name} field: "${item}" is not a number${names}`);
  }
  const n = Number(text);
  if (n < rule.min || n > rule.max) throw new CronSyntaxError(`${rule.name} field: ${n} is outside ${rule.min}-${rule.max}`);
  return n;
}

/** An IANA zone name the runtime knows (Intl's tz database). */
export function isTimeZone(name: string): boolean {
  if (name === "" || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A schedule for a checked expression and zone. */
export function schedule(expression: string, timezone: string): Schedule {
  // domAndDow false (the default): a day matches either day field when both are restricted, as in Vixie cron.
  return { cron: new Cron(normalizeExpression(expression), { timezone, paused: true }), timezone };
}

/** The first occurrence strictly after `after`, or null when the schedule never fires again. */
export function nextOccurrence(s: Schedule, after: Date): Date | null {
  let from = after;
  // A fall-back repeats at most a few hours; each skipped candidate is a later instant, so this ends.
  for (let i = 0; i < 16; i++) {
    const next = s.cron.nextRun(from);
    if (!next) return null;
    if (!repeatsEarlierLocalTime(next, s.timezone)) return next;
    from = next;
  }
  return null;
}

/**
 * True when the local wall-clock time of `at` already happened earlier, before a fall-back. That is so
 * when, `d` minutes before, the zone's offset was `d` minutes larger (the usual shifts are 30, 60, 120).
 */
function repeatsEarlierLocalTime(at: Date, timezone: string): boolean {
  const offset = offsetMinutes(at, timezone);
  return [30, 60, 120].some((d) => offsetMinutes(new Date(at.getTime() - d * 60_000), timezone) === offset + d);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timezone, f);
  }
  return f;
}

function localParts(at: Date, timezone: string): Record<"year" | "month" | "day" | "hour" | "minute" | "second", number> {
  const parts = Object.fromEntries(formatter(timezone).formatToParts(at).map((p) => [p.type, p.value]));
  return {
    year: Number(parts["year"]),
    month: Number(parts["month"]),
    day: Number(parts["day"]),
    hour: Number(parts["hour"]),
    minute: Number(parts["minute"]),
    second: Number(parts["second"]),
  };
}

/** The zone's offset from UTC at `at`, in minutes (local minus UTC). */
function offsetMinutes(at: Date, timezone: string): number {
  const p = localParts(at, timezone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/** `YYYY-MM-DD` of `at` in the zone. */
export function localDate(at: Date, timezone: string): string {
  const p = localParts(at, timezone);
  return `${String(p.year).padStart(4, "0")}-${String(p.month).padStart(2, "0")}-${String(p.day).padStart(2, "0")}`;
}
