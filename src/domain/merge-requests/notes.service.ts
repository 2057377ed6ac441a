// Notes and discussions of merge requests (threads, replies, resolve), award emoji, approvals.
import type { FeatureDeps } from '../deps.ts';

export class NotesService {
  constructor(readonly deps: FeatureDeps) {}
}
