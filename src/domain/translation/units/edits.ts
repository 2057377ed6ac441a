// Unit edits. H1 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class UnitEdits {
  constructor(private readonly deps: TranslationDeps) {}
}
