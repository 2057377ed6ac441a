// External commit statuses (GitLab Ci::CreateCommitStatusService, GenericCommitStatus, lib/api/
// commit_statuses.rb): CI systems outside Hearth report a state per commit and name; each is a job of
// type generic in the stage "external" of a pipeline for that commit and ref (the newest one, or a new
// pipeline of source external).
import type { CiBuildRow, CiPipelineRow, ProjectRow } from '../../db/schema.ts';
import { nextIid } from '../../db/internal-ids.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { settingsOf } from '../core/project-settings.ts';
import type { CiDeps } from './deps.ts';

export const STATUS_STATES = ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'] as const;
export type StatusState = (typeof STATUS_STATES)[number];
export const STATUS_ORDERS = ['id', 'pipeline_id'] as const;

/** GenericCommitStatus::EXTERNAL_STAGE_IDX */
export const EXTERNAL_STAGE_IDX = 1_000_000;
/** CreateCommitStatusService::DEFAULT_LIMIT_PIPELINES */
const DEFAULT_LIMIT_PIPELINES = 100;

export interface CreateStatusInput {
  state: StatusState;
  ref?: string;
  name?: string;
  context?: string;
  target_url?: string;
  description?: string;
  coverage?: number;
  pipeline_id?: number;
}

export interface StatusFilters {
  ref?: string;
  stage?: string;
  name?: string;
  pipeline_id?: number;
  all?: boolean;
  order_by: (typeof STATUS_ORDERS)[number];
  sort: 'asc' | 'desc';
}

/** CommitStatus's state machine: an event, the statuses it leaves, the status it leads to. */
const EVENTS = {
  enqueue: { from: ['created', 'skipped', 'manual', 'scheduled', 'waiting_for_resource', 'preparing'], to: 'pending' },
  run: { from: ['pending'], to: 'running' },
  success: { from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running'], to: 'success' },
  drop: { from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'manual', 'scheduled'], to: 'failed' },
  cancel: { from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'manual', 'scheduled'], to: 'canceled' },
  skip: { from: ['created', 'waiting_for_resource', 'preparing', 'pending'], to: 'skipped' },
} as const;
type EventName = keyof typeof EVENTS;

/** The events a state applies (apply_job_state!): `running` tries enqueue (not a bang: may fail quietly) then run!. */
const STATE_EVENTS: Record<StatusState, { event: EventName; bang: boolean }[]> = {
  pending: [{ event: 'enqueue', bang: true }],
  running: [
    { event: 'enqueue', bang: false },
    { event: 'run', bang: true },
  ],
  success: [{ event: 'success', bang: true }],
  failed: [{ event: 'drop', bang: true }],
  canceled: [{ event: 'cancel', bang: true }],
  skipped: [{ event: 'skip', bang: true }],
};

/** state_machines' InvalidTransition message. */
function invalidTransition(event: string, from: string): string {
  return `Cannot transition status via :${event} from :${from} (Reason(s): Status cannot transition via "${event}")`;
}

/** AddressableUrlValidator with GenericCommitStatus's options (http/https, ≤ 255). */
function targetUrlErrors(url: string): string[] {
  const errors: string[] = [];
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    errors.push('must be a valid URL');
  }
  if (parsed && !['http:', 'https:'].includes(parsed.protocol)) errors.push('is blocked: Only allowed schemes are http, https');
  if (url.length > 255) errors.push('is too long (maximum is 255 characters)');
  return errors;
}

export class CommitStatusesService {
  constructor(protected readonly deps: CiDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  /** The project with read_commit_status (Reporter, or anyone who may see the jobs) or create_commit_status (Developer). */
  async project(actor: Actor, idOrPath: string, ability: 'read' | 'create'): Promise<ProjectRow> {
    const { project, access } = await this.deps.resolve.project(actor, idOrPath);
    if (actor.isAdmin) return project;
    const s = settingsOf(project);
    // builds or repository disabled: no commit status for anyone (ProjectPolicy prevents them)
    if (s.builds_access_level === 'disabled' || s.repository_access_level === 'disabled') throw Errors.forbidden();
    const level = access.level;
    if (ability === 'create') {
      if (level < 30 || project.archived) throw Errors.forbidden();
      return project;
    }
    // below Reporter: a public or internal project whose jobs are public (public_builds), as ProjectPolicy says
    const guestish = s.builds_access_level === 'enabled' && access.abilities.has('read_project') && project.visibility !== 'private' && s.public_jobs !== false;
    if (level < 20 && !guestish) throw Errors.forbidden();
    return project;
  }

  /** project.commit(sha): any revision naming a commit (a SHA, a branch, a tag) → its SHA, else 404 Commit. */
  async commit(project: ProjectRow, rev: string): Promise<string> {
    const repo = this.deps.repos.repository(project);
    const sha = rev && !rev.startsWith('-') && repo.exists() ? await repo.resolveCommit(rev) : null;
    if (!sha) throw Errors.notFound('Commit');
    return sha;
  }

  /** The statuses of a commit (every job type), the latest only unless `all`. */
  async list(project: ProjectRow, sha: string, f: StatusFilters) {
    let q = this.k
      .selectFrom('ci_builds')
      .innerJoin('ci_pipelines', 'ci_pipelines.id', 'ci_builds.pipeline_id')
      .selectAll('ci_builds')
      .where('ci_pipelines.project_id', '=', project.id)
      .where('ci_pipelines.sha', '=', sha);
    if (f.pipeline_id !== undefined) q = q.where('ci_pipelines.id', '=', f.pipeline_id);
    if (!f.all) q = q.where('ci_builds.retried', '=', 0);
    if (f.ref) q = q.where('ci_builds.ref', '=', f.ref);
    if (f.stage) q = q.where('ci_builds.stage', '=', f.stage);
    if (f.name) q = q.where('ci_builds.name', '=', f.name);
    return q.orderBy(f.order_by === 'pipeline_id' ? 'ci_builds.pipeline_id' : 'ci_builds.id', f.sort);
  }

  /** Ci::CreateCommitStatusService#execute: the status after its transition; the pipeline then follows. */
  async create(actor: Actor, project: ProjectRow, rev: string, input: CreateStatusInput): Promise<CiBuildRow> {
    const sha = await this.commit(project, rev);
    const first = await this.firstMatchingPipeline(project, sha, input);
    if (input.pipeline_id !== undefined && !first) throw Errors.notFound('Pipeline for pipeline_id, sha and ref');
    const ref = input.ref ?? first?.ref ?? (await this.branchContaining(project, sha));
    if (!ref) throw Errors.notFound('References for commit');
    const name = input.name ?? input.context ?? 'default';

    const errors: Record<string, string[]> = {};
    if (input.target_url !== undefined) {
      const e = targetUrlErrors(input.target_url);
      if (e.length) errors.target_url = e;
    }
    if (input.description !== undefined && input.description.length > 255) errors.description = ['is too long (maximum is 255 characters)'];
    if (ref.length > 255) errors.ref = ['is too long (maximum is 255 characters)'];
    if (name.length > 255) errors.name = ['is too long (maximum is 255 characters)'];
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const isTag = !!(await this.deps.repos.repository(project).tag(ref)) && !(await this.deps.repos.repository(project).branch(ref));
    const userId = actor.user?.id ?? null;
    const now = nowIso();

    const result = await this.k.transaction().execute(async (trx) => {
      let pipeline = first;
      if (!pipeline) {
        const iid = await nextIid(trx, 'ci_pipelines', 'Project', project.id);
        pipeline = await trx
          .insertInto('ci_pipelines')
          .values({
            iid,
            project_id: project.id,
            ref,
            tag: isTag ? 1 : 0,
            sha,
            source: 'external',
            status: 'created',
            user_id: userId,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      let q = trx
        .selectFrom('ci_builds')
        .selectAll()
        .where('pipeline_id', '=', pipeline.id)
        .where('type', '=', 'generic')
        .where('status', 'in', ['running', 'pending'])
        .where('ref', '=', ref)
        .where('name', '=', name);
      q = userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
      const existing = await q.orderBy('id', 'desc').executeTakeFirst();

      // the transitions first, on the status as it is: a refused one changes nothing
      let status = existing?.status ?? 'created';
      const set: Record<string, unknown> = {};
      for (const { event, bang } of STATE_EVENTS[input.state]) {
        const e = EVENTS[event];
        if (!(e.from as readonly string[]).includes(status)) {
          if (bang) return { error: invalidTransition(event, status) };
          continue;
        }
        if (e.to === 'pending') set.queued_at = now;
        if (e.to === 'running') set.started_at = now;
        if (['success', 'failed', 'canceled'].includes(e.to)) set.finished_at = now;
        if (event === 'drop') set.failure_reason = 'api_failure';
        status = e.to;
      }
      const optional: Record<string, unknown> = {};
      if (input.target_url !== undefined) optional.target_url = input.target_url;
      if (input.description !== undefined) optional.description = input.description;
      if (input.coverage !== undefined) optional.coverage = input.coverage;

      let row: CiBuildRow;
      if (existing) {
        row = await trx
          .updateTable('ci_builds')
          .set({ ...optional, ...set, status, updated_at: now, lock_version: existing.lock_version + 1 })
          .where('id', '=', existing.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      } else {
        row = await trx
          .insertInto('ci_builds')
          .values({
            project_id: project.id,
            pipeline_id: pipeline.id,
            type: 'generic',
            name,
            stage: 'external',
            stage_idx: EXTERNAL_STAGE_IDX,
            status,
            ref,
            tag: pipeline.tag,
            sha,
            user_id: userId,
            options: '{}',
            allow_failure: 0,
            created_at: now,
            updated_at: now,
            ...optional,
            ...set,
          } as never)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      // update_older_statuses_retried!: older jobs of that name in the pipeline are no longer the latest
      await trx
        .updateTable('ci_builds')
        .set({ retried: 1 })
        .where('pipeline_id', '=', pipeline.id)
        .where('name', '=', name)
        .where('retried', '=', 0)
        .where('id', '!=', row.id)
        .execute();
      return { row, pipeline };
    });
    if (result.error !== undefined) throw Errors.refused(result.error);
    await this.deps.ci.pipelines.process(result.pipeline.id);
    return result.row;
  }

  /** project.ci_pipelines.newest_first(sha:) (limited to 100 unless a pipeline_id is asked), for the ref and id asked. */
  private async firstMatchingPipeline(project: ProjectRow, sha: string, input: CreateStatusInput): Promise<CiPipelineRow | undefined> {
    let inner = this.k.selectFrom('ci_pipelines').select('id').where('project_id', '=', project.id).where('sha', '=', sha).orderBy('id', 'desc');
    if (input.pipeline_id === undefined) inner = inner.limit(DEFAULT_LIMIT_PIPELINES);
    let q = this.k
      .selectFrom('ci_pipelines')
      .selectAll()
      .where('id', 'in', inner as never);
    if (input.ref !== undefined) q = q.where('ref', '=', input.ref);
    if (input.pipeline_id !== undefined) q = q.where('id', '=', input.pipeline_id);
    return q.orderBy('id', 'desc').executeTakeFirst();
  }

  /** repository.branch_names_contains(sha).first */
  private async branchContaining(project: ProjectRow, sha: string): Promise<string | null> {
    const repo = this.deps.repos.repository(project);
    const out = await repo.run(['for-each-ref', '--contains', sha, '--format=%(refname:short)', '--sort=refname', 'refs/heads/']);
    const names = out.stdout.toString('utf8').split('\n').filter(Boolean);
    return names[0] ?? null;
  }
}
