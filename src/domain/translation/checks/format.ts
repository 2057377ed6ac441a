// Format string checks of weblate/checks/format.py. Each is off unless its flag is present
// (`c-format`, `python-format`, `python-brace-format`, …: the check id with `_` → `-`). Placeholders
// are extracted from source and target and compared: in order when the source uses positional
// placeholders, as multisets when all are named/numbered (`%(name)s`, `%1$s`, `{name}`). Escapes
// (`%%`, `{{`, `}}`) do not count. Plural forms follow BaseFormatCheck.check_generator.

import type { CheckContext, UnitCheck } from './types.ts';
import { pluralExamples } from './plurals.ts';

interface FormatRule {
  id: string;
  name: string;
  flag: string;
  regexp: RegExp;
  extract(m: RegExpExecArray): string;
  isPositionBased(s: string): boolean;
  normalizeRemove: ReadonlySet<string>;
  cleanup(s: string): string;
  /** extra problems found in the target alone (single braces for python-brace-format) */
  targetExtra?(target: string): string[];
}

// Python's PYTHON_PRINTF_MATCH, C_PRINTF_MATCH, PHP_PRINTF_MATCH, PYTHON_BRACE_MATCH (same alternation order).
export const PYTHON_PRINTF = /%((?:\(([^)]+)\))?(?:[ +#-]*(?:\d+)?(?:\.\d+)?(?:hh|h|l|ll)?[a-zA-Z%]|))/g;
export const C_PRINTF = /%((?:\d+\$)?(?:[ +#'-]*(?:\d+)?(?:\.\d+)?(?:hh|h|l|ll)?[a-zA-Z%]|))/g;
export const PHP_PRINTF = /%((?:\d+\$)?(?:[ +#-]*(?:\d+)?(?:\.\d+)?(?:hh|h|l|ll)?[a-zA-Z%]|))/g;
export const PYTHON_BRACE =
  /\}(\})|\{(\{)|\{(|(?:[0-9]+|[_A-Za-z][_0-9A-Za-z]*)(?:\.[_A-Za-z][_0-9A-Za-z]*|\[[^\]]+\])*(?:![rsa])?(?::.?[<>=^]?[+ -]?[#]?0?(?:[1-9][0-9]*)?,?(?:\.[1-9][0-9]*)?[bcdeEfFgGnosxX%]?)?)\}/g;

const simple = (m: RegExpExecArray) => m[1] ?? '';
const cFormatPositional = (s: string) => !s.includes('$') && s !== '%';
const stripQuote = (s: string) => (s.includes("'") ? s.replaceAll("'", '') : s);
const PERCENT = new Set(['%']);

function printf(id: string, name: string, regexp: RegExp, isPositionBased = cFormatPositional): FormatRule {
  return { id, name, flag: id.replaceAll('_', '-'), regexp, extract: simple, isPositionBased, normalizeRemove: PERCENT, cleanup: stripQuote };
}

export const FORMAT_RULES: FormatRule[] = [
  printf('python_format', 'Python format', PYTHON_PRINTF, (s) => !s.includes('(') && s !== '{' && s !== '}'),
  printf('php_format', 'PHP format', PHP_PRINTF),
  printf('c_format', 'C format', C_PRINTF),
  printf('perl_format', 'Perl format', C_PRINTF),
  printf('javascript_format', 'JavaScript format', C_PRINTF),
  printf('lua_format', 'Lua format', C_PRINTF),
  {
    id: 'python_brace_format',
    name: 'Python brace format',
    flag: 'python-brace-format',
    regexp: PYTHON_BRACE,
    extract: (m) => m[1] || m[2] || m[3] || '',
    isPositionBased: (s) => !s,
    normalizeRemove: new Set(['{', '}']),
    cleanup: (s) => s,
    targetExtra(target) {
      const rest = target.replace(PYTHON_BRACE, '');
      return ['{', '}'].filter((c) => rest.includes(c));
    },
  },
];

function extract(rule: FormatRule, text: string): string[] {
  const out: string[] = [];
  const re = new RegExp(rule.regexp.source, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(rule.cleanup(rule.extract(m)));
    if (m[0] === '') re.lastIndex++;
  }
  return out;
}

function normalize(rule: FormatRule, matches: string[]): string[] {
  return matches.filter((m) => !rule.normalizeRemove.has(m));
}

/** BaseFormatCheck.check_format: whether the placeholders of target do not match those of source. */
export function formatMismatch(rule: FormatRule, source: string, target: string, ignoreMissing: boolean): boolean {
  if (!target || !source) return false;
  const src = normalize(rule, extract(rule, source));
  const tgt = normalize(rule, extract(rule, target));
  const usesPosition = src.length ? src.some((x) => rule.isPositionBased(x)) : true;
  let missing: string[] = [];
  let extra: string[] = [];
  if (!usesPosition) {
    const counts = new Map<string, number>();
    for (const s of src) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (const t of tgt) counts.set(t, (counts.get(t) ?? 0) - 1);
    for (const [k, v] of counts) {
      if (v > 0) missing.push(k);
      if (v < 0) extra.push(k);
    }
  } else {
    const n = Math.min(src.length, tgt.length);
    for (let i = 0; i < n; i++) {
      if (src[i] !== tgt[i]) {
        missing.push(src[i]);
        extra.push(tgt[i]);
      }
    }
    missing = missing.concat(src.slice(tgt.length));
    extra = extra.concat(tgt.slice(src.length));
  }
  if (rule.targetExtra) extra = extra.concat(rule.targetExtra(target));
  // Missing placeholders may be left out of a plural form used for a single count ("one item")
  if (ignoreMissing && missing.length && !extra.length) return false;
  return missing.length > 0 || extra.length > 0;
}

/** Example counts of target plural form `i` (Plural.examples), guessed when the formula is unknown. */
function formExamples(ctx: CheckContext, i: number): string[] {
  const examples = pluralExamples(ctx.targetPlural.formula);
  if (examples) return examples.get(i) ?? [];
  // Unknown formula: the first of several forms is taken to be the singular ("one": 1 only).
  if (ctx.targetPlural.number > 1 && i === 0) return ['1'];
  return ['0', '2', '3'];
}

function checkGenerator(rule: FormatRule, sources: string[], targets: string[], ctx: CheckContext): boolean {
  // Languages with a single plural form are checked against the source plural
  if (sources.length > 1 && targets.length === 1) return formatMismatch(rule, sources[1], targets[0], false);
  // Use the plural as source when the singular lacks placeholders and the plural has them
  const source = sources.length > 1 && !extract(rule, sources[0]).length && extract(rule, sources[1]).length ? sources[1] : sources[0];
  const first = formExamples(ctx, 0);
  const ignoreFirst =
    sources.length > 1 && !ctx.flags.has('strict-format') && (first.length === 1 || (first.length === 2 && first[0] === '0' && first[1] === '1'));
  if (formatMismatch(rule, source, targets[0], ignoreFirst)) return true;
  if (sources.length === 1) return false;
  for (let i = 1; i < targets.length; i++) {
    if (formatMismatch(rule, sources[1], targets[i], formExamples(ctx, i).length === 1)) return true;
  }
  return false;
}

export const FORMAT_CHECKS: UnitCheck[] = FORMAT_RULES.map((rule) => ({
  id: rule.id,
  name: rule.name,
  defaultDisabled: true,
  unit: (sources, targets, ctx) => checkGenerator(rule, sources, targets, ctx),
}));

/** Format rule whose flag is set first, in Weblate's FLAG_RULES order (used to strip placeholders). */
export function activeFormatRule(flags: ReadonlySet<string>): FormatRule | null {
  for (const flag of ['python-format', 'php-format', 'c-format', 'perl-format', 'javascript-format', 'lua-format', 'python-brace-format']) {
    if (flags.has(flag)) return FORMAT_RULES.find((r) => r.flag === flag)!;
  }
  return null;
}
