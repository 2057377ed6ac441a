// The life of a merge request: create, find, update, close/reopen, delete; its entity's related rows; its events.
import type { FeatureDeps } from '../deps.ts';

export class MergeRequestsService {
  constructor(readonly deps: FeatureDeps) {}
}
