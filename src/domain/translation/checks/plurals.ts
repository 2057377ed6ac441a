// Plural helpers the checks need (Weblate's lang/models.py Plural.examples and PluralMapper):
// which counts each plural form is used for, and which source form a target form is checked against.

import { compilePlural } from '../languages/plural.ts';

export interface PluralDef {
  number: number;
  /** gettext formula; null when unknown (then a positional fallback is used) */
  formula: string | null;
}

/** English, the usual source language. */
export const ENGLISH_PLURAL: PluralDef = { number: 2, formula: 'n != 1' };

const examplesCache = new Map<string, Map<number, string[]>>();

/**
 * Plural.examples: for 0…9999 and 10000…2000000 by 1000, up to ten counts per form (then "…").
 * Null when the formula is unknown or does not compile.
 */
export function pluralExamples(formula: string | null): Map<number, string[]> | null {
  if (formula == null) return null;
  const key = formula.replace(/\s+/g, '');
  let result = examplesCache.get(key);
  if (result) return result;
  let fn: (n: number) => number;
  try {
    fn = compilePlural(formula);
  } catch {
    return null;
  }
  result = new Map();
  const add = (i: number) => {
    let form: number;
    try {
      form = fn(i);
    } catch {
      return;
    }
    const list = result!.get(form) ?? [];
    if (list.length >= 10) return;
    list.push(String(i));
    result!.set(form, list);
  };
  for (let i = 0; i < 10000; i++) add(i);
  for (let i = 10000; i <= 2000000; i += 1000) add(i);
  for (const list of result.values()) if (list.length >= 10) list.push('…');
  if (examplesCache.size > 500) examplesCache.clear();
  examplesCache.set(key, result);
  return result;
}

/** Plural.same_as: same number of forms and the same form for every count checked. */
export function samePlural(a: PluralDef, b: PluralDef): boolean {
  if (a.number !== b.number) return false;
  if (a.formula == null || b.formula == null) return a.formula === b.formula;
  if (a.formula.replace(/\s+/g, '') === b.formula.replace(/\s+/g, '')) return true;
  const ea = pluralExamples(a.formula);
  const eb = pluralExamples(b.formula);
  if (!ea || !eb) return false;
  const flat = (e: Map<number, string[]>) =>
    [...e.entries()]
      .map(([k, v]) => `${k}:${v.join(',')}`)
      .sort()
      .join('|');
  return flat(ea) === flat(eb);
}

/**
 * PluralMapper.target_map (source form index per target form; -1 or null mean the last source form):
 * a target form used for exactly one count takes the source form of that count, the others the last.
 */
function targetMap(source: PluralDef, target: PluralDef): (number | null)[] {
  const se = pluralExamples(source.formula);
  const te = pluralExamples(target.formula);
  if (!se || !te) {
    // unknown formulas: form by form, the extra target forms against the last source form
    return Array.from({ length: target.number }, (_, i) => (i < source.number - 1 ? i : -1));
  }
  const exact = new Map<number, number>();
  const all = new Map<number, number>();
  for (const [i, examples] of se) {
    if (examples.length === 1) exact.set(Number(examples[0]), i);
    else for (const e of examples) if (/^\d+$/.test(e)) all.set(Number(e), i);
  }
  const out: (number | null)[] = [];
  for (let i = 0; i < target.number; i++) {
    const examples = te.get(i) ?? [];
    if (examples.length === 1) {
      const n = Number(examples[0]);
      out.push(exact.get(n) ?? all.get(n) ?? -1);
    } else out.push(i === target.number - 1 ? -1 : null);
  }
  return out;
}

/**
 * BaseCheck.check_target_generator's pairing of source and target forms: one pair for singular
 * units; when the counts differ from the plural definitions, every target against the last source;
 * otherwise PluralMapper.zip.
 */
export function pairForms(sources: string[], targets: string[], source: PluralDef, target: PluralDef): [string, string][] {
  if (sources.length === 1 && targets.length === 1) return [[sources[0], targets[0]]];
  const last = sources[sources.length - 1];
  if (sources.length !== source.number || targets.length !== target.number) return targets.map((t) => [last, t]);
  if (samePlural(source, target)) return targets.map((t, i) => [sources[i], t]);
  const map = targetMap(source, target);
  return targets.map((t, j) => {
    const i = map[j];
    return [i == null || i < 0 ? last : sources[i], t];
  });
}
