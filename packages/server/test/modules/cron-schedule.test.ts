import { describe, expect, it } from "vitest";
import { CronSyntaxError, localDate, nextOccurrence, normalizeExpression, schedule } from "../../src/modules/cron-triggers/cron.js";
import { parseTemplate, renderTemplate, TemplateError } from "../../src/modules/cron-triggers/template.js";

/** The next `count` occurrences after `from`, as ISO strings. */
function occurrences(expression: string, timezone: string, from: string, count: number): string[] {
  const s = schedule(expression, timezone);
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < count; i++) {
    at = nextOccurrence(s, at)!;
    out.push(at.toISOString());
  }
  return out;
}

describe("cron schedules", () => {
  it("fires a skipped local time once at the next valid instant", () => {
    // 14 March 2027, New York: 02:00 EST becomes 03:00 EDT.
    expect(occurrences("30 2 * * *", "America/New_York", "2027-03-13T12:00:00Z", 3)).toEqual([
      "2027-03-14T07:00:00.000Z",
      "2027-03-15T06:30:00.000Z",
      "2027-03-16T06:30:00.000Z",
    ]);
    // Every half hour: 02:00 and 02:30 do not exist, 03:00 fires once.
    expect(occurrences("*/30 * * * *", "America/New_York", "2027-03-14T06:00:00Z", 3)).toEqual([
      "2027-03-14T06:30:00.000Z",
      "2027-03-14T07:00:00.000Z",
      "2027-03-14T07:30:00.000Z",
    ]);
  });

  it("fires a repeated local time once, at its first occurrence, whatever the schedule", () => {
    // 7 November 2027, New York: 02:00 EDT becomes 01:00 EST; 01:00-01:59 happens twice.
    expect(occurrences("30 1 * * *", "America/New_York", "2027-11-06T12:00:00Z", 2)).toEqual(["2027-11-07T05:30:00.000Z", "2027-11-08T06:30:00.000Z"]);
    expect(occurrences("*/30 * * * *", "America/New_York", "2027-11-07T04:45:00Z", 4)).toEqual([
      "2027-11-07T05:00:00.000Z",
      "2027-11-07T05:30:00.000Z",
      // 06:00Z and 06:30Z are 01:00 and 01:30 again.
      "2027-11-07T07:00:00.000Z",
      "2027-11-07T07:30:00.000Z",
    ]);
    // Lord Howe Island shifts by 30 minutes: 01:30-01:59 repeats on 4 April 2027.
    expect(occurrences("45 1 * * *", "Australia/Lord_Howe", "2027-04-03T12:00:00Z", 2)).toEqual(["2027-04-03T14:45:00.000Z", "2027-04-04T15:15:00.000Z"]);
  });

  it("keeps Vixie cron's either-day rule and names", () => {
    // The 13th or any Friday.
    expect(occurrences("0 0 13 * fri", "UTC", "2027-01-01T00:00:00Z", 3)).toEqual(["2027-01-08T00:00:00.000Z", "2027-01-13T00:00:00.000Z", "2027-01-15T00:00:00.000Z"]);
    expect(normalizeExpression(" 0,30  9-17/2 1-15 JAN-jun Mon-FRI ")).toBe("0,30 9-17/2 1-15 1-6 1-5");
    expect(normalizeExpression("0 0 * * 7")).toBe("0 0 * * 7");
  });

  it("refuses what is not a standard five-field expression", () => {
    for (const bad of ["@daily", "0 0 * * * *", "5/15 * * * *", "L * * * *", "0 0 ? * *", "0 24 * * *", "0 0 0 * *", "0 0 * 13 *", "1-2-3 * * * *", "0 0 * * 8", "0 0 * * 1,", "*/60 * * * *"]) {
      expect(() => normalizeExpression(bad), bad).toThrow(CronSyntaxError);
    }
  });

  it("gives the local date of an instant", () => {
    expect(localDate(new Date("2027-03-14T03:00:00Z"), "America/New_York")).toBe("2027-03-13");
    expect(localDate(new Date("2027-03-14T03:00:00Z"), "Asia/Tokyo")).toBe("2027-03-14");
  });
});

describe("message templates", () => {
  const values = { name: "Nightly", fired_at: "2027-03-14T07:00:00.000Z", last_fired_at: "", local_date: "2027-03-14" };

  it("renders the variables, with Go's trim markers", () => {
    expect(renderTemplate("{{.trigger.name}} on {{ .trigger.local_date }}.", values)).toBe("Nightly on 2027-03-14.");
    expect(renderTemplate("a  \n {{- .trigger.name -}} \n  b", values)).toBe("aNightlyb");
    expect(renderTemplate("last: [{{.trigger.last_fired_at}}] no braces } here {", values)).toBe("last: [] no braces } here {");
  });

  it("refuses unknown variables, other actions and unclosed actions", () => {
    for (const bad of ["{{.trigger.date}}", "{{.name}}", "{{if .trigger.name}}x{{end}}", "{{/* c */}}", "open {{.trigger.name"]) {
      expect(() => parseTemplate(bad), bad).toThrow(TemplateError);
    }
  });

  it("refuses a rendered message over 64 KiB", () => {
    expect(() => renderTemplate("{{.trigger.name}}".repeat(10_000), values)).toThrow(TemplateError);
  });
});
