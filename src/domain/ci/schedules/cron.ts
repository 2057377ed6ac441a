// Cron lines of pipeline schedules (GitLab's Gitlab::Ci::CronParser over Fugit): five fields (or one of the
// @-names), evaluated in the schedule's time zone, daylight saving time included, by cron-parser.
import { CronExpressionParser } from 'cron-parser';

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** A time zone name the runtime knows (IANA, as TZInfo::Timezone; "UTC"). */
export function validTimezone(tz: string): boolean {
  if (!tz || tz.trim() !== tz) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** CronParser#cron_valid?: a line of five fields whose values are in range. */
export function validCron(cron: string): boolean {
  const line = cron.trim();
  if (!line) return false;
  if (line.startsWith('@')) return MACROS.has(line.toLowerCase());
  if (line.split(/\s+/).length !== 5) return false;
  try {
    CronExpressionParser.parse(line, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}

/** The first time after `from` that the line names in the time zone (null for a line that is not valid). */
export function nextRunAfter(cron: string, tz: string, from: Date): Date | null {
  if (!validCron(cron) || !validTimezone(tz)) return null;
  try {
    return CronExpressionParser.parse(cron.trim(), { tz, currentDate: from }).next().toDate();
  } catch {
    return null;
  }
}
