// GitLab's durations (ChronicDuration.parse, raise_exceptions on as gitlab's initializer sets it): the CI
// file's `timeout`, `start_in` and `expire_in`, and the `default_artifacts_expire_in` setting, behind
// Gitlab::Ci::Build::DurationParser for artifacts, which reads "never" as no expiry. "3600", "1h 30m",
// "3 days 4 hrs", "1 week", "01:30:00"; a bare number counts seconds; days are 24 h, weeks 7 days,
// months 30 days, years 365.25 days (chronic_duration's defaults).
const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  m: 60,
  h: 3600,
  d: 86400,
  w: 7 * 86400,
  mo: 30 * 86400,
  y: 31_557_600,
};

const UNITS: Record<string, string> = {
  s: 's',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  m: 'm',
  min: 'm',
  mins: 'm',
  minute: 'm',
  minutes: 'm',
  h: 'h',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  d: 'd',
  day: 'd',
  days: 'd',
  w: 'w',
  wk: 'w',
  wks: 'w',
  week: 'w',
  weeks: 'w',
  mo: 'mo',
  mos: 'mo',
  mon: 'mo',
  mons: 'mo',
  month: 'mo',
  months: 'mo',
  y: 'y',
  yr: 'y',
  yrs: 'y',
  year: 'y',
  years: 'y',
};

/** Seconds of a ChronicDuration string; null when it cannot be read. */
export function chronicSeconds(input: string): number | null {
  const text = input
    .trim()
    .toLowerCase()
    .replace(/\band\b|,/g, ' ')
    .trim();
  if (!text) return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text));
  const clock = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(text);
  if (clock) return clock[3] !== undefined ? Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3]) : Number(clock[1]) * 60 + Number(clock[2]);
  let total = 0;
  let consumed = '';
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/g)) {
    const unit = UNITS[m[2]!];
    if (!unit) return null;
    total += Number(m[1]) * UNIT_SECONDS[unit]!;
    consumed += m[0];
  }
  if (!consumed || consumed.replace(/\s+/g, '') !== text.replace(/\s+/g, '')) return null;
  return Math.round(total);
}

/** A duration of the CI file (a number of seconds, or a ChronicDuration string); null when not a duration. */
export function parseDuration(input: unknown): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? Math.round(input) : null;
  return typeof input === 'string' ? chronicSeconds(input) : null;
}

/** DurationValidator: a ChronicDuration or "never" (what `expire_in` accepts). */
export function validDuration(input: string): boolean {
  return isNever(input) || chronicSeconds(input) !== null;
}

function isNever(input: string): boolean {
  return input.trim().toLowerCase() === 'never';
}

/**
 * DurationParser#seconds_from_now: the expiry an `expire_in` gives, as ISO time; null = never expires
 * ("never", or a zero duration: ChronicDuration answers nil for 0). undefined when unreadable.
 */
export function expiryFrom(input: string, now = Date.now()): string | null | undefined {
  if (isNever(input)) return null;
  const s = chronicSeconds(input);
  if (s === null) return undefined;
  if (s === 0) return null;
  return new Date(now + s * 1000).toISOString();
}
