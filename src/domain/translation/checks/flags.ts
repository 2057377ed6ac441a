// Translation flags (Weblate's weblate/checks/flags.py + parser.py) and a component's
// `enforced_checks` (weblate/trans/validators.py validate_enforced_checks).
//
// Flag syntax: comma separated flags, each a name optionally followed by `:`-separated parameters;
// a parameter is a bare word, a quoted string ('…' or "…", backslash escapes the quote, the backslash
// and \t \n \r \f) or a regular expression r"…". Names may contain inner spaces; surrounding
// whitespace is ignored. `fuzzy` and `#` are dropped, `markdown-text` is an alias of `md-text`.

export class FlagsParseError extends Error {}

const FLAG_ALIASES: Record<string, string> = { 'markdown-text': 'md-text' };
const NAME = /[^,:"' \r\n\t](?:[^,:"']*[^,:"' \r\n\t])?/y;
const WS = /[ \t\r\n]*/y;
const WS_ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

/** A flag with its parameters (null: a plain flag). Later flags of the same name replace earlier ones. */
export function parseFlagItems(text: string): Map<string, string[] | null> {
  const out = new Map<string, string[] | null>();
  let pos = 0;
  const skip = () => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };
  const name = (): string | null => {
    NAME.lastIndex = pos;
    const m = NAME.exec(text);
    if (!m) return null;
    pos = NAME.lastIndex;
    return m[0].trim();
  };
  const quoted = (q: string): string | null => {
    if (text[pos] !== q) return null;
    let value = '';
    for (let i = pos + 1; i < text.length; i++) {
      const ch = text[i];
      if (ch === '\\' && i + 1 < text.length) {
        const next = text[i + 1];
        if (next === q || next === '\\') value += next;
        else if (WS_ESCAPES[next]) value += WS_ESCAPES[next];
        else value += ch + next;
        i++;
      } else if (ch === q) {
        pos = i + 1;
        return value;
      } else value += ch;
    }
    throw new FlagsParseError(`Could not parse flags: unterminated quoted string at char ${pos}`);
  };
  const regex = (): string | null => {
    if (text[pos] !== 'r') return null;
    const save = pos;
    pos++;
    skip();
    if (text[pos] !== '"') {
      pos = save;
      return null;
    }
    return quoted('"');
  };

  skip();
  while (pos < text.length) {
    if (text[pos] === ',') {
      pos++;
      skip();
      continue;
    }
    const raw = name();
    if (raw === null) throw new FlagsParseError(`Could not parse flags: unexpected ${JSON.stringify(text[pos])} at char ${pos}`);
    const flag = FLAG_ALIASES[raw] ?? raw;
    let values: string[] | null = null;
    skip();
    while (text[pos] === ':') {
      pos++;
      skip();
      values ??= [];
      const value = regex() ?? name() ?? quoted("'") ?? quoted('"') ?? '';
      values.push(value);
      skip();
    }
    if (pos < text.length && text[pos] !== ',') throw new FlagsParseError(`Could not parse flags: unexpected ${JSON.stringify(text[pos])} at char ${pos}`);
    if (flag === 'fuzzy' || flag === '#') continue;
    out.delete(flag);
    out.set(flag, values);
  }
  return out;
}

/** The flag names of a flags string (a component's `check_flags`, a unit's `flags`/`extra_flags`). */
export function parseFlags(text: string): Set<string> {
  return new Set(parseFlagItems(text ?? '').keys());
}

/** All flags of several flag strings, as Weblate merges unit, translation and component flags. */
export function mergeFlags(...texts: (string | null | undefined)[]): Set<string> {
  const out = new Set<string>();
  for (const t of texts) if (t) for (const f of parseFlags(t)) out.add(f);
  return out;
}

/**
 * A component's `enforced_checks` (stored as a JSON list): the list of check ids. Throws with
 * Weblate's messages: "Enforced checks has to be a list." / "Unsupported enforced check: <id>".
 * Empty text is an empty list.
 */
export function parseEnforcedChecksWith(known: readonly string[], text: string): string[] {
  if (text == null || text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('Enforced checks has to be a list.');
  }
  if (!Array.isArray(value)) throw new Error('Enforced checks has to be a list.');
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !known.includes(item))
      throw new Error(`Unsupported enforced check: ${typeof item === 'string' ? item : JSON.stringify(item)}`);
    if (!out.includes(item)) out.push(item);
  }
  return out;
}
