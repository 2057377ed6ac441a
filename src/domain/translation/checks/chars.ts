// Character checks of weblate/checks/chars.py: leading/trailing whitespace and newlines, double
// space, terminal punctuation (full stop, colon, question and exclamation mark, ellipsis,
// interrobang) with Weblate's per-language exceptions, zero-width space, kashida, newline counts.

import type { CheckContext, SingleCheck } from './types.ts';

/** Python's len(): code points, not UTF-16 units. */
export function plen(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Last code point ('' for an empty string). */
export function lastChar(s: string): string {
  if (!s) return '';
  const c = s.charCodeAt(s.length - 1);
  if (c >= 0xdc00 && c <= 0xdfff && s.length >= 2) {
    const h = s.charCodeAt(s.length - 2);
    if (h >= 0xd800 && h <= 0xdbff) return s.slice(-2);
  }
  return s[s.length - 1];
}

function firstChar(s: string): string {
  return s ? String.fromCodePoint(s.codePointAt(0)!) : '';
}

/** BaseCheck.check_chars: whether exactly one of source and target has one of `chars` at the end (or start). */
export function checkChars(source: string, target: string, pos: 0 | -1, chars: ReadonlySet<string>): boolean {
  if (!source || !target) return false;
  const s = pos === 0 ? firstChar(source) : lastChar(source);
  const t = pos === 0 ? firstChar(target) : lastChar(target);
  return chars.has(s) !== chars.has(t);
}

const set = (...c: string[]) => new Set(c);

const MY_QUESTION_MARK = '\u1038\u104b';
const INTERROBANGS = ['?!', '!?', '؟!', '!؟', '？！', '！？', '⁈', '⁉'];
const endsWithAny = (s: string, list: readonly string[]) => list.some((x) => s.endsWith(x));

const KASHIDA = ['\u0640', '\uFCF2', '\uFCF3', '\uFCF4', '\uFE71', '\uFE77', '\uFE79', '\uFE7B', '\uFE7D', '\uFE7F'];

const STOP_DEFAULT = set('.', '。', '।', '۔', '։', '·', '෴', '។', '።');
const STOP_CJK = set(';', ':', '：', '.', '。');
const STOP_HY = set('.', '。', '।', '۔', '։', '·', '෴', '។', ':', '՝', '?', '!', '`');
const STOP_HI = set('.', '\u0964', '\u09f7', '|');
const STOP_SAT = set('.', '᱾');
const STOP_MY = set('.', '။');
const QUESTION_DEFAULT = set('?', '՞', '؟', '⸮', '？', '፧', '꘏', '⳺');
const QUESTION_HY = set('?', '՞', '։');
const QUESTION_EL = set('?', ';', ';');
const EXCLAMATION_DEFAULT = set('!', '！', '՜', '᥄', '႟', '߹');
const EXCLAMATION_MY = set('!', '႟');
const COLON_DEFAULT = set(':', '：', '៖');
const COLON_HY = set(':', '՝', '`');

const lstripSpaces = (s: string) => s.replace(/^ +/, '');
const rstripSpaces = (s: string) => s.replace(/ +$/, '');

export const CHAR_CHECKS: SingleCheck[] = [
  {
    id: 'begin_newline',
    name: 'Starting newline',
    single: (source, target) => checkChars(source, target, 0, set('\n')),
  },
  {
    id: 'end_newline',
    name: 'Trailing newline',
    single: (source, target) => checkChars(source, target, -1, set('\n')),
  },
  {
    id: 'begin_space',
    name: 'Starting spaces',
    single(source, target) {
      // One letter things are usually decimal/thousand separators
      if (plen(source) <= 1 && plen(target) <= 1) return false;
      const strippedTarget = lstripSpaces(target);
      // String translated to spaces only
      if (!strippedTarget) return false;
      return source.length - lstripSpaces(source).length !== target.length - strippedTarget.length;
    },
  },
  {
    id: 'end_space',
    name: 'Trailing space',
    single(source, target) {
      if (plen(source) <= 1 && plen(target) <= 1) return false;
      if (!source || !target) return false;
      const strippedTarget = rstripSpaces(target);
      if (!strippedTarget) return false;
      return source.length - rstripSpaces(source).length !== target.length - strippedTarget.length;
    },
  },
  {
    id: 'double_space',
    name: 'Double space',
    single(source, target) {
      if (plen(source) <= 1 && plen(target) <= 1) return false;
      if (!source || !target) return false;
      if (source.includes('  ')) return false;
      return target.includes('  ');
    },
  },
  {
    id: 'end_stop',
    name: 'Mismatched full stop',
    // Thai and Lojban do not have a full stop
    skip: (ctx) => isBase(ctx, 'th', 'jbo'),
    single(source, target, ctx) {
      // Might need to use shortcut in translation
      if (plen(source) <= 4) return false;
      if (!target) return false;
      // Allow ... to be translated into ellipsis
      if (source.endsWith('...') && lastChar(target) === '…') return false;
      if (isCjk(ctx) && (source.endsWith(':') || source.endsWith(';'))) return checkChars(source, target, -1, STOP_CJK);
      if (isBase(ctx, 'hy')) return checkChars(source, target, -1, STOP_HY);
      if (isBase(ctx, 'hi', 'bn', 'or')) return checkChars(source, target, -1, STOP_HI);
      if (isBase(ctx, 'sat')) return checkChars(source, target, -1, STOP_SAT);
      if (isBase(ctx, 'my')) {
        // Leave this to the question mark check
        if (target.endsWith(MY_QUESTION_MARK)) return false;
        return checkChars(source, target, -1, STOP_MY);
      }
      return checkChars(source, target, -1, STOP_DEFAULT);
    },
  },
  {
    id: 'end_colon',
    name: 'Mismatched colon',
    skip: (ctx) => isBase(ctx, 'th', 'jbo'),
    single(source, target, ctx) {
      if (!source || !target) return false;
      const last = lastChar(source);
      if (isBase(ctx, 'hy')) return last === ':' ? checkChars(source, target, -1, COLON_HY) : false;
      // Japanese sentence might need to end with full stop in case it's used before list
      if (isCjk(ctx)) return last === ':' || last === ';' ? checkChars(source, target, -1, STOP_CJK) : false;
      return checkChars(source, target, -1, COLON_DEFAULT);
    },
  },
  {
    id: 'end_question',
    name: 'Mismatched question mark',
    skip: (ctx) => isBase(ctx, 'th', 'jbo'),
    single(source, target, ctx) {
      if (!source || !target) return false;
      if (endsWithAny(source, INTERROBANGS) || endsWithAny(target, INTERROBANGS)) return false;
      if (isBase(ctx, 'hy')) return lastChar(source) === '?' ? checkChars(source, target, -1, QUESTION_HY) : false;
      if (isBase(ctx, 'el')) return lastChar(source) === '?' ? !QUESTION_EL.has(lastChar(target)) : false;
      if (isBase(ctx, 'my')) return source.endsWith('?') !== target.endsWith(MY_QUESTION_MARK);
      return checkChars(source, target, -1, QUESTION_DEFAULT);
    },
  },
  {
    id: 'end_exclamation',
    name: 'Mismatched exclamation mark',
    // Thai, Lojban and Armenian do not have an exclamation mark
    skip: (ctx) => isBase(ctx, 'hy', 'th', 'jbo'),
    single(source, target, ctx) {
      if (!source || !target) return false;
      if (endsWithAny(source, INTERROBANGS) || endsWithAny(target, INTERROBANGS)) return false;
      if (isBase(ctx, 'eu') && lastChar(source) === '!' && target.includes('¡') && target.includes('!')) return false;
      if (isBase(ctx, 'my')) return checkChars(source, target, -1, EXCLAMATION_MY);
      if (source.endsWith('Texy!') || target.endsWith('Texy!')) return false;
      return checkChars(source, target, -1, EXCLAMATION_DEFAULT);
    },
  },
  {
    id: 'end_interrobang',
    name: 'Mismatched interrobang',
    single(source, target) {
      if (!source || !target) return false;
      return endsWithAny(source, INTERROBANGS) !== endsWithAny(target, INTERROBANGS);
    },
  },
  {
    id: 'end_ellipsis',
    name: 'Mismatched ellipsis',
    skip: (ctx) => isBase(ctx, 'th', 'jbo'),
    single(source, target) {
      if (!target) return false;
      if (source.endsWith('...') && lastChar(target) === '…') return false;
      return checkChars(source, target, -1, set('…'));
    },
  },
  {
    id: 'escaped_newline',
    name: 'Mismatched \\n',
    single(source, target) {
      if (!target || !source) return false;
      // Windows paths like C:\\foo\\bar are not newlines
      const ignore = /[A-Z]:\\\\[^\\ ]+(\\[^\\ ]+)+/g;
      return count(source.replace(ignore, ''), '\\n') !== count(target.replace(ignore, ''), '\\n');
    },
  },
  {
    id: 'newline-count',
    name: 'Mismatching line breaks',
    single(source, target) {
      if (!target || !source) return false;
      return count(source, '\n') !== count(target, '\n');
    },
  },
  {
    id: 'zero-width-space',
    name: 'Zero-width space',
    single(source, target, ctx) {
      if (isBase(ctx, 'km')) return false;
      if (source.includes('\u200b')) return false;
      return target.includes('\u200b');
    },
  },
  {
    id: 'kashida',
    name: 'Kashida letter used',
    single: (_source, target) => KASHIDA.some((k) => target.includes(k)),
  },
];

/** Python's str.count: non-overlapping occurrences. */
function count(s: string, needle: string): number {
  let n = 0;
  for (let i = s.indexOf(needle); i !== -1; i = s.indexOf(needle, i + needle.length)) n++;
  return n;
}

function isBase(ctx: CheckContext, ...codes: string[]): boolean {
  return codes.includes(ctx.targetBase);
}

function isCjk(ctx: CheckContext): boolean {
  return isBase(ctx, 'ja', 'zh', 'ko');
}
