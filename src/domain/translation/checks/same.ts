// The "same" check (weblate/checks/same.py, SameCheck): a translation identical to its source.
// Following Weblate it does not fire for one-character strings, numbers and ratios ("1:4", "1/2"),
// copyright lines, strings that are only placeholders, markup, e-mail addresses, URLs, domains, paths,
// hash tags or template markup, all-uppercase abbreviations, strings whose every word is short
// (<= 2 letters), a commonly untranslated term, a language name or a word of the project/component
// name; nor when the target language is the source language (or English/Interlingua for an English
// source). `strict-same` reduces the exceptions to "nothing left after removing placeholders".
// The word lists are Hearth's own, smaller than Weblate's.

import { readCsv } from '../languages/seed.ts';
import { activeFormatRule } from './format.ts';
import { plen } from './chars.ts';
import type { CheckContext, SingleCheck } from './types.ts';

const EMAIL_RE = /[a-z0-9_.-]+@[a-z0-9_.-]+\.[a-z0-9-]{2,}/gi;
const URL_RE =
  /(?:http|ftp)s?:\/\/(?:(?:[A-Z0-9](?:[A-Z0-9-]{0,61}[A-Z0-9])?\.)+(?:[A-Z]{2,6}\.?|[A-Z0-9-]{2,}\.?)|localhost|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?::\d+)?(?:\/?|[/?]\S+)$/gi;
const HASH_RE = /#[A-Za-z0-9_-]*/g;
const DOMAIN_RE = /(?:[A-Z0-9](?:[A-Z0-9-]{0,61}[A-Z0-9])?\.)+(?:[A-Z]{2,6}\.?|[A-Z0-9-]{2,}\.?)/gi;
const PATH_RE = /(^|[ ])(\/[a-zA-Z0-9=:?._-]+)+/g;
const TEMPLATE_RE = /\{[a-z_-]+\}|@[A-Z_]@/gi;
const RST_RE = /(:[a-z:]+:`[^`]+`|``[^`]+``)/g;
const TAG_RE = /<\/?[A-Za-z!?][^>]*>/g;
const EMOJI_RE = /[\u{2600}-\u{27bf}]|[\u{1f000}-\u{1fffd}]/gu;
const SPLIT_RE = /(?:&(?:nbsp|rsaquo|lt|gt|amp|ldquo|rdquo|times|quot);|[() ,.^`"'\\/_<>!?;:|{}*@%#&~=+\r\n✓—‑…[\]0-9-])+/i;
const DB_TAGS = new Set(['screen', 'indexterm', 'programlisting']);

/** Terms usually left untranslated (Hearth's own list). */
const IGNORE_WORDS = new Set(
  (
    'admin api app audio backend backup blog bluetooth browser byte bytes cache chat cookie cookies copyright cpu csv ' +
    'dashboard debug dns e-mail email emoji euro firmware ftp gif git github gitlab google gps gpu hardware hashtag ' +
    'hotel html http https info internet javascript jpeg jpg json kernel latex linux login logout markdown menu ' +
    'mysql normal offline online pdf php pixel pixels plugin plugins png postgresql proxy python radio ruby server ' +
    'sms software sql sqlite ssh status svg taxi tcp twitter udp unicode url usb utf version video vpn web weblate ' +
    'website widget widgets wifi wi-fi windows xml yaml zip hearth'
  ).split(' '),
);

let languageNames: Set<string> | null = null;
/** Lower-cased English language names (bundled language data), like Weblate's check_languages. */
function languages(): Set<string> {
  if (!languageNames) {
    languageNames = new Set();
    try {
      for (const row of readCsv('languages.csv')) if (row.name) languageNames.add(row.name.toLowerCase());
    } catch {
      // the list only widens the exceptions
    }
  }
  return languageNames;
}

function isUpper(s: string): boolean {
  return s === s.toUpperCase() && s !== s.toLowerCase();
}

/** Python's str.strip(chars). */
function stripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

function stripFormat(text: string, flags: ReadonlySet<string>): string {
  const rule = activeFormatRule(flags);
  if (rule) return text.replace(new RegExp(rule.regexp.source, 'g'), '');
  if (flags.has('rst-text')) return text.replace(RST_RE, '');
  return text;
}

function stripString(text: string): string {
  return text
    .replace(TAG_RE, '')
    .replace(EMOJI_RE, ' ')
    .replace(EMAIL_RE, '')
    .replace(URL_RE, '')
    .replace(HASH_RE, '')
    .replace(DOMAIN_RE, '')
    .replace(PATH_RE, '')
    .replace(TEMPLATE_RE, '');
}

function testWord(word: string, extra: ReadonlySet<string>): boolean {
  return plen(word) <= 2 || IGNORE_WORDS.has(word) || languages().has(word) || extra.has(word);
}

/** SameCheck.should_ignore: strings that are commonly the same in the translation. */
export function sameShouldIgnore(source: string, ctx: CheckContext): boolean {
  // Some DocBook tags and po4a code blocks (from gettext notes)
  if ((ctx.note.startsWith('Tag: ') && DB_TAGS.has(ctx.note.slice(5))) || ctx.note === 'type: delimited block -') return true;
  let stripped = stripFormat(source, ctx.flags);
  if (ctx.flags.has('strict-same')) return !stripped;
  const lower = source.toLowerCase();
  // Numbers, ratios, copyright lines
  if (plen(stripChars(source, '0123456789:/,.')) <= 1 || lower.includes('(c) copyright') || source.includes('©')) return true;
  stripped = stripString(stripped);
  // Nothing (or one letter) left to translate, or an abbreviation
  if (plen(stripped) <= 1 || isUpper(stripped)) return true;
  for (const word of stripped.toLowerCase().split(SPLIT_RE)) if (!testWord(word, ctx.extraIgnore)) return false;
  return true;
}

export const SAME_CHECK: SingleCheck = {
  id: 'same',
  name: 'Unchanged translation',
  skip(ctx) {
    // The source language itself; English variants (and Interlingua) for an English source
    return ctx.targetBase === ctx.sourceBase || (ctx.sourceBase === 'en' && (ctx.targetBase === 'en' || ctx.targetBase === 'ia'));
  },
  single(source, target, ctx) {
    // One letter things are usually labels or decimal/thousand separators
    if (plen(source) <= 1 && plen(target) <= 1) return false;
    if (sameShouldIgnore(source, ctx)) return false;
    return source === target;
  },
};
