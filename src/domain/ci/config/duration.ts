// GitLab's durations (ChronicDuration as Gitlab::Ci uses it): "3600", "1h 30m", "3 days 4 hrs",
// "1 week", "01:30:00". Null when the text is not a duration.
const UNITS: [RegExp, number][] = [
  [/^(s|secs?|seconds?)$/, 1],
  [/^(m|mins?|minutes?)$/, 60],
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(d|days?)$/, 86_400],
  [/^(w|wks?|weeks?)$/, 604_800],
  [/^(mo|mos|months?)$/, 2_592_000],
  [/^(y|yrs?|years?)$/, 31_557_600],
];

export function parseDuration(input: unknown): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? Math.round(input) : null;
  if (typeof input !== 'string') return null;
  const text = input.trim().toLowerCase();
  if (!text) return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text));
  const clock = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(text);
  if (clock) return clock[3] !== undefined ? Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3]) : Number(clock[1]) * 60 + Number(clock[2]);
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let total = 0;
  let consumed = '';
  for (const m of text.matchAll(re)) {
    const unit = UNITS.find(([u]) => u.test(m[2]));
    if (!unit) return null;
    total += Number(m[1]) * unit[1];
    consumed += m[0];
  }
  const rest = text
    .replace(re, '')
    .replace(/\b(and)\b/g, '')
    .replace(/[\s,]/g, '');
  if (!consumed || rest) return null;
  return Math.round(total);
}
