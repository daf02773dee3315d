// Cron schedules in a time zone, the format of spec.syncWindows[].schedule. The one place that
// imports croner (no timers: a Cron without a function schedules nothing); it runs the same in
// workerd and Node (time zones through Intl.DateTimeFormat, which both carry with full ICU data).
import { Cron } from "croner";

const UTC_NAMES = new Set(["UTC", "Etc/UTC", "Etc/GMT", "GMT"]);

/** A parsed schedule: its fire times as instants. */
export interface CronSchedule {
  /** The first fire time strictly after `after` (whole seconds), or undefined when none is left. */
  next(after: Date): Date | undefined;
}

/**
 * Parses a 5-field cron expression (minute hour day-of-month month day-of-week, Vixie cron: when
 * both day fields are restricted, a day matching either fires) or a nickname (@hourly, @daily,
 * @weekly, @monthly, @yearly) in IANA time zone `timeZone`. Across DST, croner follows Vixie
 * cron: a fixed time that falls in the spring-forward gap fires at the first valid time after
 * it, the same day; a fixed time that occurs twice fires once, at its first occurrence.
 * @throws Error naming what is wrong (the field, or the time zone)
 */
export function cronSchedule(expression: string, timeZone: string): CronSchedule {
  checkTimeZone(timeZone);
  // UTC needs no zone lookups: croner's fixed offset is about 6x faster than its Intl path.
  const zone = UTC_NAMES.has(timeZone) ? { utcOffset: 0 } : { timezone: timeZone };
  const cron = new Cron(expression.trim(), { ...zone, mode: "5-part", paused: true });
  return {
    next(after) {
      return cron.nextRun(after) ?? undefined;
    },
  };
}

/**
 * Why `expression` in `timeZone` is not a usable schedule, or undefined when it is: it must
 * parse, and fire at least once (a pattern such as "0 0 30 2 *" never does).
 */
export function cronIssue(expression: string, timeZone: string): string | undefined {
  let schedule: CronSchedule;
  try {
    schedule = cronSchedule(expression, timeZone);
  } catch (e) {
    return (e instanceof Error ? e.message : String(e)).replace(/^CronPattern: /, "");
  }
  // A pattern without a year repeats within 28 years; searching from a fixed instant keeps
  // validation pure.
  if (schedule.next(new Date(Date.UTC(2000, 0, 1))) === undefined) return "never fires";
  return undefined;
}

/** Why `timeZone` is not usable (not an IANA name the runtime knows), or undefined. */
export function timeZoneIssue(timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return undefined;
  } catch {
    return `unknown time zone "${timeZone}" (an IANA name such as Europe/Berlin)`;
  }
}

function checkTimeZone(timeZone: string): void {
  const issue = timeZoneIssue(timeZone);
  if (issue) throw new Error(issue);
}
