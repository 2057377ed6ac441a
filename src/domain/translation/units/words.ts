// Word counting for a unit's `num_words`, as Weblate's count_words (weblate/trans/util.py):
//   sum(len(s.split()) for s in split_plural(string) if not is_unused_string(s))
// Every plural form counts (not only the first), forms starting with "<unused singular" (generated
// by some frameworks) are skipped, and words are runs of non-whitespace by Python's str.split(),
// whose whitespace includes U+001C–U+001F, U+0085 and the Unicode space separators.

import { PLURAL_SEPARATOR } from './hash.ts';

// Python's str.isspace() characters (bidi classes WS, B, S and category Zs).
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** Weblate's is_unused_string: a placeholder singular some frameworks generate. */
export function isUnusedString(text: string): boolean {
  return text.startsWith('<unused singular');
}

/** Words in one string, as Python's `len(text.split())`. */
export function countWordsIn(text: string): number {
  let n = 0;
  for (const part of text.split(PY_WHITESPACE)) if (part !== '') n++;
  return n;
}

/**
 * `num_words` of a unit: its source as stored by Hearth (plural forms joined by U+001E) or the forms.
 * Always counted on the source text, also for units of target translations (reference §8).
 */
export function countWords(source: string | readonly string[]): number {
  const forms = typeof source === 'string' ? source.split(PLURAL_SEPARATOR) : source;
  let total = 0;
  for (const form of forms) if (!isUnusedString(form)) total += countWordsIn(form);
  return total;
}
