// GitLab's durations for artifacts (`expire_in`, `default_artifacts_expire_in`): ChronicDuration.parse
// (raise_exceptions on, as gitlab's initializer sets it) behind Gitlab::Ci::Build::DurationParser,
// which reads "never" as no expiry. A bare number counts seconds; days are 24 h, weeks 7 days, months
// 30 days, years 365.25 days (chronic_duration's defaults).
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
