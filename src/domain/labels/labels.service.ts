// Project and group labels (GitLab Labels::*Service): list with inheritance, create, update, delete, priorities.
import type { FeatureDeps } from '../deps.ts';

export class LabelsService {
  constructor(readonly deps: FeatureDeps) {}
}
