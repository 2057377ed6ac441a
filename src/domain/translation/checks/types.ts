import type { PluralDef } from './plurals.ts';

/** What a check may look at besides the strings (Weblate reads it from unit, translation and component). */
export interface CheckContext {
  flags: ReadonlySet<string>;
  /** base code of the translation's language (`pt_BR` → `pt`), Weblate's Language.base_code */
  targetBase: string;
  /** base code of the component's source language */
  sourceBase: string;
  note: string;
  /** lower-cased words of the project and component names (ignored by the "same" check) */
  extraIgnore: ReadonlySet<string>;
  sourcePlural: PluralDef;
  targetPlural: PluralDef;
}

/** A check evaluated per (source form, target form) pair; failing when any pair fails. */
export interface SingleCheck {
  id: string;
  name: string;
  /** enabled only by its flag (the id with `_` → `-`) */
  defaultDisabled?: boolean;
  skip?(ctx: CheckContext): boolean;
  single(source: string, target: string, ctx: CheckContext): boolean;
}

/** A check over all plural forms of a unit at once. */
export interface UnitCheck {
  id: string;
  name: string;
  defaultDisabled?: boolean;
  skip?(ctx: CheckContext): boolean;
  unit(sources: string[], targets: string[], ctx: CheckContext): boolean;
}
