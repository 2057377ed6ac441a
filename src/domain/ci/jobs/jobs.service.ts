// Jobs (GitLab Ci::Build and Ci::RegisterJobService / UpdateBuildService): the queue runners take jobs
// from, the job token a running job holds, state changes from the runner, the log, cancel and retry.
// Owner: the jobs part of issue 16 (see docs/design-notes.md, CI).
import type { UserRow } from '../../../db/schema.ts';
import type { CiDeps } from '../deps.ts';

export class JobsService {
  constructor(protected readonly deps: CiDeps) {}

  /** The job a job token belongs to, while that job runs (Authenticator.jobTokens). */
  async resolveToken(_token: string): Promise<{ user: UserRow; jobId: number } | null> {
    return null;
  }

  /** Wakes the runners waiting in POST /jobs/request (called after jobs became pending). */
  jobsQueued(): void {}
}
