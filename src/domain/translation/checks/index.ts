// Quality checks of translated strings, as Weblate runs them (weblate/checks/*.py, Unit.run_checks).
//
// runChecks() returns the ids of the failing checks, sorted. Like Weblate's BaseCheck.ignore_state,
// target checks skip empty (state 0) and read-only (state 100) units but do run on strings that need
// editing (10–12), not only on translated ones. Units of the source translation get no target checks
// (none of Weblate's source checks is implemented). A check is off when the unit's flags contain
// `ignore-<id>` (the id with `_` → `-`) or `ignore-all-checks`; format checks are on only with their
// flag (`c-format`, `python-format`, `python-brace-format`, …).

import { CHAR_CHECKS } from './chars.ts';
import { FORMAT_CHECKS } from './format.ts';
import { SAME_CHECK } from './same.ts';
import { ENGLISH_PLURAL, pairForms, type PluralDef } from './plurals.ts';
import { parseEnforcedChecksWith } from './flags.ts';
import type { CheckContext, SingleCheck, UnitCheck } from './types.ts';

export { parseFlags, parseFlagItems, mergeFlags, FlagsParseError } from './flags.ts';
export type { PluralDef } from './plurals.ts';

const PLURAL_CHECKS: UnitCheck[] = [
  {
    id: 'plurals',
    name: 'Missing plurals',
    unit(sources, targets) {
      // Is this plural? Is at least something translated? Then no form may be empty.
      if (sources.length === 1) return false;
      if (targets.every((t) => t === '')) return false;
      return targets.includes('');
    },
  },
  {
    id: 'same-plurals',
    name: 'Same plurals',
    unit(sources, targets) {
      if (sources.length === 1) return false;
      if (targets[0] === '') return false;
      return new Set(targets).size !== targets.length;
    },
  },
];

type AnyCheck = (SingleCheck | UnitCheck) & { defaultDisabled?: boolean };
const ALL_CHECKS: AnyCheck[] = [SAME_CHECK, ...CHAR_CHECKS, ...FORMAT_CHECKS, ...PLURAL_CHECKS];

/** Ids of the implemented checks (Weblate's check ids), sorted. */
export const CHECK_IDS: readonly string[] = ALL_CHECKS.map((c) => c.id).sort();

/** Check id → Weblate's name of the check. */
export const CHECK_NAMES: Readonly<Record<string, string>> = Object.fromEntries(ALL_CHECKS.map((c) => [c.id, c.name]));

export interface RunChecksInput {
  /** source plural forms */
  sources: string[];
  /** target plural forms */
  targets: string[];
  state: number;
  /** all flags of the unit: component check_flags, file flags, unit flags and extra_flags */
  flags: Set<string>;
  sourceLanguage: string;
  targetLanguage: string;
  /** number of plural forms of the translation's language */
  pluralCount: number;
  /** whether the unit belongs to the component's source translation */
  isSource: boolean;
  /** gettext plural formula of the translation's language (pairs plural forms; guessed when absent) */
  pluralFormula?: string;
  /** plural definition of the source language (English, `n != 1`, when absent) */
  sourcePlural?: PluralDef;
  /** the unit's note (gettext comments): DocBook tags are exempt from "same" */
  note?: string;
  /** project and component names: their words are exempt from "same" */
  projectName?: string;
  componentName?: string;
}

/** Weblate's Language.base_code: `pt_BR`, `pt-BR`, `sr@latin` → `pt`, `sr`. */
export function baseCode(code: string): string {
  return code.replaceAll('_', '-').split('-')[0].split('@')[0].toLowerCase();
}

function ignoreString(id: string): string {
  return `ignore-${id.replaceAll('_', '-')}`;
}

/** Pads or truncates targets to the translation's plural count (Unit.get_target_plurals). */
function adjustTargets(sources: string[], targets: string[], pluralCount: number): string[] {
  const plural = sources.length > 1 || targets.length > 1;
  const n = plural ? Math.max(1, pluralCount) : 1;
  const out = targets.slice(0, n);
  while (out.length < n) out.push('');
  return out;
}

export function runChecks(input: RunChecksInput): string[] {
  const { state, flags } = input;
  if (input.isSource) return [];
  // BaseCheck.ignore_state: untranslated and read-only strings are not checked
  if (state === 0 || state === 100) return [];
  if (flags.has('ignore-all-checks')) return [];
  const sources = input.sources.length ? input.sources : [''];
  const targets = adjustTargets(sources, input.targets, input.pluralCount);
  const extraIgnore = new Set(`${input.projectName ?? ''} ${input.componentName ?? ''}`.toLowerCase().split(/\s+/).filter(Boolean));
  const ctx: CheckContext = {
    flags,
    targetBase: baseCode(input.targetLanguage),
    sourceBase: baseCode(input.sourceLanguage),
    note: input.note ?? '',
    extraIgnore,
    sourcePlural: input.sourcePlural ?? (sources.length === 1 ? { number: 1, formula: '0' } : ENGLISH_PLURAL),
    targetPlural: { number: input.pluralCount, formula: input.pluralFormula ?? defaultFormula(input.pluralCount) },
  };
  let pairs: [string, string][] | null = null;
  const failing: string[] = [];
  for (const check of ALL_CHECKS) {
    if (flags.has(ignoreString(check.id))) continue;
    if (check.defaultDisabled && !flags.has(check.id.replaceAll('_', '-'))) continue;
    if (check.skip?.(ctx)) continue;
    let failed: boolean;
    if ('unit' in check) failed = check.unit(sources, targets, ctx);
    else {
      pairs ??= pairForms(sources, targets, ctx.sourcePlural, ctx.targetPlural);
      failed = pairs.some(([s, t]) => check.single(s, t, ctx));
    }
    if (failed) failing.push(check.id);
  }
  return failing.sort();
}

/** The usual formula for a count of forms when the language's own is not given (null: unknown). */
function defaultFormula(count: number): string | null {
  if (count === 1) return '0';
  if (count === 2) return 'n != 1';
  return null;
}

/**
 * A component's `enforced_checks` (a JSON list such as '["same"]') → check ids. Throws Weblate's
 * messages: "Enforced checks has to be a list." or "Unsupported enforced check: <id>".
 */
export function parseEnforcedChecks(text: string): string[] {
  return parseEnforcedChecksWith(CHECK_IDS, text);
}

/** Failing checks the component enforces (Weblate then keeps the string as needing editing). */
export function enforcedFailures(failing: readonly string[], enforced: readonly string[]): string[] {
  return failing.filter((id) => enforced.includes(id));
}
