// Job artifacts (GitLab Ci::JobArtifact, Ci::JobArtifacts::CreateService / DestroyBatchService): the
// files a job uploads, kept in the blob store, downloaded whole or one file at a time, kept or expired.
// Owner: the artifacts part of issue 16 (see docs/design-notes.md, CI).
import type { CiBuildRow } from '../../../db/schema.ts';
import type { CiDeps } from '../deps.ts';

/** One entry of the job payload's `dependencies` (Entities::Ci::JobRequest::Dependency). */
export interface DependencyEntity {
  id: number;
  name: string;
  /** the running (consuming) job's own token: the runner downloads with it (authenticate_job_via_dependent_job!) */
  token: string;
  /** only when the dependency has an archive (`available_artifacts?`) */
  artifacts_file?: { filename: string; size: number };
}

export class ArtifactsService {
  constructor(protected readonly deps: CiDeps) {}

  /**
   * The jobs whose artifacts `job` receives, for its job payload: `options.dependencies` when given,
   * else the `needs` with `artifacts: true`, else every job of the earlier stages (latest try of each
   * name, same pipeline). `token` is `job`'s own token (plain; only its digest is stored).
   */
  async forDependencies(_job: CiBuildRow, _token: string): Promise<DependencyEntity[]> {
    return [];
  }

  /** One round of the expiry cleanup (worker): removes expired artifacts' blobs and rows; answers how many. */
  async removeExpired(): Promise<number> {
    return 0;
  }
}
