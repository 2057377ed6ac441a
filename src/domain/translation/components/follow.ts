// Components following a project of this server. H5 fills this in.
import type { TranslationDeps } from '../deps.ts';

export class ForgeFollow {
  constructor(private readonly deps: TranslationDeps) {}

  /** the worker's round: rescans the components whose branch was pushed to; how many it did */
  async runQueued(): Promise<number> {
    return 0;
  }
}
