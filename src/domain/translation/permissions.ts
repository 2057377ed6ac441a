// Who may do what on the translation API (Weblate's permission names). H1 fills this in.
import type { TranslationDeps } from './deps.ts';

export class TranslationPermissions {
  constructor(private readonly deps: TranslationDeps) {}
}
