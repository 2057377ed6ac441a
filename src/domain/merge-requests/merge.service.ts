// Merging, rebasing, the merge ref and mergeability (detailed_merge_status), through the repository service.
import type { FeatureDeps } from '../deps.ts';

export class MergeService {
  constructor(readonly deps: FeatureDeps) {}
}
