// External commit statuses (GitLab Ci::CreateCommitStatusService, GenericCommitStatus): CI systems
// outside Hearth report a state per commit and name; each is a job of type generic in a pipeline of
// source external. Owner: the statuses part of issue 16.
import type { CiDeps } from './deps.ts';

export class CommitStatusesService {
  constructor(protected readonly deps: CiDeps) {}
}
