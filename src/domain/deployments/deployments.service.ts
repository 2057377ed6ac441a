// Environments and deployments (GitLab's Environment and Deployment models, EnvironmentsFinder,
// DeploymentsFinder, Deployments::CreateService/UpdateService, Ci::Deployments::DestroyService); a
// successful deployment records the merge requests merged into what it deployed
// (Deployments::LinkMergeRequestsService).
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, DeploymentRow, EnvironmentRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { nextIid } from '../../db/internal-ids.ts';
import { isInt32, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { settingsOf } from '../core/project-settings.ts';

export const TIERS = ['production', 'staging', 'testing', 'development', 'other'] as const;
export type Tier = (typeof TIERS)[number];
export const ENVIRONMENT_STATES = ['available', 'stopping', 'stopped'] as const;
export const DEPLOYMENT_STATUSES = ['created', 'running', 'success', 'failed', 'canceled', 'skipped', 'blocked'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
/** the statuses the API writes */
export const WRITABLE_STATUSES = ['created', 'running', 'success', 'failed', 'canceled'] as const;
export const DEPLOYMENT_ORDERS = ['id', 'iid', 'created_at', 'updated_at', 'finished_at', 'ref'] as const;
/** Deployments::LinkMergeRequestsService::COMMITS_LIMIT */
const COMMITS_LIMIT = 10_000;
const FINISHED: readonly string[] = ['success', 'failed', 'canceled', 'skipped'];

/** Gitlab::Regex.environment_name_regex and its message */
const ENV_NAME_RE = /^[a-zA-Z0-9 _./${}-]+$/;
const ENV_NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";

/** Gitlab::Slug::Environment: lower case, letters and digits, a letter first, ≤ 24 characters; a changed name gets a suffix of its hash. */
export function environmentSlug(name: string): string {
  let slug = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(slug)) slug = `env-${slug}`;
  slug = slug.replace(/-{2,}/g, '-');
  if (slug.length > 24 || slug !== name) {
    slug = slug.slice(0, 17);
    if (!slug.endsWith('-')) slug += '-';
    const digest = BigInt(`0x${crypto.createHash('sha256').update(name).digest('hex')}`).toString(36);
    return slug + digest.slice(-6);
  }
  return slug.replace(/-$/, '');
}

/** Environment#guess_tier */
export function guessTier(name: string): Tier {
  if (/(dev|review|trunk)/i.test(name)) return 'development';
  if (/(test|tst|int|ac(ce|)pt|qa|qc|control|quality)/i.test(name)) return 'testing';
  if (/(st(a|)g|mod(e|)l|pre|demo|non)/i.test(name)) return 'staging';
  if (/(pr(o|)d|live)/i.test(name)) return 'production';
  return 'other';
}

export interface EnvironmentInput {
  name?: string;
  external_url?: string | null;
  tier?: Tier;
}

export interface EnvironmentFilters {
  name?: string;
  search?: string;
  states?: string;
}

export interface DeploymentFilters {
  order_by: (typeof DEPLOYMENT_ORDERS)[number];
  sort: 'asc' | 'desc';
  updated_after?: string;
  updated_before?: string;
  finished_after?: string;
  finished_before?: string;
  environment?: string;
  status?: string;
}

export interface CreateDeploymentInput {
  environment: string;
  sha: string;
  ref: string;
  tag: boolean;
  status: DeploymentStatus;
}

export interface ProjectContext {
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}

type Ability = 'read' | 'create' | 'update' | 'destroy_deployment';

/** state_machines' events of a deployment status: the status they lead to, the statuses they leave */
const EVENTS: Record<string, { event: string; from: (s: string) => boolean }> = {
  running: { event: 'run', from: (s) => s === 'created' },
  success: { event: 'succeed', from: (s) => s !== 'success' },
  failed: { event: 'drop', from: (s) => s !== 'failed' },
  canceled: { event: 'cancel', from: (s) => s !== 'canceled' },
  created: { event: 'create', from: () => false },
};

export class DeploymentsService {
  constructor(readonly deps: FeatureDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  // ---- access ---------------------------------------------------------------------------------

  /** The project with the caller's right to environments and deployments (read: Reporters, or anyone who sees a non-private project whose environments are enabled). */
  async project(actor: Actor, idOrPath: string, ability: Ability): Promise<ProjectContext> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    const { project, access } = ctx;
    const level = actor.isAdmin ? 50 : access.level;
    const feature = settingsOf(project).environments_access_level;
    const open = feature === 'enabled' && project.visibility !== 'private' && access.abilities.has('read_project');
    const allowed: Record<Ability, boolean> = {
      read: level >= 20 || open,
      create: level >= 30 && project.archived === 0,
      update: level >= 30 && project.archived === 0,
      destroy_deployment: level >= 40,
    };
    if (feature === 'disabled' && !actor.isAdmin) throw Errors.forbidden();
    if (!allowed[ability]) throw Errors.forbidden();
    return ctx;
  }

  // ---- environments ---------------------------------------------------------------------------

  async listEnvironments(project: ProjectRow, f: EnvironmentFilters) {
    let q = this.k.selectFrom('environments').selectAll().where('project_id', '=', project.id);
    if (f.name !== undefined) q = q.where('name', '=', f.name);
    if (f.search) q = q.where('name', 'like', `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    if (f.states) q = q.where('state', '=', f.states);
    return q.orderBy('id', 'asc');
  }

  async environment(project: ProjectRow, id: number): Promise<EnvironmentRow> {
    if (!isInt32(id)) throw Errors.notFound('Environment');
    const env = await this.k.selectFrom('environments').selectAll().where('project_id', '=', project.id).where('id', '=', id).executeTakeFirst();
    if (!env) throw Errors.notFound('Environment');
    return env;
  }

  private validateEnvironment(input: EnvironmentInput, errors: Record<string, string[]>): void {
    const add = (k: string, m: string) => void (errors[k] ??= []).push(m);
    if (input.name !== undefined) {
      const name = input.name;
      if (!name.trim()) add('name', "can't be blank");
      if (name.length > 255) add('name', 'is too long (maximum is 255 characters)');
      if (name && (!ENV_NAME_RE.test(name) || name.startsWith('/') || name.endsWith('/'))) add('name', ENV_NAME_MESSAGE);
    }
    if (input.external_url) {
      let ok = false;
      try {
        const u = new URL(input.external_url);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
      } catch {
        ok = false;
      }
      if (!ok) add('external_url', 'is blocked: Only allowed schemes are http, https');
      if (input.external_url.length > 255) add('external_url', 'is too long (maximum is 255 characters)');
    }
  }

  async createEnvironment(project: ProjectRow, input: EnvironmentInput & { name: string }): Promise<EnvironmentRow> {
    const errors: Record<string, string[]> = {};
    this.validateEnvironment(input, errors);
    if (await this.environmentNamed(this.k, project, input.name)) (errors.name ??= []).push('has already been taken');
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    try {
      return await this.insertEnvironment(this.k, project, input);
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid({ name: ['has already been taken'] });
      throw e;
    }
  }

  private environmentNamed(k: Kysely<Database>, project: ProjectRow, name: string) {
    return k.selectFrom('environments').selectAll().where('project_id', '=', project.id).where('name', '=', name).executeTakeFirst();
  }

  private insertEnvironment(k: Kysely<Database>, project: ProjectRow, input: EnvironmentInput & { name: string }): Promise<EnvironmentRow> {
    const now = nowIso();
    return k
      .insertInto('environments')
      .values({
        project_id: project.id,
        name: input.name,
        slug: environmentSlug(input.name),
        external_url: input.external_url || null,
        state: 'available',
        tier: input.tier ?? guessTier(input.name),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async updateEnvironment(project: ProjectRow, id: number, input: EnvironmentInput): Promise<EnvironmentRow> {
    const env = await this.environment(project, id);
    const errors: Record<string, string[]> = {};
    this.validateEnvironment(input, errors);
    if (input.name !== undefined && input.name !== env.name && (await this.environmentNamed(this.k, project, input.name))) {
      (errors.name ??= []).push('has already been taken');
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    try {
      return await this.k
        .updateTable('environments')
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.external_url !== undefined ? { external_url: input.external_url || null } : {}),
          ...(input.tier !== undefined ? { tier: input.tier } : {}),
          updated_at: nowIso(),
        })
        .where('id', '=', env.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid({ name: ['has already been taken'] });
      throw e;
    }
  }

  /** Environments::StopService without on_stop actions: the environment is stopped at once. */
  async stopEnvironment(project: ProjectRow, id: number): Promise<EnvironmentRow> {
    const env = await this.environment(project, id);
    if (env.state === 'stopped') return env;
    return this.k.updateTable('environments').set({ state: 'stopped', updated_at: nowIso() }).where('id', '=', env.id).returningAll().executeTakeFirstOrThrow();
  }

  /** destroy_environment: Developers, once the environment is stopped (403 before). */
  async deleteEnvironment(project: ProjectRow, id: number, unmodifiedSince?: number): Promise<void> {
    const env = await this.environment(project, id);
    if (env.state !== 'stopped') throw Errors.forbidden();
    if (unmodifiedSince !== undefined && Date.parse(env.updated_at) > unmodifiedSince) throw Errors.preconditionFailed();
    await this.k.deleteFrom('environments').where('id', '=', env.id).execute();
  }

  /** The last successful deployment of each environment (Environment#last_deployment: the latest finished), one query. */
  async lastDeployments(environmentIds: number[]): Promise<Map<number, DeploymentRow>> {
    const out = new Map<number, DeploymentRow>();
    if (!environmentIds.length) return out;
    const rows = await this.k
      .selectFrom('deployments')
      .selectAll()
      .where('environment_id', 'in', environmentIds)
      .where('id', '=', (eb) =>
        eb
          .selectFrom('deployments as d2')
          .select('d2.id')
          .whereRef('d2.environment_id', '=', 'deployments.environment_id')
          .where('d2.status', '=', 'success')
          .orderBy('d2.finished_at', 'desc')
          .orderBy('d2.id', 'desc')
          .limit(1),
      )
      .execute();
    for (const r of rows) out.set(r.environment_id, r);
    return out;
  }

  // ---- deployments ----------------------------------------------------------------------------

  /** The environments of these deployments, by id, one query. */
  async environmentsOf(deployments: Pick<DeploymentRow, 'environment_id'>[]): Promise<Map<number, EnvironmentRow>> {
    const ids = [...new Set(deployments.map((d) => d.environment_id))];
    const rows = ids.length ? await this.k.selectFrom('environments').selectAll().where('id', 'in', ids).execute() : [];
    return new Map(rows.map((e) => [e.id, e]));
  }

  /**
   * Deployment#merge_requests, newest first: none when the caller may not read the project's merge
   * requests. `access`: the caller's, as `project` returned it.
   */
  mergeRequests(actor: Actor, project: ProjectRow, access: ProjectAccess, deployment: Pick<DeploymentRow, 'id'>) {
    return (
      this.k
        .selectFrom('merge_requests')
        .selectAll('merge_requests')
        .where('merge_requests.id', 'in', (eb) =>
          eb.selectFrom('deployment_merge_requests').select('merge_request_id').where('deployment_id', '=', deployment.id),
        )
        // merge requests of a project whose merge requests the caller may not read: none
        .where('merge_requests.project_id', '=', actor.isAdmin || access.abilities.has('read_merge_request') ? project.id : -1)
        .orderBy('merge_requests.created_at', 'desc')
        .orderBy('merge_requests.id', 'desc')
    );
  }

  /** DeploymentsFinder: its paired filters (400 otherwise), then the order (the id breaks ties). */
  listDeployments(project: ProjectRow, f: DeploymentFilters) {
    if ((f.updated_after || f.updated_before) && f.order_by !== 'updated_at')
      throw Errors.badRequest('`updated_at` filter and `updated_at` sorting must be paired');
    if (f.finished_after || f.finished_before) {
      if (f.order_by !== 'finished_at') throw Errors.badRequest('`finished_at` filter and `finished_at` sorting must be paired');
      if (f.status !== 'success') throw Errors.badRequest('`finished_at` filter must be combined with `success` status filter.');
    }
    if (f.order_by === 'finished_at' && f.status !== 'success') throw Errors.badRequest('`finished_at` sorting must be combined with `success` status filter.');
    let q = this.k.selectFrom('deployments').selectAll('deployments').where('deployments.project_id', '=', project.id);
    if (f.updated_after) q = q.where('deployments.updated_at', '>=', f.updated_after);
    if (f.updated_before) q = q.where('deployments.updated_at', '<=', f.updated_before);
    if (f.finished_after) q = q.where('deployments.finished_at', '>=', f.finished_after);
    if (f.finished_before) q = q.where('deployments.finished_at', '<=', f.finished_before);
    if (f.status) q = q.where('deployments.status', '=', f.status);
    if (f.environment !== undefined) {
      q = q.where('deployments.environment_id', 'in', (eb) =>
        eb
          .selectFrom('environments')
          .select('environments.id')
          .where('environments.project_id', '=', project.id)
          .where('environments.name', '=', f.environment!),
      );
    }
    if (f.order_by === 'id') return q.orderBy('deployments.id', f.sort);
    return q.orderBy(`deployments.${f.order_by}`, f.sort).orderBy('deployments.id', f.sort);
  }

  async deployment(project: ProjectRow, id: number): Promise<DeploymentRow> {
    if (!isInt32(id)) throw Errors.notFound('Deployment');
    const d = await this.k.selectFrom('deployments').selectAll().where('project_id', '=', project.id).where('id', '=', id).executeTakeFirst();
    if (!d) throw Errors.notFound('Deployment');
    return d;
  }

  /** Deployments::CreateService: the environment (created when missing), the deployment with its iid; a success links merge requests. */
  async createDeployment(actor: Actor, project: ProjectRow, input: CreateDeploymentInput): Promise<DeploymentRow> {
    const errors: Record<string, string[]> = {};
    const envErrors: Record<string, string[]> = {};
    this.validateEnvironment({ name: input.environment }, envErrors);
    if (Object.keys(envErrors).length) throw Errors.invalid(Object.fromEntries(Object.entries(envErrors).map(([k, v]) => [`environment.${k}`, v])));
    const repo = this.deps.repos.repository(project);
    const sha = repo.exists() && /^[0-9a-f]{4,64}$/i.test(input.sha) ? await repo.resolveCommit(input.sha.toLowerCase()) : null;
    if (!sha) (errors.sha ??= []).push('The commit does not exist');
    const refExists = repo.exists() && (input.tag ? await repo.tag(input.ref) : await repo.branch(input.ref));
    if (!refExists) (errors.ref ??= []).push('The branch or tag does not exist');
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const now = nowIso();
    const finished = FINISHED.includes(input.status);
    const links = input.status === 'success' ? await this.mergedInto(project, input.environment, input.ref, sha!) : null;
    return this.k.transaction().execute(async (trx) => {
      const env = (await this.environmentNamed(trx, project, input.environment)) ?? (await this.insertEnvironment(trx, project, { name: input.environment }));
      const iid = await nextIid(trx, 'deployments', 'Project', project.id);
      const d = await trx
        .insertInto('deployments')
        .values({
          iid,
          project_id: project.id,
          environment_id: env.id,
          ref: input.ref,
          tag: input.tag ? 1 : 0,
          sha: sha!,
          user_id: actor.user?.id ?? null,
          status: input.status,
          created_at: now,
          updated_at: now,
          finished_at: finished ? now : null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (links) await this.link(trx, d, env.id, links);
      if (input.status === 'success') await this.startEnvironment(trx, env.id);
      return d;
    });
  }

  /** Deployments::UpdateService: the status moves as GitLab's state machine allows (400 otherwise). */
  async updateDeployment(project: ProjectRow, id: number, status: DeploymentStatus): Promise<DeploymentRow> {
    const d = await this.deployment(project, id);
    const move = EVENTS[status];
    if (!move.from(d.status)) throw Errors.invalid({ status: [`cannot transition via "${move.event}"`] });
    const env = await this.k.selectFrom('environments').select(['id', 'name']).where('id', '=', d.environment_id).executeTakeFirstOrThrow();
    const links = status === 'success' ? await this.mergedInto(project, env.name, d.ref, d.sha) : null;
    const now = nowIso();
    return this.k.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('deployments')
        .set({ status, updated_at: now, ...(FINISHED.includes(status) ? { finished_at: now } : {}) })
        .where('id', '=', d.id)
        .where('status', '=', d.status)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw Errors.conflict('The deployment changed meanwhile');
      if (links) await this.link(trx, updated, env.id, links);
      if (status === 'success') await this.startEnvironment(trx, env.id);
      return updated;
    });
  }

  /** Deployments::UpdateEnvironmentService: a successful deployment starts a stopped environment again. */
  private async startEnvironment(trx: Kysely<Database>, environmentId: number): Promise<void> {
    await trx
      .updateTable('environments')
      .set({ state: 'available', updated_at: nowIso() })
      .where('id', '=', environmentId)
      .where('state', '!=', 'available')
      .execute();
  }

  /** Ci::Deployments::DestroyService: not a running one, not the one an environment shows as deployed. */
  async deleteDeployment(project: ProjectRow, id: number, unmodifiedSince?: number): Promise<void> {
    const d = await this.deployment(project, id);
    if (d.status === 'running' || d.status === 'created') throw Errors.refused('Cannot destroy running deployment');
    const last = (await this.lastDeployments([d.environment_id])).get(d.environment_id);
    if (last?.id === d.id) throw Errors.refused('Deployment currently deployed to environment');
    if (unmodifiedSince !== undefined && Date.parse(d.updated_at) > unmodifiedSince) throw Errors.preconditionFailed();
    await this.k.deleteFrom('deployments').where('id', '=', d.id).execute();
  }

  // ---- merge requests of a deployment -----------------------------------------------------------

  /**
   * Deployments::LinkMergeRequestsService: the merged merge requests of the project into `ref` whose
   * merge (or squash) commit — their head for a fast-forward merge — is the deployed commit or one of
   * its ancestors, not yet linked to a deployment of that environment. The commits are those since the
   * environment's previous successful deployment (at most 10,000).
   */
  async mergedInto(project: ProjectRow, environment: string, ref: string, sha: string, k: Kysely<Database> = this.k): Promise<number[]> {
    const env = await this.environmentNamed(k, project, environment);
    let q = k
      .selectFrom('merge_requests')
      .select(['id', 'merge_commit_sha', 'squash_commit_sha', 'sha'])
      .where('project_id', '=', project.id)
      .where('state', '=', 'merged')
      .where('target_branch', '=', ref);
    if (env) {
      q = q.where('id', 'not in', (eb) => eb.selectFrom('deployment_merge_requests').select('merge_request_id').where('environment_id', '=', env.id));
    }
    const candidates = await q.execute();
    if (!candidates.length) return [];
    const previous = env
      ? await k
          .selectFrom('deployments')
          .select('sha')
          .where('environment_id', '=', env.id)
          .where('status', '=', 'success')
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst()
      : undefined;
    const repo = this.deps.repos.repository(project);
    const args = ['rev-list', `--max-count=${COMMITS_LIMIT}`, sha];
    if (previous && previous.sha !== sha && (await repo.resolveCommit(previous.sha))) args.push(`^${previous.sha}`);
    const out = await repo.run([...args, '--']);
    const commits = new Set(out.stdout.toString('utf8').split('\n').filter(Boolean));
    return candidates
      .filter((mr) => {
        const merged = mr.merge_commit_sha ?? mr.squash_commit_sha ?? mr.sha;
        return (!!merged && commits.has(merged)) || (!!mr.squash_commit_sha && commits.has(mr.squash_commit_sha));
      })
      .map((mr) => mr.id);
  }

  private async link(trx: Kysely<Database>, d: DeploymentRow, environmentId: number, mergeRequestIds: number[]): Promise<void> {
    if (!mergeRequestIds.length) return;
    await trx
      .insertInto('deployment_merge_requests')
      .values(mergeRequestIds.map((id) => ({ deployment_id: d.id, merge_request_id: id, environment_id: environmentId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** The merge requests a deployment shipped (GET …/deployments/:id/merge_requests). */
  async mergeRequestIds(d: DeploymentRow): Promise<number[]> {
    const rows = await this.k
      .selectFrom('deployment_merge_requests')
      .select('merge_request_id')
      .where('deployment_id', '=', d.id)
      .orderBy('merge_request_id')
      .execute();
    return rows.map((r) => r.merge_request_id);
  }
}

/**
 * For the merge request lists (environment, deployed_after, deployed_before): records, in the writer's
 * transaction, that a successful deployment shipped these merge requests. The lists read
 * deployment_merge_requests joined to deployments.finished_at and environments.name.
 */
export async function linkMergeRequests(deps: FeatureDeps, trx: Kysely<Database>, deployment: DeploymentRow): Promise<number[]> {
  const svc = new DeploymentsService(deps);
  const project = await trx.selectFrom('projects').selectAll().where('id', '=', deployment.project_id).executeTakeFirstOrThrow();
  const env = await trx.selectFrom('environments').select('name').where('id', '=', deployment.environment_id).executeTakeFirstOrThrow();
  const ids = await svc.mergedInto(project, env.name, deployment.ref, deployment.sha, trx);
  if (ids.length) {
    await trx
      .insertInto('deployment_merge_requests')
      .values(ids.map((id) => ({ deployment_id: deployment.id, merge_request_id: id, environment_id: deployment.environment_id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  return ids;
}
