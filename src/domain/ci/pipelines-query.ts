// A project's pipelines as GitLab's Ci::PipelinesFinder lists them (app/finders/ci/pipelines_finder.rb):
// scope, status, source, ref, sha, yaml_errors, username, dates and order; with the latest pipeline of a
// ref, a pipeline's jobs and bridges, and the child pipelines the bridges triggered.
import type { SelectQueryBuilder } from 'kysely';
import type { CiBuildRow, CiPipelineRow, Database, ProjectRow } from '../../db/schema.ts';
import type { Db } from '../../db/connect.ts';
import type { RepositoryStore } from '../../git/storage.ts';

export const PIPELINE_SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'] as const;
export const PIPELINE_ORDERS = ['id', 'status', 'ref', 'updated_at', 'user_id'] as const;

export interface PipelineFilters {
  scope?: (typeof PIPELINE_SCOPES)[number];
  status?: string;
  source?: string;
  ref?: string;
  sha?: string;
  yaml_errors?: boolean;
  username?: string;
  name?: string;
  /** ISO times, already checked */
  updated_after?: string;
  updated_before?: string;
  created_after?: string;
  created_before?: string;
  order_by?: (typeof PIPELINE_ORDERS)[number];
  sort?: 'asc' | 'desc';
}

export interface PipelineJobFilters {
  /** bridges (trigger jobs) instead of builds */
  bridges: boolean;
  includeRetried: boolean;
  /** statuses; none: every status */
  scopes: string[];
}

type PipelinesQB = SelectQueryBuilder<Database, 'ci_pipelines', CiPipelineRow>;

/** by_status, by_source (no child pipelines unless asked for), by_ref, by_sha, by_yaml_errors, by_name. */
function byAttributes(query: PipelinesQB, f: PipelineFilters): PipelinesQB {
  if (f.status) query = query.where('status', '=', f.status);
  if (f.source) query = query.where('source', '=', f.source);
  else query = query.where('source', '!=', 'parent_pipeline');
  if (f.ref !== undefined) query = query.where('ref', '=', f.ref);
  if (f.sha !== undefined) query = query.where('sha', '=', f.sha);
  if (f.yaml_errors === true) query = query.where('yaml_errors', 'is not', null);
  if (f.yaml_errors === false) query = query.where('yaml_errors', 'is', null);
  // workflow:name is not kept: no pipeline has a name to match
  if (f.name !== undefined) query = query.where(({ lit }) => lit(false));
  return query;
}

/** by_updated_at, by_created_at: strict bounds. */
function byDates(query: PipelinesQB, f: PipelineFilters): PipelinesQB {
  if (f.updated_after) query = query.where('updated_at', '>', f.updated_after);
  if (f.updated_before) query = query.where('updated_at', '<', f.updated_before);
  if (f.created_after) query = query.where('created_at', '>', f.created_after);
  if (f.created_before) query = query.where('created_at', '<', f.created_before);
  return query;
}

/** sort_items: by the column asked for (newest first by default), the id breaking ties. */
function sorted(query: PipelinesQB, f: PipelineFilters): PipelinesQB {
  const dir = f.sort ?? 'desc';
  const column = f.order_by ?? 'id';
  query = query.orderBy(column, dir);
  return column === 'id' ? query : query.orderBy('id', dir);
}

export class PipelinesQuery {
  constructor(private readonly deps: { db: Db; repos: RepositoryStore }) {}

  private get k() {
    return this.deps.db.kysely;
  }

  /** Ci::PipelinesFinder#execute: the ordered query (child pipelines only when their source is asked for). */
  async list(project: ProjectRow, f: PipelineFilters): Promise<PipelinesQB> {
    let query = this.k.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id);
    query = await this.byScope(project, query, f.scope);
    query = await this.byUsername(byAttributes(query, f), f.username);
    return sorted(byDates(query, f), f);
  }

  /** by_username: an unknown user has no pipelines. */
  private async byUsername(query: PipelinesQB, username: string | undefined): Promise<PipelinesQB> {
    if (username === undefined) return query;
    const u = await this.k.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
    return query.where('user_id', '=', u?.id ?? -1);
  }

  /** by_scope: running, pending, finished, or the latest pipeline of each branch (tag) that exists. */
  private async byScope(project: ProjectRow, query: PipelinesQB, scope: PipelineFilters['scope']): Promise<PipelinesQB> {
    switch (scope) {
      case 'running':
        return query.where('status', '=', 'running');
      case 'pending':
        return query.where('status', '=', 'pending');
      case 'finished':
        return query.where('status', 'in', ['success', 'failed', 'canceled', 'skipped']);
      case 'branches':
      case 'tags': {
        const repo = this.deps.repos.repository(project);
        const refs = (scope === 'branches' ? await repo.branches() : await repo.tags()).map((r) => r.short);
        const latest = refs.length
          ? await this.k
              .selectFrom('ci_pipelines')
              .select((eb) => eb.fn.max('id').as('id'))
              .where('project_id', '=', project.id)
              .where('tag', '=', scope === 'tags' ? 1 : 0)
              .where('source', '!=', 'parent_pipeline')
              .where('ref', 'in', refs)
              .groupBy('ref')
              .execute()
          : [];
        const ids = latest.map((r) => Number(r.id));
        return ids.length ? query.where('id', 'in', ids) : query.where(({ lit }) => lit(false));
      }
      default:
        return query;
    }
  }

  /** Project#latest_pipeline: the newest pipeline of `ref` at the ref's head commit. */
  async latest(project: ProjectRow, ref: string): Promise<CiPipelineRow | undefined> {
    const sha = await this.deps.repos.repository(project).resolveCommit(ref);
    if (!sha) return undefined;
    return this.k
      .selectFrom('ci_pipelines')
      .selectAll()
      .where('project_id', '=', project.id)
      .where('ref', '=', ref)
      .where('sha', '=', sha)
      .where('source', '!=', 'parent_pipeline')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** A pipeline's jobs (or bridges), oldest first; the retried ones only when asked for. */
  jobs(pipeline: Pick<CiPipelineRow, 'id'>, f: PipelineJobFilters): SelectQueryBuilder<Database, 'ci_builds', CiBuildRow> {
    let q = this.k
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', pipeline.id)
      .where('type', '=', f.bridges ? 'bridge' : 'build');
    if (!f.includeRetried) q = q.where('retried', '=', 0);
    if (f.scopes.length) q = q.where('status', 'in', f.scopes);
    return q.orderBy('id', 'asc');
  }

  /** The child pipelines these bridges triggered, by bridge. */
  async downstreamOf(bridges: Pick<CiBuildRow, 'id'>[]): Promise<Map<number | null, CiPipelineRow>> {
    const ids = bridges.map((b) => b.id);
    const children = ids.length ? await this.k.selectFrom('ci_pipelines').selectAll().where('parent_job_id', 'in', ids).execute() : [];
    return new Map(children.map((ch) => [ch.parent_job_id, ch]));
  }
}
