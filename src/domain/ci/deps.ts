// What the CI services take: one object, so a new service is one line in the container, and `ci` lets
// one service call another (built together, filled in before the first request).
import type { Config } from '../../config.ts';
import type { SecretBox } from '../../lib/secrets.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { FeatureDeps } from '../deps.ts';
import type { SystemHooksService } from '../hooks/system-hooks.service.ts';
import type { ArtifactsService } from './artifacts/artifacts.service.ts';
import type { JobsService } from './jobs/jobs.service.ts';
import type { PipelinesService } from './pipelines/pipelines.service.ts';
import type { PipelinesQuery } from './pipelines-query.ts';
import type { RunnersService } from './runners/runners.service.ts';
import type { CommitStatusesService } from './statuses.service.ts';
import type { VariablesService } from './variables/variables.service.ts';
import type { JobTokenScopeService } from './job-token-scope.service.ts';
import type { PipelineSchedulesService } from './schedules/pipeline-schedules.service.ts';
import type { TriggersService } from './triggers/triggers.service.ts';

export interface Ci {
  /** the CI file, pipeline creation (push, API, child pipelines) and pipeline/stage progression */
  pipelines: PipelinesService;
  /** the pipeline lists (Ci::PipelinesFinder), the latest pipeline of a ref, a pipeline's jobs and bridges */
  pipelinesQuery: PipelinesQuery;
  /** jobs: the runner queue, job tokens, state changes, the log, cancel and retry */
  jobs: JobsService;
  /** runners: registration and tokens, the runner API, status */
  runners: RunnersService;
  /** job artifacts in the blob store: upload, downloads, keep, delete, expiry */
  artifacts: ArtifactsService;
  /** external commit statuses */
  statuses: CommitStatusesService;
  /** CI/CD variables of the instance, groups and projects (sealed at rest) */
  variables: VariablesService;
  /** pipeline trigger tokens and the pipelines they create */
  triggers: TriggersService;
  /** pipeline schedules, their variables and the round that runs them */
  schedules: PipelineSchedulesService;
  /** the CI/CD job token scope: the inbound setting and allowlists */
  jobTokenScope: JobTokenScopeService;
}

export interface CiDeps extends FeatureDeps {
  config: Config;
  store: BlobStore;
  hooks: SystemHooksService;
  ci: Ci;
  /** the salted digest every CI secret is stored as (runner, registration, job and trigger tokens) */
  digest(token: string): string;
  /** seals what must be shown again (trigger tokens, to their owners) */
  box: SecretBox;
}
