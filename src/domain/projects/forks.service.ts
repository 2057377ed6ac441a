// Forks (Projects::ForkService): a new project whose repository borrows its source's objects; fork links.
import type { FeatureDeps } from '../deps.ts';

export class ForksService {
  constructor(readonly deps: FeatureDeps) {}
}
