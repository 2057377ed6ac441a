// Runners (GitLab Ci::Runner, Ci::Runners::RegisterRunnerService …): registration tokens, runner
// authentication tokens, status, and the runner API's lists and updates.
// Owner: the runners part of issue 16 (see docs/design-notes.md, CI).
import type { CiRunnerRow } from '../../../db/schema.ts';
import type { CiDeps } from '../deps.ts';

/** What a runner tells about itself on each contact (gitlab-runner common.VersionInfo). */
export interface RunnerInfo {
  name?: string;
  version?: string;
  revision?: string;
  platform?: string;
  architecture?: string;
  executor?: string;
}

export class RunnersService {
  constructor(protected readonly deps: CiDeps) {}

  /**
   * The runner an authentication token belongs to (null when unknown or expired); records the
   * contact (contacted_at, lazily, and what `info` says) when `contact` is given.
   */
  async authenticate(_token: string, _contact?: { info?: RunnerInfo; ip?: string }): Promise<CiRunnerRow | null> {
    return null;
  }
}
