// Translation files. H3 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class TranslationFiles {
  constructor(private readonly deps: TranslationDeps) {}
}
