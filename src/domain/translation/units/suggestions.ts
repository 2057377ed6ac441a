// Suggestions and comments. H2 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class SuggestionsService {
  constructor(private readonly deps: TranslationDeps) {}
}
