// Pipelines (GitLab Ci::CreatePipelineService, Ci::ProcessPipelineService): the CI file of a ref read
// from the repository, the jobs it creates, and how a pipeline moves on as its jobs finish.
// Owner: the pipelines part of issue 16 (see docs/design-notes.md, CI).
import type { CiPipelineRow, ProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import type { CiDeps } from '../deps.ts';

export interface CreatePipelineInput {
  ref: string;
  /** push | web | api | trigger | parent_pipeline | external */
  source: string;
  /** the commit; resolved from ref when absent */
  sha?: string;
  beforeSha?: string | null;
  variables?: { key: string; value: string; variable_type?: string }[];
}

export class PipelinesService {
  constructor(protected readonly deps: CiDeps) {}

  /**
   * Creates a pipeline for `ref` from its `.service-ci.yml` (a failed pipeline with yaml_errors when the
   * file is invalid; null when the ref has no CI file or no job applies, as GitLab creates none).
   */
  async create(_project: ProjectRow, _actor: Actor, _input: CreatePipelineInput): Promise<CiPipelineRow | null> {
    throw new Error('not built yet');
  }

  /**
   * Moves a pipeline on after one of its jobs changed state: created jobs whose stage (or needs) is
   * done become pending / manual / skipped, trigger jobs create their child pipeline, and the pipeline's
   * status (and its parent's trigger job) follows its jobs. Idempotent; jobs call it after every change.
   */
  async process(_pipelineId: number): Promise<void> {
    throw new Error('not built yet');
  }
}
