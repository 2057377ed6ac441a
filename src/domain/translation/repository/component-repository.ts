// A component's repository operations. H4 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class ComponentRepository {
  constructor(private readonly deps: TranslationDeps) {}

  /** the worker's round: commits pending edits older than commit_pending_age; how many components it committed */
  async commitDue(): Promise<number> {
    return 0;
  }
}
