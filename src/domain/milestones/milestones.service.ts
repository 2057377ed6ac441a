// Project and group milestones (GitLab Milestones::*Service).
import type { FeatureDeps } from '../deps.ts';

export class MilestonesService {
  constructor(readonly deps: FeatureDeps) {}
}
