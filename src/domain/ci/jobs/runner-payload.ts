// The job a runner receives from POST /jobs/request (GitLab's Entities::Ci::JobRequest::Response, as
// gitlab-runner's common.JobResponse reads it): what to clone, which variables, the steps, image and
// services, the artifacts to upload and the artifacts of earlier jobs to download.
import type { CiBuildRow, CiPipelineRow, CiRunnerRow, MergeRequestRow, NamespaceRow, ProjectRow, UserRow } from '../../../db/schema.ts';
import { mergeRequestVariables } from '../merge-request-variables.ts';
import type { Commit } from '../../../git/objects.ts';
import type { DependencyEntity } from '../artifacts/artifacts.service.ts';
import { jobOptions, type JobOptions, type JobVariable } from '../job-options.ts';
import { RUNNER_FAILURE_REASONS } from './job-statuses.ts';

export interface RunnerVariable {
  key: string;
  value: string;
  public: boolean;
  masked: boolean;
  file?: boolean;
  raw?: boolean;
}

export interface PayloadInput {
  job: CiBuildRow;
  token: string;
  runner: CiRunnerRow;
  project: ProjectRow;
  namespace: NamespaceRow;
  pipeline: CiPipelineRow;
  user: Pick<UserRow, 'id' | 'username' | 'name' | 'email'> | null;
  commit: Commit | null;
  externalUrl: string;
  projectSettings: Record<string, unknown>;
  /**
   * a merge request pipeline's merge request and the paths of its target and source projects (its ref is
   * refs/merge-requests/<iid>/head in the target project, the source branch in a fork)
   */
  mergeRequest: { row: MergeRequestRow; projectPath: string; sourceProjectPath: string } | null;
  /** CI_CONFIG_PATH: the configured CI file or .gitlab-ci.yml */
  ciConfigPath: string;
  /** the instance's, groups' and project's CI/CD variables the job may have, in order (VariablesService.forJob) */
  secretVariables: RunnerVariable[];
  /** seconds the job waited in the queue */
  timeInQueue: number;
  /** jobs of the project running on instance runners (job_info), as GitLab counts it */
  instanceRunnerJobs: number;
  refProtected: boolean;
  sessionUrl: string | null;
  dependencies: DependencyEntity[];
}

/** `<scheme>://gitlab-ci-token:<token>@<host>[/<root>]/<full path>.git` */
export function repoUrl(externalUrl: string, fullPath: string, token: string): string {
  const u = new URL(externalUrl);
  u.username = 'gitlab-ci-token';
  u.password = token;
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/${fullPath}.git`;
  return u.toString();
}

/** Gitlab::Utils.slugify: lower case, [^a-z0-9] → '-', at most 63 characters, no '-' at either end. */
export function slugify(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
}

/** Ruby's Time#iso8601: seconds, no fraction */
const iso8601 = (t: string | null) => (t ? new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z') : '');

const v = (key: string, value: string, opts: { public?: boolean; masked?: boolean } = {}): RunnerVariable => ({
  key,
  value,
  public: opts.public ?? true,
  masked: opts.masked ?? false,
});

/**
 * Ci::Build#variables: the predefined ones, the job's (yaml), the instance's, groups' and project's CI/CD variables,
 * then the pipeline's (later wins on the runner).
 */
export function jobVariables(p: PayloadInput): RunnerVariable[] {
  const { job, project, namespace, pipeline, runner, externalUrl } = p;
  const fullPath = `${namespace.full_path}/${project.path}`;
  const projectUrl = `${externalUrl}/${fullPath}`;
  const server = new URL(externalUrl);
  const port = server.port || (server.protocol === 'https:' ? '443' : '80');
  const isTag = job.tag === 1;
  const message = p.commit?.message ?? '';
  const title = message.split('\n')[0] ?? '';
  const description = message.includes('\n') ? message.slice(message.indexOf('\n') + 1).replace(/^\n+/, '') : '';
  const tags = JSON.parse(runner.tag_list) as string[];
  // a merge request pipeline names its source branch (GitLab has no CI_COMMIT_BRANCH there)
  const mr = p.mergeRequest;
  const refName = mr ? mr.row.source_branch : job.ref;
  const out: RunnerVariable[] = [
    v('CI_PIPELINE_ID', String(pipeline.id)),
    v('CI_PIPELINE_URL', `${projectUrl}/-/pipelines/${pipeline.id}`),
    v('CI_JOB_ID', String(job.id)),
    v('CI_JOB_URL', `${projectUrl}/-/jobs/${job.id}`),
    v('CI_JOB_TOKEN', p.token, { public: false, masked: true }),
    v('CI_JOB_STARTED_AT', iso8601(job.started_at)),
    v('CI_REPOSITORY_URL', repoUrl(externalUrl, fullPath, p.token), { public: false }),
    v('CI_JOB_NAME', job.name),
    v('CI_JOB_NAME_SLUG', slugify(job.name)),
    v('CI_JOB_STAGE', job.stage),
    v('CI_NODE_TOTAL', '1'),
    v('CI_JOB_TIMEOUT', String(job.timeout ?? 3600)),
    ...(job.when === 'manual' ? [v('CI_JOB_MANUAL', 'true')] : []),
    v('CI', 'true'),
    v('GITLAB_CI', 'true'),
    v('CI_SERVER_URL', externalUrl),
    v('CI_SERVER_HOST', server.hostname),
    v('CI_SERVER_PORT', port),
    v('CI_SERVER_PROTOCOL', server.protocol.replace(':', '')),
    v('CI_SERVER_SHELL_SSH_HOST', server.hostname),
    v('CI_SERVER_NAME', 'GitLab'),
    v('GITLAB_FEATURES', ''),
    v('CI_PROJECT_ID', String(project.id)),
    v('CI_PROJECT_NAME', project.path),
    v('CI_PROJECT_TITLE', project.name),
    v('CI_PROJECT_DESCRIPTION', project.description ?? ''),
    v('CI_PROJECT_PATH', fullPath),
    v('CI_PROJECT_PATH_SLUG', slugify(fullPath)),
    v('CI_PROJECT_NAMESPACE', namespace.full_path),
    v('CI_PROJECT_NAMESPACE_SLUG', slugify(namespace.full_path)),
    v('CI_PROJECT_NAMESPACE_ID', String(namespace.id)),
    v('CI_PROJECT_ROOT_NAMESPACE', namespace.full_path.split('/')[0]!),
    v('CI_PROJECT_URL', projectUrl),
    v('CI_PROJECT_VISIBILITY', project.visibility),
    v('CI_PROJECT_CLASSIFICATION_LABEL', ''),
    v('CI_DEFAULT_BRANCH', project.default_branch ?? 'main'),
    v('CI_CONFIG_PATH', p.ciConfigPath),
    v('CI_API_V4_URL', `${externalUrl}/api/v4`),
    v('CI_API_GRAPHQL_URL', `${externalUrl}/api/graphql`),
    v('CI_PIPELINE_IID', String(pipeline.iid)),
    v('CI_PIPELINE_SOURCE', pipeline.source),
    v('CI_PIPELINE_CREATED_AT', iso8601(pipeline.created_at)),
    v('CI_COMMIT_SHA', job.sha),
    v('CI_COMMIT_SHORT_SHA', job.sha.slice(0, 8)),
    v('CI_COMMIT_BEFORE_SHA', pipeline.before_sha ?? '0'.repeat(40)),
    v('CI_COMMIT_REF_NAME', refName),
    v('CI_COMMIT_REF_SLUG', slugify(refName)),
    ...(isTag
      ? [v('CI_COMMIT_TAG', job.ref), v('CI_COMMIT_TAG_MESSAGE', '')]
      : mr
        ? Object.entries(mergeRequestVariables(mr.row, { externalUrl, ...mr })).map(([key, value]) => v(key, value))
        : [v('CI_COMMIT_BRANCH', job.ref)]),
    v('CI_COMMIT_MESSAGE', message),
    v('CI_COMMIT_TITLE', title),
    v('CI_COMMIT_DESCRIPTION', description),
    v('CI_COMMIT_REF_PROTECTED', String(p.refProtected)),
    ...(p.commit
      ? [
          v('CI_COMMIT_TIMESTAMP', iso8601(new Date(p.commit.committer.time * 1000).toISOString())),
          v('CI_COMMIT_AUTHOR', `${p.commit.author.name} <${p.commit.author.email}>`),
        ]
      : []),
    v('CI_RUNNER_ID', String(runner.id)),
    v('CI_RUNNER_DESCRIPTION', runner.description),
    v('CI_RUNNER_TAGS', JSON.stringify(tags)),
    ...(p.user
      ? [
          v('GITLAB_USER_ID', String(p.user.id)),
          v('GITLAB_USER_EMAIL', p.user.email),
          v('GITLAB_USER_LOGIN', p.user.username),
          v('GITLAB_USER_NAME', p.user.name),
        ]
      : []),
  ];
  for (const y of JSON.parse(job.yaml_variables) as JobVariable[]) {
    out.push({ key: y.key, value: String(y.value), public: y.public ?? true, masked: y.masked ?? false, ...(y.file ? { file: true } : {}) });
  }
  out.push(...p.secretVariables);
  for (const pv of JSON.parse(pipeline.variables) as { key: string; value: string; variable_type?: string }[]) {
    out.push({ key: pv.key, value: String(pv.value), public: false, masked: false, ...(pv.variable_type === 'file' ? { file: true } : {}) });
  }
  return out;
}

/** Ci::BuildRunnerPresenter#artifacts: the archive, then one entry per report. */
function artifactsSpec(o: JobOptions) {
  const a = o.artifacts;
  if (!a) return [];
  const out: Record<string, unknown>[] = [];
  if (a.untracked || a.paths) {
    out.push({
      name: a.name ?? null,
      untracked: a.untracked ?? false,
      paths: a.paths ?? [],
      ...(a.exclude?.length ? { exclude: a.exclude } : {}),
      when: a.when ?? 'on_success',
      expire_in: a.expire_in ?? null,
      artifact_type: 'archive',
      artifact_format: 'zip',
    });
  }
  for (const [type, paths] of Object.entries(a.reports ?? {})) {
    const gzip = type === 'junit' || type === 'dotenv' || type === 'cobertura' || type === 'metrics';
    out.push({
      name: type === 'junit' ? 'junit.xml.gz' : type === 'dotenv' ? '.env.gz' : `${type}.${gzip ? 'gz' : 'json'}`,
      untracked: false,
      paths,
      when: 'always',
      expire_in: a.expire_in ?? null,
      artifact_type: type,
      artifact_format: gzip ? 'gzip' : 'raw',
    });
  }
  return out;
}

function cacheSpec(o: JobOptions) {
  const list = Array.isArray(o.cache) ? o.cache : o.cache ? [o.cache] : [];
  return list.map((raw) => {
    const c = (raw ?? {}) as Record<string, unknown>;
    const key = typeof c.key === 'string' ? c.key : 'default';
    return {
      key,
      untracked: c.untracked === true,
      paths: Array.isArray(c.paths) ? c.paths : [],
      policy: typeof c.policy === 'string' ? c.policy : 'pull-push',
      when: typeof c.when === 'string' ? c.when : 'on_success',
      fallback_keys: Array.isArray(c.fallback_keys) ? c.fallback_keys : [],
    };
  });
}

/** Entities::Ci::JobRequest::Response */
export function runnerPayload(p: PayloadInput): Record<string, unknown> {
  const o = jobOptions(p.job.options);
  const timeout = p.job.timeout ?? 3600;
  const isTag = p.job.tag === 1;
  const depth = typeof p.projectSettings.ci_default_git_depth === 'number' ? p.projectSettings.ci_default_git_depth : 20;
  const fullPath = `${p.namespace.full_path}/${p.project.path}`;
  // Ci::BuildRunnerPresenter#refspecs (no persistent pipeline refs here): a merge request pipeline of a fork runs on
  // the fork's source branch, fetched as a branch pipeline's
  const refspecs = p.job.ref.startsWith('refs/merge-requests/')
    ? [`+${p.job.ref}:${p.job.ref}`]
    : depth > 0
      ? [isTag ? `+refs/tags/${p.job.ref}:refs/tags/${p.job.ref}` : `+refs/heads/${p.job.ref}:refs/remotes/origin/${p.job.ref}`]
      : ['+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*'];
  const steps: Record<string, unknown>[] = [
    { name: 'script', script: [...(o.before_script ?? []), ...(o.script ?? [])], timeout, when: 'on_success', allow_failure: false },
  ];
  if (o.after_script) steps.push({ name: 'after_script', script: o.after_script, timeout, when: 'always', allow_failure: true });
  return {
    id: p.job.id,
    token: p.token,
    allow_git_fetch: p.projectSettings.build_git_strategy !== 'clone',
    job_info: {
      id: p.job.id,
      name: p.job.name,
      stage: p.job.stage,
      project_id: p.project.id,
      project_name: p.project.name,
      time_in_queue_seconds: p.timeInQueue,
      // Prometheus buckets: 0…4, then "5+"; not an instance runner: "+Inf"
      project_jobs_running_on_instance_runners_count:
        p.runner.runner_type !== 'instance_type' ? '+Inf' : p.instanceRunnerJobs < 5 ? String(p.instanceRunnerJobs) : '5+',
    },
    git_info: {
      repo_url: repoUrl(p.externalUrl, fullPath, p.token),
      repo_object_format: 'sha1',
      ref: p.job.ref,
      sha: p.job.sha,
      before_sha: p.pipeline.before_sha ?? '0'.repeat(40),
      ref_type: isTag ? 'tag' : 'branch',
      refspecs,
      depth,
    },
    runner_info: { timeout, runner_session_url: p.sessionUrl },
    variables: jobVariables(p),
    steps,
    image: o.image ? { name: o.image.name, entrypoint: o.image.entrypoint ?? null, ports: [], pull_policy: null } : null,
    services: (o.services ?? []).map((s) => ({
      name: s.name,
      entrypoint: s.entrypoint ?? null,
      ports: [],
      alias: s.alias ?? null,
      command: s.command ?? null,
      pull_policy: null,
      variables: [],
    })),
    artifacts: artifactsSpec(o),
    cache: cacheSpec(o),
    credentials: [],
    dependencies: p.dependencies,
    features: { trace_sections: true, failure_reasons: RUNNER_FAILURE_REASONS },
  };
}
