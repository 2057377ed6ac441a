// The merge request lists (global, group, project) with every filter of the API.
import type { FeatureDeps } from '../deps.ts';

export class MergeRequestsQuery {
  constructor(readonly deps: FeatureDeps) {}
}
