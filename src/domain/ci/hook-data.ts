// Payloads of the CI events only project and group hooks hear: pipelines (Gitlab::DataBuilder::Pipeline)
// and jobs (Gitlab::DataBuilder::Build), recorded as system events when they change status and a hook hears them.
import type { Kysely } from 'kysely';
import type { CiBuildRow, CiPipelineRow, CiRunnerRow, Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { Db } from '../../db/connect.ts';
import { readVersions, type Versions } from '../../db/versions.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { projectHookAttrs, userHookAttrs } from '../core/hook-attrs.ts';
import { type CiHookEvent, hasCiHooks } from '../core/hook-listeners.ts';
import { recordSystemEvent } from '../core/system-events.ts';

export interface HookDataDeps {
  repos: RepositoryStore;
  externalUrl: string;
}

/**
 * The rows a hook payload needs, each read once per operation: a caller seeds those it already holds (the job it
 * just claimed, its project, runner and user, the pipeline's jobs it just processed), so recording a job's and its
 * pipeline's hooks costs only the rows nobody held. Lives as long as one operation (never across requests).
 */
export class HookRows {
  private readonly projects = new Map<number, { project: ProjectRow; namespace: NamespaceRow } | null>();
  private readonly users = new Map<number, UserRow | undefined>();
  private readonly runners = new Map<number, CiRunnerRow | undefined>();
  private readonly pipelines = new Map<number, CiPipelineRow | undefined>();
  /** a pipeline's current jobs (not retried), as its processing read them */
  private readonly pipelineJobs = new Map<number, CiBuildRow[]>();

  /**
   * the table versions this operation read (before its writes): whether a hook listens is asked as of them, so an
   * operation reads them once (on PostgreSQL a read after a local write is a query)
   */
  versions: Versions | undefined;

  constructor(
    readonly k: Kysely<Database>,
    held: {
      project?: ProjectRow;
      namespace?: NamespaceRow;
      users?: (UserRow | undefined | null)[];
      runner?: CiRunnerRow;
      pipeline?: CiPipelineRow;
      versions?: Versions;
    } = {},
  ) {
    this.versions = held.versions;
    if (held.project && held.namespace) this.projects.set(held.project.id, { project: held.project, namespace: held.namespace });
    for (const u of held.users ?? []) if (u) this.users.set(u.id, u);
    if (held.runner) this.runners.set(held.runner.id, held.runner);
    if (held.pipeline) this.pipelines.set(held.pipeline.id, held.pipeline);
  }

  /** the rows held so far, read on through another connection (a transaction of the caller), with `pipeline` as it is there */
  in(trx: Kysely<Database>, pipeline?: CiPipelineRow): HookRows {
    const r = new HookRows(trx, { pipeline, versions: this.versions });
    for (const [k, v] of this.projects) r.projects.set(k, v);
    for (const [k, v] of this.users) r.users.set(k, v);
    for (const [k, v] of this.runners) r.runners.set(k, v);
    return r;
  }

  async project(id: number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | null> {
    if (this.projects.has(id)) return this.projects.get(id) ?? null;
    const project = await this.k.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    const namespace = project && (await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirst());
    const found = project && namespace ? { project, namespace } : null;
    this.projects.set(id, found);
    return found;
  }

  /** the pipeline's current jobs as its processing in this operation read them (then a job's dependencies need no read) */
  holdJobs(pipelineId: number, jobs: CiBuildRow[]): void {
    this.pipelineJobs.set(pipelineId, jobs);
  }

  heldJobs(pipelineId: number): CiBuildRow[] | undefined {
    return this.pipelineJobs.get(pipelineId);
  }

  /** a pipeline as this operation last saw it */
  async pipeline(id: number): Promise<CiPipelineRow | undefined> {
    if (!this.pipelines.has(id)) this.pipelines.set(id, await this.k.selectFrom('ci_pipelines').selectAll().where('id', '=', id).executeTakeFirst());
    return this.pipelines.get(id);
  }

  /** users and runners by id, the missing ones in one statement each */
  async load(userIds: (number | null)[], runnerIds: (number | null)[] = []): Promise<void> {
    const u = [...new Set(userIds)].filter((id): id is number => id !== null && !this.users.has(id));
    const r = [...new Set(runnerIds)].filter((id): id is number => id !== null && !this.runners.has(id));
    const [users, runners] = await Promise.all([
      u.length ? this.k.selectFrom('users').selectAll().where('id', 'in', u).execute() : [],
      r.length ? this.k.selectFrom('ci_runners').selectAll().where('id', 'in', r).execute() : [],
    ]);
    for (const id of u)
      this.users.set(
        id,
        users.find((x) => x.id === id),
      );
    for (const id of r)
      this.runners.set(
        id,
        runners.find((x) => x.id === id),
      );
  }

  /** a user the caller read (a cached row): the hooks do not read it again */
  holdUser(user: UserRow): void {
    this.users.set(user.id, user);
  }

  user(id: number | null): UserRow | undefined {
    return id === null ? undefined : this.users.get(id);
  }

  runner(id: number | null): CiRunnerRow | undefined {
    return id === null ? undefined : this.runners.get(id);
  }
}

function runnerAttrs(r: CiRunnerRow | undefined) {
  if (!r) return null;
  return {
    id: r.id,
    description: r.description,
    runner_type: r.runner_type,
    active: r.active === 1,
    is_shared: r.runner_type === 'instance_type',
    tags: r.tag_list ? (JSON.parse(r.tag_list) as string[]) : [],
  };
}

/** "2017-06-19T14:39:53-07:00" from git's seconds and "+hhmm" (Commit#timestamp, xmlschema). */
export function isoWithZone(time: number, tz: string): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(tz);
  const offset = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = new Date((time + offset * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${m ? `${m[1]}${m[2]}:${m[3]}` : '+00:00'}`;
}

/** The commit, or null (no repository, or the commit is gone). */
async function readCommit(deps: HookDataDeps, project: ProjectRow, sha: string) {
  try {
    const repo = deps.repos.repository(project);
    return repo.exists() ? await repo.commit(sha) : null;
  } catch {
    return null;
  }
}

const seconds = (from: string | null, to: string | null) => (from && to ? Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) : null);

async function commitAttrs(deps: HookDataDeps, target: { project: ProjectRow }, webUrl: string, sha: string) {
  const commit = await readCommit(deps, target.project, sha);
  if (!commit) return null;
  return {
    id: commit.sha,
    message: commit.message,
    title: commit.message.split('\n', 1)[0],
    timestamp: isoWithZone(commit.committer.time, commit.committer.tz),
    url: `${webUrl}/-/commit/${commit.sha}`,
    author: { name: commit.author.name, email: commit.author.email },
  };
}

/** The pipeline hook payload (object_kind "pipeline"). */
export async function pipelineHookData(
  rows: HookRows,
  deps: HookDataDeps,
  pipeline: CiPipelineRow,
  /** the pipeline's current jobs (not retried), by stage and id, when the caller holds them */
  jobs?: CiBuildRow[],
): Promise<({ object_kind: 'pipeline' } & Record<string, unknown>) | null> {
  const target = await rows.project(pipeline.project_id);
  if (!target) return null;
  const project = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const builds =
    jobs ??
    (await rows.k
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', pipeline.id)
      .where('retried', '=', 0)
      .orderBy('stage_idx')
      .orderBy('id')
      .execute());
  const stages = [...new Set(builds.map((b) => b.stage))];
  await rows.load(
    [pipeline.user_id, ...builds.map((b) => b.user_id)],
    builds.map((b) => b.runner_id),
  );
  const user = rows.user(pipeline.user_id);
  const vars = JSON.parse(pipeline.variables) as { key: string; value: string }[];
  const buildAttrs = [];
  for (const b of builds) {
    const u = rows.user(b.user_id);
    buildAttrs.push({
      id: b.id,
      stage: b.stage,
      name: b.name,
      status: b.status,
      created_at: b.created_at,
      started_at: b.started_at,
      finished_at: b.finished_at,
      duration: seconds(b.started_at, b.finished_at),
      queued_duration: seconds(b.queued_at, b.started_at),
      failure_reason: b.failure_reason,
      when: b.when,
      manual: b.when === 'manual',
      allow_failure: b.allow_failure === 1,
      user: u ? userHookAttrs(u) : null,
      runner: runnerAttrs(rows.runner(b.runner_id)),
      artifacts_file: { filename: null, size: null },
      environment: b.environment ? { name: b.environment, action: 'start', deployment_tier: null } : null,
    });
  }
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pipeline.id,
      iid: pipeline.iid,
      name: null,
      ref: pipeline.ref,
      tag: pipeline.tag === 1,
      sha: pipeline.sha,
      before_sha: pipeline.before_sha ?? '0000000000000000000000000000000000000000',
      source: pipeline.source,
      status: pipeline.status,
      detailed_status: pipeline.status,
      stages,
      created_at: pipeline.created_at,
      finished_at: pipeline.finished_at,
      duration: pipeline.duration,
      queued_duration: pipeline.queued_duration,
      variables: vars.map((v) => ({ key: v.key, value: v.value })),
      url: `${project.web_url}/-/pipelines/${pipeline.id}`,
    },
    merge_request: null,
    user: user ? userHookAttrs(user) : null,
    project,
    commit: await commitAttrs(deps, target, project.web_url, pipeline.sha),
    builds: buildAttrs,
    source_pipeline: null,
  };
}

/** The job hook payload (object_kind "build"). */
export async function buildHookData(
  rows: HookRows,
  deps: HookDataDeps,
  build: CiBuildRow,
): Promise<({ object_kind: 'build' } & Record<string, unknown>) | null> {
  const [target, pipeline, retries] = await Promise.all([
    rows.project(build.project_id),
    rows.pipeline(build.pipeline_id),
    rows.k
      .selectFrom('ci_builds')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('pipeline_id', '=', build.pipeline_id)
      .where('name', '=', build.name)
      .where('retried', '=', 1)
      .executeTakeFirst(),
    rows.load([build.user_id], [build.runner_id]),
  ]);
  if (!target || !pipeline) return null;
  const project = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const user = rows.user(build.user_id);
  const commit = await readCommit(deps, target.project, build.sha);
  return {
    object_kind: 'build',
    ref: build.ref,
    tag: build.tag === 1,
    before_sha: pipeline.before_sha ?? '0000000000000000000000000000000000000000',
    sha: build.sha,
    retries_count: Number(retries?.n ?? 0),
    build_id: build.id,
    build_name: build.name,
    build_stage: build.stage,
    build_status: build.status,
    build_created_at: build.created_at,
    build_started_at: build.started_at,
    build_finished_at: build.finished_at,
    build_duration: seconds(build.started_at, build.finished_at),
    build_queued_duration: seconds(build.queued_at, build.started_at),
    build_allow_failure: build.allow_failure === 1,
    build_failure_reason: build.failure_reason ?? 'unknown_failure',
    pipeline_id: build.pipeline_id,
    runner: runnerAttrs(rows.runner(build.runner_id)),
    project_id: target.project.id,
    project_name: `${target.namespace.name} / ${target.project.name}`,
    user: user ? userHookAttrs(user) : null,
    commit: {
      id: pipeline.id,
      name: null,
      sha: build.sha,
      message: commit?.message ?? null,
      author_name: commit?.author.name ?? null,
      author_email: commit?.author.email ?? null,
      author_url: null,
      status: pipeline.status,
      duration: pipeline.duration,
      started_at: pipeline.started_at,
      finished_at: pipeline.finished_at,
    },
    repository: {
      name: project.name,
      url: project.url,
      description: project.description,
      homepage: project.homepage,
      git_http_url: project.git_http_url,
      git_ssh_url: project.git_ssh_url,
      visibility_level: project.visibility_level,
    },
    project,
    environment: build.environment ? { name: build.environment, action: 'start', deployment_tier: null } : null,
  };
}

/** what recording needs beyond the payload's parts: the database, to ask whether any hook listens */
export interface HookRecordDeps extends HookDataDeps {
  db: Db;
}

/** whether a webhook of the project or a group above it hears `event` (nothing is built or recorded otherwise) */
export async function heard(rows: HookRows, deps: HookRecordDeps, projectId: number, event: CiHookEvent): Promise<boolean> {
  const target = await rows.project(projectId);
  if (!target) return false;
  rows.versions ??= await readVersions(deps.db);
  return hasCiHooks(deps.db, rows.k, projectId, target.namespace, event, rows.versions);
}

/** A job changed status: its job hook event, through `rows` (its connection: a transaction of the caller, or none). */
export async function recordBuildEvent(rows: HookRows, deps: HookRecordDeps, build: CiBuildRow | number): Promise<void> {
  const row = typeof build === 'number' ? await rows.k.selectFrom('ci_builds').selectAll().where('id', '=', build).executeTakeFirst() : build;
  if (!row || row.type === 'generic') return; // commit statuses are no jobs to hooks
  if (!(await heard(rows, deps, row.project_id, 'job_events'))) return;
  const data = await buildHookData(rows, deps, row);
  if (data) await recordSystemEvent(rows.k, data);
}

/** A pipeline changed status: its pipeline hook event, in the caller's transaction. */
export async function recordPipelineEvent(rows: HookRows, deps: HookRecordDeps, pipeline: CiPipelineRow, jobs?: CiBuildRow[]): Promise<void> {
  if (!(await heard(rows, deps, pipeline.project_id, 'pipeline_events'))) return;
  const data = await pipelineHookData(rows, deps, pipeline, jobs);
  if (data) await recordSystemEvent(rows.k, data);
}
