// The release date: the `date` parameter (ISO 8601; its offset is kept, as Ruby's DateTime keeps it)
// and Ruby's strftime for the configurable `date_format`.

export interface ReleaseDate {
  /** milliseconds since the epoch */
  ms: number;
  /** nanoseconds within the second (0..999_999_999) */
  nanos: number;
  /** offset from UTC in minutes */
  offset: number;
}

export function nowReleaseDate(now = Date.now()): ReleaseDate {
  return { ms: now, nanos: (((now % 1000) + 1000) % 1000) * 1_000_000, offset: 0 };
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** ISO 8601 date or date-time (no offset: UTC); null when it is not one or not a real time. */
export function parseReleaseDate(input: string): ReleaseDate | null {
  const m = ISO.exec(input.trim());
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const hour = m[4] ? Number(m[4]) : 0;
  const minute = m[5] ? Number(m[5]) : 0;
  const second = m[6] ? Number(m[6]) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = m[11] ? Number(m[11]) : 0;
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const frac = (m[7] ?? '').slice(0, 9).padEnd(9, '0');
  const nanos = Number(frac);
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const ms = d.getTime() - offset * 60_000 + Math.floor(nanos / 1_000_000);
  return { ms, nanos, offset };
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

interface Fields {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
  wday: number; // 0 = Sunday
  yday: number; // 1..366
  offset: number; // minutes
  epochSeconds: number;
  epochMs: number;
}

function fieldsOf(d: ReleaseDate): Fields {
  const local = new Date(d.ms + d.offset * 60_000);
  const year = local.getUTCFullYear();
  const startOfYear = new Date(0);
  startOfYear.setUTCFullYear(year, 0, 1);
  startOfYear.setUTCHours(0, 0, 0, 0);
  const midnight = new Date(local.getTime());
  midnight.setUTCHours(0, 0, 0, 0);
  return {
    year,
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    nanos: d.nanos,
    wday: local.getUTCDay(),
    yday: Math.round((midnight.getTime() - startOfYear.getTime()) / 86_400_000) + 1,
    offset: d.offset,
    epochSeconds: Math.floor(d.ms / 1000),
    epochMs: d.ms,
  };
}

/** ISO 8601 week-based year and week number. */
function isoWeek(f: Fields): { year: number; week: number } {
  const wdayMon = (f.wday + 6) % 7; // Monday = 0
  // the Thursday of this week decides the year
  const thursday = new Date(0);
  thursday.setUTCFullYear(f.year, f.month - 1, f.day - wdayMon + 3);
  thursday.setUTCHours(0, 0, 0, 0);
  const year = thursday.getUTCFullYear();
  const jan1 = new Date(0);
  jan1.setUTCFullYear(year, 0, 1);
  jan1.setUTCHours(0, 0, 0, 0);
  const week = Math.floor((thursday.getTime() - jan1.getTime()) / 86_400_000 / 7) + 1;
  return { year, week };
}

function offsetString(offset: number, colons: number): string {
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  if (colons === 0) return `${sign}${hh}${mm}`;
  if (colons === 1) return `${sign}${hh}:${mm}`;
  return `${sign}${hh}:${mm}:00`;
}

function pad(value: string, width: number, char: string): string {
  if (value.startsWith('-') && char === '0') return '-' + value.slice(1).padStart(width - 1, '0');
  return value.padStart(width, char);
}

/**
 * Ruby's DateTime#strftime: flags `-` (no padding), `_` (spaces), `0` (zeros), `^` (upper case),
 * `#` (swap case), a width, and the conversions Y C y m B b h d e j H k I l M S L N p P A a u w
 * U W G g V s Q z :z ::z Z c D x F T X R r v + n t %. Anything else is copied as it is.
 */
export function strftime(format: string, date: ReleaseDate): string {
  const f = fieldsOf(date);
  let out = '';
  let i = 0;
  while (i < format.length) {
    const ch = format[i];
    if (ch !== '%') {
      out += ch;
      i++;
      continue;
    }
    const start = i;
    i++;
    let flags = '';
    while (i < format.length && '-_0^#'.includes(format[i])) flags += format[i++];
    let widthText = '';
    while (i < format.length && format[i] >= '0' && format[i] <= '9') widthText += format[i++];
    let colons = 0;
    while (format[i] === ':') {
      colons++;
      i++;
    }
    const conv = format[i];
    i++;
    if (conv === undefined) {
      out += format.slice(start);
      break;
    }
    const width = widthText ? Number(widthText) : null;
    const noPad = flags.includes('-');
    const upper = flags.includes('^');
    const swap = flags.includes('#');
    const padChar = (dflt: string) => (flags.includes('_') ? ' ' : flags.includes('0') ? '0' : dflt);

    const num = (n: number, dfltWidth: number, dfltChar = '0') => {
      const s = String(n);
      if (noPad) return s;
      return pad(s, width ?? dfltWidth, padChar(dfltChar));
    };
    const text = (s: string, swapToLower = false) => {
      let v = s;
      if (upper) v = v.toUpperCase();
      else if (swap) v = swapToLower ? v.toLowerCase() : v.toUpperCase();
      if (noPad || width === null) return v;
      return pad(v, width, padChar(' '));
    };
    const composite = (fmt: string) => {
      let v = strftime(fmt, date);
      if (upper) v = v.toUpperCase();
      if (noPad || width === null) return v;
      return pad(v, width, padChar(' '));
    };

    switch (colons ? (conv === 'z' ? 'z' : '') : conv) {
      case 'Y':
        out += num(f.year, 4);
        break;
      case 'C':
        out += num(Math.floor(f.year / 100), 2);
        break;
      case 'y':
        out += num(((f.year % 100) + 100) % 100, 2);
        break;
      case 'm':
        out += num(f.month, 2);
        break;
      case 'B':
        out += text(MONTHS[f.month - 1]);
        break;
      case 'b':
      case 'h':
        out += text(MONTHS[f.month - 1].slice(0, 3));
        break;
      case 'd':
        out += num(f.day, 2);
        break;
      case 'e':
        out += num(f.day, 2, ' ');
        break;
      case 'j':
        out += num(f.yday, 3);
        break;
      case 'H':
        out += num(f.hour, 2);
        break;
      case 'k':
        out += num(f.hour, 2, ' ');
        break;
      case 'I':
        out += num(f.hour % 12 === 0 ? 12 : f.hour % 12, 2);
        break;
      case 'l':
        out += num(f.hour % 12 === 0 ? 12 : f.hour % 12, 2, ' ');
        break;
      case 'M':
        out += num(f.minute, 2);
        break;
      case 'S':
        out += num(f.second, 2);
        break;
      case 'L':
      case 'N': {
        const digits = width ?? (conv === 'L' ? 3 : 9);
        const ns = String(f.nanos).padStart(9, '0');
        out += digits <= 9 ? ns.slice(0, digits) : ns.padEnd(digits, '0');
        break;
      }
      case 'p':
        out += text(f.hour < 12 ? 'AM' : 'PM', true);
        break;
      case 'P':
        out += text(f.hour < 12 ? 'am' : 'pm');
        break;
      case 'A':
        out += text(DAYS[f.wday]);
        break;
      case 'a':
        out += text(DAYS[f.wday].slice(0, 3));
        break;
      case 'u':
        out += num(f.wday === 0 ? 7 : f.wday, 1);
        break;
      case 'w':
        out += num(f.wday, 1);
        break;
      case 'U':
        out += num(Math.floor((f.yday - 1 + 7 - f.wday) / 7), 2);
        break;
      case 'W':
        out += num(Math.floor((f.yday - 1 + 7 - ((f.wday + 6) % 7)) / 7), 2);
        break;
      case 'G':
        out += num(isoWeek(f).year, 4);
        break;
      case 'g':
        out += num(isoWeek(f).year % 100, 2);
        break;
      case 'V':
        out += num(isoWeek(f).week, 2);
        break;
      case 's':
        out += num(f.epochSeconds, 1);
        break;
      case 'Q':
        out += num(f.epochMs, 1);
        break;
      case 'z': {
        const s = offsetString(f.offset, colons);
        out += noPad || width === null ? s : s[0] + s.slice(1).padStart(width - 1, padChar('0'));
        break;
      }
      case 'Z':
        out += text(offsetString(f.offset, 1));
        break;
      case 'c':
        out += composite('%a %b %e %H:%M:%S %Y');
        break;
      case 'D':
      case 'x':
        out += composite('%m/%d/%y');
        break;
      case 'F':
        out += composite('%Y-%m-%d');
        break;
      case 'T':
      case 'X':
        out += composite('%H:%M:%S');
        break;
      case 'R':
        out += composite('%H:%M');
        break;
      case 'r':
        out += composite('%I:%M:%S %p');
        break;
      case 'v':
        out += composite('%e-%^b-%4Y');
        break;
      case '+':
        out += composite('%a %b %e %H:%M:%S %Z %Y');
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '%':
        out += '%';
        break;
      default:
        out += format.slice(start, i);
    }
  }
  return out;
}
