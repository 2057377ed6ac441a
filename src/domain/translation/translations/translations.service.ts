// Adding and removing translations. H2 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class TranslationsService {
  constructor(private readonly deps: TranslationDeps) {}
}
