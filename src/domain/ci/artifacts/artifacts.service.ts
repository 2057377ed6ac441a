// Job artifacts (GitLab Ci::JobArtifact, Ci::JobArtifacts::CreateService / DestroyBatchService): the
// files a job uploads, kept in the blob store, downloaded whole or one file at a time, kept or expired.
// Owner: the artifacts part of issue 16 (see docs/design-notes.md, CI).
import type { CiDeps } from '../deps.ts';

export class ArtifactsService {
  constructor(protected readonly deps: CiDeps) {}

  /** One round of the expiry cleanup (worker): removes expired artifacts' blobs and rows; answers how many. */
  async removeExpired(): Promise<number> {
    return 0;
  }
}
