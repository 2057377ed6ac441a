// Times are ISO-8601 UTC text with milliseconds; dates are YYYY-MM-DD.
export const nowIso = (): string => new Date().toISOString();
export const todayDate = (now = new Date()): string => now.toISOString().slice(0, 10);
let day = { text: '', from: 0, until: 0 };
/** Today's UTC date, as todayDate(), computed once a day (hot paths: token expiry on every request). */
export function currentDate(): string {
  const now = Date.now();
  if (now >= day.until || now < day.from) {
    const text = new Date(now).toISOString().slice(0, 10);
    const from = Date.parse(text + 'T00:00:00.000Z');
    day = { text, from, until: from + 86_400_000 };
  }
  return day.text;
}
export function addDays(date: string, days: number): string {
  const d = new Date(date + 'T00:00:00.000Z');
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
/** Strict YYYY-MM-DD that is a real calendar date. */
export function isDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(s + 'T00:00:00.000Z');
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}
/** Parses a datetime parameter (ISO 8601 or date) to ISO text, or null when not parseable. */
export function parseDateTime(s: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s.trim())) return null;
  const d = new Date(s.trim().replace(' ', 'T'));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
