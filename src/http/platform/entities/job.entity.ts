// Wire shapes of CI jobs (GitLab's API::Entities::Ci::JobBasic, Job, JobBasicWithProject): the job
// list and detail, keep-artifacts, GET /job (job token) and a runner's job list. The domain reads what
// a page of jobs links to (domain/ci/job-views.ts); the builders here only map.
import { Type, type Static } from 'typebox';
import type { CiBuildRow, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { JobRelated } from '../../../domain/ci/job-views.ts';
import { commitBasic, type CommitEntity } from '../repository/context.ts';
import { CommitSchema } from './commit.entity.ts';
import { PipelineBasicSchema, toPipelineBasic } from './pipeline.entity.ts';
import { RunnerSchema, runnerStatus, toRunner } from './runner.entity.ts';
import { toUser, UserRefSchema, userViewContext, type UserViewContext } from './user.entity.ts';
import { NullableString } from '../schemas/common.ts';

const Nullable = <T extends ReturnType<typeof Type.Object>>(s: T) => Type.Unsafe<Static<T> | null>({ ...s, type: ['object', 'null'] });
const NullableNumber = Type.Unsafe<number | null>({ type: ['number', 'null'] });

// ---- nested shapes ---------------------------------------------------------------------------

/** API::Entities::Ci::RunnerManager: the runner process (system_id) that took the job. */
export const JobRunnerManagerSchema = Type.Object({
  id: Type.Integer(),
  system_id: Type.String(),
  version: NullableString,
  revision: NullableString,
  platform: NullableString,
  architecture: NullableString,
  created_at: Type.String(),
  contacted_at: NullableString,
  ip_address: NullableString,
  status: Type.String(),
});

/** API::Entities::Ci::JobArtifact */
export const JobArtifactSchema = Type.Object({
  file_type: Type.String(),
  size: Type.Integer(),
  filename: Type.String(),
  file_format: NullableString,
});

/** API::Entities::Ci::JobArtifactFile (the archive, kept for API v4 compatibility). */
export const JobArtifactFileSchema = Type.Object({ filename: Type.String(), size: Type.Integer() });

/** API::Entities::ProjectIdentity (JobBasicWithProject's project). */
export const ProjectIdentitySchema = Type.Object({
  id: Type.Integer(),
  description: NullableString,
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
});
export type ProjectIdentity = Static<typeof ProjectIdentitySchema>;

/** API::Entities::ProjectIdentity; `namespaceFullName` is the namespace's full name ("Group / Sub", or the owner's name). */
export function toProjectIdentity(project: ProjectRow, namespace: NamespaceRow, namespaceFullName: string): ProjectIdentity {
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${namespaceFullName} / ${project.name}`,
    path: project.path,
    path_with_namespace: `${namespace.full_path}/${project.path}`,
    created_at: project.created_at,
  };
}

// The job's user: Entities::User (the profile fields only when the profile is readable).
const JobUserSchema = Type.Unsafe<Record<string, unknown> | null>({
  ...Type.Object({ ...UserRefSchema.properties }, { additionalProperties: true }),
  type: ['object', 'null'],
});

const basicProps = {
  id: Type.Integer(),
  status: Type.String(),
  stage: Type.String(),
  name: Type.String(),
  ref: Type.String(),
  tag: Type.Boolean(),
  coverage: NullableNumber,
  allow_failure: Type.Boolean(),
  created_at: Type.String(),
  started_at: NullableString,
  finished_at: NullableString,
  erased_at: NullableString,
  duration: NullableNumber,
  queued_duration: NullableNumber,
  user: JobUserSchema,
  commit: Nullable(CommitSchema),
  pipeline: PipelineBasicSchema,
  failure_reason: Type.Optional(NullableString),
  web_url: Type.String(),
};

export const JobBasicSchema = Type.Object({ ...basicProps, project: Type.Object({ ci_job_token_scope_enabled: Type.Boolean() }) });
export type JobBasicEntity = Static<typeof JobBasicSchema>;

export const JobBasicWithProjectSchema = Type.Object({ ...basicProps, project: ProjectIdentitySchema });
export type JobBasicWithProjectEntity = Static<typeof JobBasicWithProjectSchema>;

export const JobSchema = Type.Object({
  ...JobBasicSchema.properties,
  artifacts_file: Type.Optional(JobArtifactFileSchema),
  artifacts: Type.Array(JobArtifactSchema),
  runner: Nullable(RunnerSchema),
  runner_manager: Nullable(JobRunnerManagerSchema),
  artifacts_expire_at: NullableString,
  archived: Type.Boolean(),
  tag_list: Type.Array(Type.String()),
  download_url: NullableString,
});
export type JobEntity = Static<typeof JobSchema>;

// ---- loading ---------------------------------------------------------------------------------

/** What the builders need for a page of jobs, read once: the related rows the domain read for a page of jobs (job-views.ts), with the commits as entities and what the
 * wire shapes need of the request. */
export interface JobViews extends Omit<JobRelated, 'settings' | 'commits'> {
  externalUrl: string;
  users: UserViewContext;
  /** who asks (for Entities::User's profile fields) */
  viewer: { id: number | null; isAdmin: boolean };
  now: number;
  /** by `${project_id}:${sha}`; null when the repository lacks the commit */
  commits: Map<string, CommitEntity | null>;
}

export function toJobViews(related: JobRelated, externalUrl: string, viewer: { id: number | null; isAdmin: boolean } = { id: null, isAdmin: false }): JobViews {
  const commits = new Map<string, CommitEntity | null>();
  for (const [key, commit] of related.commits) {
    const p = related.projects.get(Number(key.split(':')[0]));
    commits.set(key, commit && p ? commitBasic(commit, `${externalUrl}/${p.namespace.full_path}/${p.project.path}`) : null);
  }
  const { settings, commits: _rows, ...rows } = related;
  return { ...rows, externalUrl, users: userViewContext(externalUrl, settings), viewer, now: Date.now(), commits };
}

// ---- builders --------------------------------------------------------------------------------

const ms = (iso: string | null) => (iso ? Date.parse(iso) : NaN);
const seconds = (from: number, to: number) => (Number.isNaN(from) || Number.isNaN(to) ? null : Math.max(0, (to - from) / 1000));

/** Time running: till finished, or till now while running (GitLab's Ci::Build#duration). */
export function jobDuration(job: CiBuildRow, now = Date.now()): number | null {
  if (!job.started_at) return null;
  return seconds(ms(job.started_at), job.finished_at ? ms(job.finished_at) : now);
}

/** Time in the queue: from queued till started, or till now while pending. */
export function jobQueuedDuration(job: CiBuildRow, now = Date.now()): number | null {
  if (!job.queued_at) return null;
  return seconds(ms(job.queued_at), job.started_at ? ms(job.started_at) : now);
}

export function projectWebUrl(externalUrl: string, p: { project: ProjectRow; namespace: NamespaceRow }): string {
  return `${externalUrl}/${p.namespace.full_path}/${p.project.path}`;
}

export function jobWebUrl(views: Pick<JobViews, 'externalUrl' | 'projects'>, job: Pick<CiBuildRow, 'id' | 'project_id'>): string {
  const p = views.projects.get(job.project_id);
  return p ? `${projectWebUrl(views.externalUrl, p)}/-/jobs/${job.id}` : `${views.externalUrl}/-/jobs/${job.id}`;
}

function toJobUser(job: CiBuildRow, views: JobViews): Record<string, unknown> | null {
  const u = job.user_id === null ? undefined : views.usersById.get(job.user_id);
  if (!u) return null;
  const profile = u.private_profile !== 1 || views.viewer.isAdmin || views.viewer.id === u.id;
  return toUser(u, views.users, profile) as unknown as Record<string, unknown>;
}

/** API::Entities::Ci::JobBasic without its `project` (which the two variants expose differently). */
function basic(job: CiBuildRow, views: JobViews) {
  const pipeline = views.pipelines.get(job.pipeline_id)!;
  return {
    id: job.id,
    status: job.status,
    stage: job.stage,
    name: job.name,
    ref: job.ref,
    tag: job.tag === 1,
    coverage: job.coverage,
    allow_failure: job.allow_failure === 1,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    erased_at: job.erased_at,
    duration: jobDuration(job, views.now),
    queued_duration: jobQueuedDuration(job, views.now),
    user: toJobUser(job, views),
    commit: views.commits.get(`${job.project_id}:${job.sha}`) ?? null,
    pipeline: toPipelineBasic(
      pipeline,
      views.projects.has(pipeline.project_id) ? projectWebUrl(views.externalUrl, views.projects.get(pipeline.project_id)!) : views.externalUrl,
    ),
    ...(job.status === 'failed' ? { failure_reason: job.failure_reason ?? 'unknown_failure' } : {}),
    web_url: jobWebUrl(views, job),
  };
}

export function toJobBasic(job: CiBuildRow, views: JobViews): JobBasicEntity {
  return { ...basic(job, views), project: { ci_job_token_scope_enabled: false } };
}

export function toJobBasicWithProject(job: CiBuildRow, views: JobViews): JobBasicWithProjectEntity {
  const p = views.projects.get(job.project_id)!;
  return {
    ...basic(job, views),
    project: toProjectIdentity(p.project, p.namespace, views.namespaceNames.get(p.namespace.id) ?? p.namespace.name),
  };
}

/** API::Entities::Ci::Job (with the spec's download_url: the archive's download link, or null). */
export function toJob(job: CiBuildRow, views: JobViews): JobEntity {
  const artifacts = (views.artifacts.get(job.id) ?? []).filter((a) => !job.erased_at || a.file_type === 'trace');
  const archive = artifacts.find((a) => a.file_type === 'archive');
  const runner = job.runner_id === null ? undefined : views.runners.get(job.runner_id);
  const p = views.projects.get(job.project_id);
  return {
    ...toJobBasic(job, views),
    ...(archive ? { artifacts_file: { filename: archive.file_name, size: archive.size } } : {}),
    artifacts: artifacts.map((a) => ({ file_type: a.file_type, size: a.size, filename: a.file_name, file_format: a.file_format })),
    runner: runner ? toRunner(runner, { now: views.now }) : null,
    runner_manager:
      runner && job.runner_system_id
        ? {
            id: runner.id,
            system_id: job.runner_system_id,
            version: runner.version,
            revision: runner.revision,
            platform: runner.platform,
            architecture: runner.architecture,
            created_at: runner.created_at,
            contacted_at: runner.contacted_at,
            ip_address: runner.ip_address,
            status: runnerStatus(runner, views.now),
          }
        : null,
    artifacts_expire_at: job.artifacts_expire_at,
    // Ci::Processable#archived?: older than archive_builds_older_than, a setting this server does not have
    archived: false,
    tag_list: (JSON.parse(job.tag_list) as string[]).slice().sort(),
    download_url: archive && p ? `${projectWebUrl(views.externalUrl, p)}/-/jobs/${job.id}/artifacts/download` : null,
  };
}
