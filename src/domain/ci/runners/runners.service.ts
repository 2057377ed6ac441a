// Runners (GitLab Ci::Runner, Ci::Runners::RegisterRunnerService, CreateRunnerService, AssignRunnerService,
// UnassignRunnerService, RunnerPolicy): registration tokens, runner authentication tokens, status
// filters, who may see or change a runner, and the runner API's lists and updates.
// See docs/design-notes.md, CI.
import { inSubtreeOf } from '../../../db/sql.ts';
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database, CiBuildRow, CiRunnerRow, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { VersionedCache } from '../../../lib/versioned-cache.ts';
import { stamp, type Versions } from '../../../db/versions.ts';
import { randomToken } from '../../../lib/secrets.ts';
import { nowIso, todayDate } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import type { Policy } from '../../access/policy.ts';
import { traversalIds, unexpired } from '../../access/policy.ts';
import { settingsOf } from '../../core/project-settings.ts';
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

export const RUNNER_TYPES = ['instance_type', 'group_type', 'project_type'] as const;
export const RUNNER_STATUSES = ['active', 'paused', 'online', 'offline', 'never_contacted', 'stale'] as const;
/** Ci::Runner::AVAILABLE_SCOPES: legacy types, types and statuses (deprecated ones included). */
export const RUNNER_SCOPES = ['specific', 'shared', ...RUNNER_TYPES, ...RUNNER_STATUSES] as const;
export const ACCESS_LEVELS = ['not_protected', 'ref_protected'] as const;
export const JOB_STATUSES = [
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'success',
  'failed',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
] as const;

const ONLINE_MS = 2 * 3600_000;
const STALE_MS = 7 * 86_400_000;
/**
 * contacted_at is written on a contact when it is older than this: every contact counts, at a minute's
 * resolution (GitLab keeps the latest contact in Redis and writes the column every 40–55 minutes).
 */
const CONTACT_EVERY_MS = 60_000;
export const MAINTENANCE_NOTE_MAX = 1024;

const OWNER = 50;
const MAINTAINER = 40;
const DEVELOPER = 30;
const REPORTER = 20;

export type RunnerQuery = SelectQueryBuilder<Database, 'ci_runners', CiRunnerRow>;
type RunnerEB = ExpressionBuilder<Database, 'ci_runners'>;

export interface RunnerFilters {
  scope?: string;
  type?: string;
  status?: string;
  paused?: boolean;
  tag_list?: string[];
  version_prefix?: string;
}

export interface RunnerAttributes {
  description?: string;
  active?: boolean;
  tag_list?: string[];
  run_untagged?: boolean;
  locked?: boolean;
  access_level?: string;
  maximum_timeout?: number | null;
  maintenance_note?: string | null;
}

/** Who may do what with one runner (GitLab's RunnerPolicy, as the spec words it). */
export interface RunnerAccess {
  /** admin_runners on the runner's owner: instance → administrator, group → Owner, project → Maintainer of the owner project */
  admin: boolean;
  read: boolean;
  update: boolean;
  readBuilds: boolean;
  assign: boolean;
  /** the runner serves more than one project */
  multiProject: boolean;
}

export interface RunnerTokenResult {
  token: string;
  token_expires_at: string | null;
}

function newRunnerToken(): string {
  return `glrt-${randomToken(20)}`;
}

/** GitLab's registration tokens start with RUNNERS_TOKEN_PREFIX "GR1348941". */
function newRegistrationToken(): string {
  return `GR1348941${randomToken(15)}`;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

type RunnerEb = ExpressionBuilder<Database, 'ci_runners'>;
type Ids = number[] | SelectQueryBuilder<any, any, { id: number } | { runner_id: number }> | ReturnType<Policy['memberProjectIds']>;

/** Project runners assigned to any of these projects. */
function ofProjects(eb: RunnerEb, projectIds: Ids): Expression<SqlBool> {
  return eb(
    'ci_runners.id',
    'in',
    eb
      .selectFrom('ci_runner_projects')
      .select('ci_runner_projects.runner_id')
      .where('ci_runner_projects.project_id', 'in', projectIds as number[]),
  );
}

/** Group runners of any of these groups. */
function ofGroups(eb: RunnerEb, groupIds: Ids): Expression<SqlBool> {
  return eb.and([
    eb('ci_runners.runner_type', '=', 'group_type'),
    eb(
      'ci_runners.id',
      'in',
      eb
        .selectFrom('ci_runner_namespaces')
        .select('ci_runner_namespaces.runner_id')
        .where('ci_runner_namespaces.namespace_id', 'in', groupIds as number[]),
    ),
  ]);
}

export class RunnersService {
  /** runners by token digest, as of the runners' table version (authenticate) */
  private readonly byDigest = new VersionedCache<CiRunnerRow>(5000, 60_000);

  constructor(protected readonly deps: CiDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  // ---- runner tokens (the runner-facing side) ----------------------------------------------------

  /**
   * The runner an authentication token belongs to (null when unknown or expired); records the
   * contact (contacted_at and what `info` says) when `contact` is given.
   *
   * Every contact updates contacted_at (Ci::Runner#heartbeat), written at most once a minute per runner:
   * a runner long-polling several times a minute writes once, so the cached runner lists are not
   * invalidated on each poll. The info fields are written whenever one of them changed.
   */
  async authenticate(token: string, contact?: { info?: RunnerInfo; ip?: string }, versions?: Versions): Promise<CiRunnerRow | null> {
    if (typeof token !== 'string' || !token) return null;
    const digest = this.deps.digest(token);
    // with the caller's versions, a runner found before is kept until the runners' table version moves (a rotated,
    // revoked or paused runner is a write); unknown tokens are never kept
    const at = versions ? stamp(versions, ['ci_runners']) : null;
    let runner = at !== null ? this.byDigest.get(digest, at) : undefined;
    if (!runner) {
      runner = await this.k.selectFrom('ci_runners').selectAll().where('token_digest', '=', digest).executeTakeFirst();
      if (!runner) return null;
      if (at !== null) this.byDigest.set(digest, at, runner);
    }
    if (runner.token_expires_at && Date.parse(runner.token_expires_at) <= Date.now()) return null;
    if (contact) return this.heartbeat(runner, contact);
    return runner;
  }

  private async heartbeat(runner: CiRunnerRow, contact: { info?: RunnerInfo; ip?: string }): Promise<CiRunnerRow> {
    const info = contact.info ?? {};
    const changes: Partial<Record<'version' | 'revision' | 'platform' | 'architecture' | 'executor_type' | 'ip_address' | 'name', string>> = {};
    const take = (key: keyof typeof changes, value: unknown) => {
      if (typeof value === 'string' && value !== (runner[key] ?? null)) changes[key] = value;
    };
    take('version', info.version);
    take('revision', info.revision);
    take('platform', info.platform);
    take('architecture', info.architecture);
    take('executor_type', info.executor);
    take('ip_address', contact.ip);
    const now = Date.now();
    const stale = !runner.contacted_at || Date.parse(runner.contacted_at) < now - CONTACT_EVERY_MS;
    if (!stale && !Object.keys(changes).length) return runner;
    const set = { ...changes, contacted_at: new Date(now).toISOString() };
    await this.k.updateTable('ci_runners').set(set).where('id', '=', runner.id).execute();
    return { ...runner, ...set };
  }

  /** POST /runners: registration with a registration token (null: unknown token → 403). */
  async register(
    registrationToken: string,
    attrs: RunnerAttributes & { info?: RunnerInfo; ip?: string },
  ): Promise<{ runner: CiRunnerRow; token: string } | null> {
    const reg = await this.k
      .selectFrom('ci_registration_tokens')
      .selectAll()
      .where('token_digest', '=', this.deps.digest(registrationToken))
      .executeTakeFirst();
    if (!reg) return null;
    const type = reg.scope === 'project' ? 'project_type' : reg.scope === 'group' ? 'group_type' : 'instance_type';
    // The owner must still exist (a deleted project or group cascades its token away, but be safe).
    if (reg.scope === 'project' && !(await this.k.selectFrom('projects').select('id').where('id', '=', reg.scope_id).executeTakeFirst())) return null;
    if (reg.scope === 'group' && !(await this.deps.resolve.namespaceById(reg.scope_id))) return null;
    const info = attrs.info ?? {};
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return this.insertRunner(type, reg.scope_id, attrs, {
      creation_method: 'registration_token',
      creator_id: null,
      name: str(info.name),
      version: str(info.version),
      revision: str(info.revision),
      platform: str(info.platform),
      architecture: str(info.architecture),
      executor_type: str(info.executor),
      ip_address: attrs.ip ?? null,
    });
  }

  private async insertRunner(
    type: string,
    ownerId: number,
    attrs: RunnerAttributes,
    extra: Partial<
      Pick<CiRunnerRow, 'creation_method' | 'creator_id' | 'name' | 'version' | 'revision' | 'platform' | 'architecture' | 'executor_type' | 'ip_address'>
    >,
  ): Promise<{ runner: CiRunnerRow; token: string }> {
    const token = newRunnerToken();
    const now = nowIso();
    const runner = await this.k.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('ci_runners')
        .values({
          runner_type: type,
          token_digest: this.deps.digest(token),
          token_expires_at: null,
          description: attrs.description ?? '',
          active: attrs.active === false ? 0 : 1,
          locked: attrs.locked ? 1 : 0,
          run_untagged: attrs.run_untagged === false ? 0 : 1,
          tag_list: JSON.stringify(normalizeTags(attrs.tag_list ?? [])),
          access_level: attrs.access_level ?? 'not_protected',
          maximum_timeout: attrs.maximum_timeout ?? null,
          maintenance_note: attrs.maintenance_note ?? null,
          created_at: now,
          updated_at: now,
          ...extra,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (type === 'project_type') await trx.insertInto('ci_runner_projects').values({ runner_id: row.id, project_id: ownerId, created_at: now }).execute();
      if (type === 'group_type') await trx.insertInto('ci_runner_namespaces').values({ runner_id: row.id, namespace_id: ownerId }).execute();
      return row;
    });
    return { runner, token };
  }

  /** Validation of runner attributes as Ci::Runner's model validations (400 {"message":{…}}). */
  validate(attrs: RunnerAttributes): void {
    const errors: Record<string, string[]> = {};
    if (attrs.maintenance_note && [...attrs.maintenance_note].length > MAINTENANCE_NOTE_MAX) {
      errors.maintenance_note = [`is too long (maximum is ${MAINTENANCE_NOTE_MAX} characters)`];
    }
    if (attrs.maximum_timeout !== undefined && attrs.maximum_timeout !== null && attrs.maximum_timeout < 600) {
      errors.maximum_timeout = ['needs to be at least 10 minutes'];
    }
    if (attrs.run_untagged === false && !normalizeTags(attrs.tag_list ?? []).length) {
      errors.tags_list = ['can not be empty when runner is not allowed to pick untagged jobs'];
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
  }

  /** DELETE /runners (the runner unregisters itself) and DELETE /runners/:id. */
  async destroy(runner: CiRunnerRow): Promise<void> {
    await this.k.transaction().execute(async (trx) => {
      await trx.deleteFrom('ci_runner_projects').where('runner_id', '=', runner.id).execute();
      await trx.deleteFrom('ci_runner_namespaces').where('runner_id', '=', runner.id).execute();
      await trx.deleteFrom('ci_runners').where('id', '=', runner.id).execute();
    });
  }

  /** A new authentication token; the old one stops working at once. */
  async resetToken(runner: CiRunnerRow): Promise<RunnerTokenResult> {
    const token = newRunnerToken();
    await this.k
      .updateTable('ci_runners')
      .set({ token_digest: this.deps.digest(token), token_expires_at: null, updated_at: nowIso() })
      .where('id', '=', runner.id)
      .execute();
    return { token, token_expires_at: null };
  }

  /** A new registration token for the instance (scope_id 0), a group or a project; shown only here. */
  async resetRegistrationToken(scope: 'instance' | 'group' | 'project', scopeId: number): Promise<RunnerTokenResult> {
    const token = newRegistrationToken();
    const digest = this.deps.digest(token);
    const now = nowIso();
    await this.k.transaction().execute(async (trx) => {
      await trx.deleteFrom('ci_registration_tokens').where('scope', '=', scope).where('scope_id', '=', scopeId).execute();
      await trx.insertInto('ci_registration_tokens').values({ scope, scope_id: scopeId, token_digest: digest, created_at: now }).execute();
    });
    return { token, token_expires_at: null };
  }

  /**
   * POST /user/runners (Ci::Runners::CreateRunnerService): instance runners by administrators, group
   * runners by the group's Owners, project runners by the project's Maintainers.
   */
  async createForUser(
    actor: Actor,
    p: RunnerAttributes & { runner_type: string; group_id?: number; project_id?: number },
  ): Promise<{ runner: CiRunnerRow; token: string }> {
    const user = actor.user!;
    let ownerId = 0;
    if (p.runner_type === 'instance_type') {
      if (!actor.isAdmin) throw Errors.forbidden('Insufficient permissions');
    } else if (p.runner_type === 'group_type') {
      const group = p.group_id !== undefined ? await this.deps.resolve.namespaceById(p.group_id) : undefined;
      if (!group || group.type !== 'Group') throw Errors.badRequest('Missing/invalid group');
      if (!actor.isAdmin && (await this.groupLevel(user.id, group)) < OWNER) throw Errors.forbidden('Insufficient permissions');
      ownerId = group.id;
    } else {
      const found = p.project_id !== undefined ? await this.deps.resolve.findProjectRow(p.project_id) : undefined;
      if (!found || 'moved' in found) throw Errors.badRequest('Missing/invalid project');
      if (!actor.isAdmin && (await this.projectLevel(user.id, found.project, found.namespace)) < MAINTAINER) throw Errors.forbidden('Insufficient permissions');
      ownerId = found.project.id;
    }
    this.validate(p);
    return this.insertRunner(p.runner_type, ownerId, p, { creation_method: 'authenticated_user', creator_id: user.id });
  }

  // ---- reading -----------------------------------------------------------------------------------

  /** Ci::Runner.find: 404 {"message":"404 Not found"} when missing. */
  async find(id: number): Promise<CiRunnerRow> {
    const runner =
      Number.isSafeInteger(id) && id > 0 && id <= 2_147_483_647
        ? await this.k.selectFrom('ci_runners').selectAll().where('id', '=', id).executeTakeFirst()
        : undefined;
    if (!runner) throw Errors.recordNotFound();
    return runner;
  }

  /** The projects a runner serves, first (owner) first. */
  async runnerProjects(runnerId: number): Promise<{ project: ProjectRow; namespace: NamespaceRow }[]> {
    const rows = await this.k
      .selectFrom('ci_runner_projects')
      .innerJoin('projects', 'projects.id', 'ci_runner_projects.project_id')
      .selectAll('projects')
      .where('ci_runner_projects.runner_id', '=', runnerId)
      .orderBy('ci_runner_projects.created_at')
      .orderBy('projects.id')
      .execute();
    if (!rows.length) return [];
    const nsIds = [...new Set(rows.map((p) => p.namespace_id))];
    const nss = await this.k.selectFrom('namespaces').selectAll().where('id', 'in', nsIds).execute();
    const byId = new Map(nss.map((n) => [n.id, n]));
    return rows.map((project) => ({ project: project as ProjectRow, namespace: byId.get(project.namespace_id)! }));
  }

  /** The full human name of each namespace: a group's ancestors' names joined by " / ", a user's name. */
  async namespaceNames(namespaces: NamespaceRow[]): Promise<Map<number, string>> {
    const path = (n: NamespaceRow) => n.traversal_ids.split('/').filter(Boolean).map(Number);
    const ids = [...new Set(namespaces.flatMap((n) => (n.type === 'Group' ? path(n) : [])))];
    const rows = ids.length ? await this.k.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ids).execute() : [];
    const nameOf = new Map(rows.map((r) => [r.id, r.name]));
    return new Map(
      namespaces.map((n) => [
        n.id,
        n.type === 'Group'
          ? path(n)
              .map((id) => nameOf.get(id) ?? '')
              .join(' / ')
          : n.name,
      ]),
    );
  }

  async runnerGroups(runnerId: number): Promise<NamespaceRow[]> {
    return this.k
      .selectFrom('ci_runner_namespaces')
      .innerJoin('namespaces', 'namespaces.id', 'ci_runner_namespaces.namespace_id')
      .selectAll('namespaces')
      .where('ci_runner_namespaces.runner_id', '=', runnerId)
      .orderBy('namespaces.id')
      .execute();
  }

  private async projectLevel(userId: number, project: ProjectRow, namespace: NamespaceRow): Promise<number> {
    return (await this.deps.policy.membership(userId, { project, namespace })).level;
  }

  private async groupLevel(userId: number, group: NamespaceRow): Promise<number> {
    return (await this.deps.policy.membership(userId, { namespace: group })).level;
  }

  /**
   * What `actor` may do with `runner`: instance runners are read by every signed-in user and changed
   * by administrators; group runners are changed by the group's Owners and read from Developer up;
   * project runners are changed by Maintainers of a project they serve and read from Developer up.
   */
  async access(
    actor: Actor,
    runner: CiRunnerRow,
  ): Promise<RunnerAccess & { projects: { project: ProjectRow; namespace: NamespaceRow; level: number }[]; groups: { group: NamespaceRow; level: number }[] }> {
    const user = actor.user;
    const projects = runner.runner_type === 'project_type' ? await this.runnerProjects(runner.id) : [];
    const groups = runner.runner_type === 'group_type' ? await this.runnerGroups(runner.id) : [];
    const pl = await Promise.all(projects.map(async (p) => ({ ...p, level: user ? await this.projectLevel(user.id, p.project, p.namespace) : 0 })));
    const gl = await Promise.all(groups.map(async (group) => ({ group, level: user ? await this.groupLevel(user.id, group) : 0 })));
    const multiProject = projects.length > 1;
    const all = { admin: true, read: true, update: true, readBuilds: true, assign: true, multiProject };
    if (actor.isAdmin) return { ...all, projects: pl, groups: gl };
    let a: RunnerAccess;
    if (runner.runner_type === 'instance_type') {
      a = { admin: false, read: !!user, update: false, readBuilds: false, assign: false, multiProject };
    } else if (runner.runner_type === 'group_type') {
      const level = Math.max(0, ...gl.map((g) => g.level));
      const admin = level >= OWNER;
      a = { admin, read: level >= DEVELOPER, update: admin, readBuilds: admin || level >= MAINTAINER, assign: admin, multiProject };
    } else {
      const ownerLevel = pl[0]?.level ?? 0;
      const anyLevel = Math.max(0, ...pl.map((p) => p.level));
      const admin = ownerLevel >= MAINTAINER;
      const maintainer = anyLevel >= MAINTAINER;
      a = { admin, read: anyLevel >= DEVELOPER, update: maintainer, readBuilds: maintainer, assign: maintainer, multiProject };
    }
    if (runner.locked) a.assign = false;
    return { ...a, projects: pl, groups: gl };
  }

  /** PUT /runners/:id's rule (editing, pausing or resuming a runner): update_runner on it, 403 "No access granted" otherwise. */
  async assertMayUpdate(actor: Actor, runner: CiRunnerRow): Promise<void> {
    if (!(await this.access(actor, runner)).update) throw Errors.forbidden('No access granted');
  }

  /**
   * DELETE /runners/:id's rule, checked before anything is removed: administrators always; others need
   * admin_runners on the runner's owner, and a runner serving several projects stays (403 with GitLab's words).
   */
  async assertMayDestroy(actor: Actor, runner: CiRunnerRow): Promise<void> {
    if (actor.isAdmin) return;
    const access = await this.access(actor, runner);
    if (access.multiProject) throw Errors.forbidden('Runner associated with more than one project');
    if (!access.admin) throw Errors.forbidden('No access granted');
  }

  /** What assertMayDestroy answers, for a page's Delete button. */
  mayDestroy(actor: Actor, access: RunnerAccess): boolean {
    return actor.isAdmin || (access.admin && !access.multiProject);
  }

  /** GET /groups/:id/runners: administrators and the group's Maintainers and Owners. */
  mayListGroupRunners(actor: Actor, access: { level: number }): boolean {
    return actor.isAdmin || access.level >= MAINTAINER;
  }

  // ---- lists -------------------------------------------------------------------------------------

  /** User#ci_owned_runners: project runners of projects where the user is Maintainer+, group runners of groups (and their subgroups) where the user is Owner. */
  ownedRunners(userId: number): RunnerQuery {
    const projectIds = this.deps.policy.memberProjectIds(userId, MAINTAINER);
    const today = todayDate();
    const ownedGroups = this.k
      .selectFrom('namespaces as g')
      .select('g.id')
      .where('g.type', '=', 'Group')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('members')
            .innerJoin('namespaces as m', (j) => j.onRef('m.id', '=', 'members.source_id').on('members.source_type', '=', 'Namespace'))
            .select('members.id')
            .where('members.user_id', '=', userId)
            .where('members.access_level', '>=', OWNER)
            .where((e) => unexpired(e as unknown as ExpressionBuilder<Database, 'members'>, today))
            .where(inSubtreeOf('g.traversal_ids', 'm.traversal_ids')),
        ),
      );
    return this.k
      .selectFrom('ci_runners')
      .selectAll()
      .where((eb) => eb.or([eb.and([eb('ci_runners.runner_type', '=', 'project_type'), ofProjects(eb, projectIds)]), ofGroups(eb, ownedGroups)]));
  }

  allRunners(): RunnerQuery {
    return this.k.selectFrom('ci_runners').selectAll();
  }

  /** Ci::Runner.owned_or_instance_wide: the project's runners, its groups' runners, and instance runners when shared runners are enabled. */
  projectRunners(project: ProjectRow, namespace: NamespaceRow): RunnerQuery {
    const groupIds = namespace.type === 'Group' ? traversalIds(namespace) : [];
    const shared = settingsOf(project).shared_runners_enabled !== false;
    return this.k
      .selectFrom('ci_runners')
      .selectAll()
      .where((eb) => {
        const ors: Expression<SqlBool>[] = [ofProjects(eb, [project.id])];
        if (groupIds.length) ors.push(ofGroups(eb, groupIds));
        if (shared) ors.push(eb('ci_runners.runner_type', '=', 'instance_type'));
        return eb.or(ors);
      });
  }

  /**
   * Ci::Build#any_runners_online?: an active runner of the project (its own, its groups', the instance's when
   * shared runners are on) contacted within the online window whose tags allow the job. False means the
   * job page's "stuck" hint.
   */
  async anyOnlineFor(project: ProjectRow, namespace: NamespaceRow, job: Pick<CiBuildRow, 'tag_list'>, now = Date.now()): Promise<boolean> {
    const s = settingsOf(project);
    const online = new Date(now - ONLINE_MS).toISOString();
    const rows = await this.projectRunners(project, namespace).where('ci_runners.active', '=', 1).where('ci_runners.contacted_at', '>', online).execute();
    const tags = JSON.parse(job.tag_list) as string[];
    return rows.some((r) => {
      if (r.runner_type === 'group_type' && s.group_runners_enabled === false) return false;
      const own = new Set(JSON.parse(r.tag_list) as string[]);
      return tags.length ? tags.every((t) => own.has(t)) : r.run_untagged === 1;
    });
  }

  /** Ci::Runner.group_or_instance_wide: runners of the group and its ancestors, and instance runners. */
  groupRunners(group: NamespaceRow): RunnerQuery {
    const groupIds = traversalIds(group);
    return this.k
      .selectFrom('ci_runners')
      .selectAll()
      .where((eb) => eb.or([ofGroups(eb, groupIds), eb('ci_runners.runner_type', '=', 'instance_type')]));
  }

  /**
   * A scope, type or status value as SQL (Ci::Runner's scopes); the clock is read once per request.
   * Statuses are comparisons on contacted_at / created_at (indexed), never computed per row.
   */
  private scopeFilter(value: string, now: number): (eb: RunnerEB) => Expression<SqlBool> {
    const online = new Date(now - ONLINE_MS).toISOString();
    const stale = new Date(now - STALE_MS).toISOString();
    switch (value) {
      case 'instance_type':
      case 'group_type':
      case 'project_type':
        return (eb) => eb('ci_runners.runner_type', '=', value);
      case 'shared':
        return (eb) => eb('ci_runners.runner_type', '=', 'instance_type');
      case 'specific':
        return (eb) => eb('ci_runners.runner_type', 'in', ['group_type', 'project_type']);
      case 'active':
        return (eb) => eb('ci_runners.active', '=', 1);
      case 'paused':
        return (eb) => eb('ci_runners.active', '=', 0);
      case 'online':
        return (eb) => eb('ci_runners.contacted_at', '>', online);
      case 'offline':
        // Ci::Runner.offline: last contact 2 hours ago or more — stale runners that were contacted match too.
        return (eb) => eb('ci_runners.contacted_at', '<=', online);
      case 'never_contacted':
        return (eb) => eb('ci_runners.contacted_at', 'is', null);
      case 'stale':
        return (eb) =>
          eb.and([eb('ci_runners.created_at', '<=', stale), eb.or([eb('ci_runners.contacted_at', 'is', null), eb('ci_runners.contacted_at', '<=', stale)])]);
      default:
        throw Errors.refused('Scope contains invalid value');
    }
  }

  /** filter_runners: a value outside `allowed` → 400 {"message":"Scope contains invalid value"}. */
  filterScope(q: RunnerQuery, value: string | undefined, allowed: readonly string[], now: number): RunnerQuery {
    if (value === undefined || value === '') return q;
    if (!allowed.includes(value)) throw Errors.refused('Scope contains invalid value');
    return q.where(this.scopeFilter(value, now));
  }

  /** apply_filter: type, status, paused, version_prefix, tag_list (every tag must match). */
  applyFilters(q: RunnerQuery, f: RunnerFilters, now: number): RunnerQuery {
    q = this.filterScope(q, f.type, RUNNER_TYPES, now);
    q = this.filterScope(q, f.status, RUNNER_STATUSES, now);
    if (f.paused !== undefined) q = q.where('ci_runners.active', '=', f.paused ? 0 : 1);
    if (f.version_prefix !== undefined) q = q.where(sql<SqlBool>`ci_runners.version like ${`${likeEscape(f.version_prefix)}%`} escape '\\'`);
    for (const tag of normalizeTags(f.tag_list ?? [])) {
      q =
        this.deps.db.dialect === 'postgres'
          ? q.where(sql<SqlBool>`ci_runners.tag_list::jsonb @> jsonb_build_array(${tag}::text)`)
          : q.where(sql<SqlBool>`exists (select 1 from json_each(ci_runners.tag_list) where json_each.value = ${tag})`);
    }
    return q;
  }

  // ---- changes -----------------------------------------------------------------------------------

  async update(runner: CiRunnerRow, attrs: RunnerAttributes): Promise<CiRunnerRow> {
    // The record is validated as a whole once changed (Rails), so run_untagged=false needs tags, given or stored.
    this.validate({ ...attrs, run_untagged: attrs.run_untagged ?? runner.run_untagged === 1, tag_list: attrs.tag_list ?? parseTags(runner.tag_list) });
    const set: Record<string, unknown> = { updated_at: nowIso() };
    if (attrs.description !== undefined) set.description = attrs.description;
    if (attrs.active !== undefined) set.active = attrs.active ? 1 : 0;
    if (attrs.tag_list !== undefined) set.tag_list = JSON.stringify(normalizeTags(attrs.tag_list));
    if (attrs.run_untagged !== undefined) set.run_untagged = attrs.run_untagged ? 1 : 0;
    if (attrs.locked !== undefined) set.locked = attrs.locked ? 1 : 0;
    if (attrs.access_level !== undefined) set.access_level = attrs.access_level;
    if (attrs.maximum_timeout !== undefined) set.maximum_timeout = attrs.maximum_timeout;
    if (attrs.maintenance_note !== undefined) set.maintenance_note = attrs.maintenance_note;
    return this.k.updateTable('ci_runners').set(set).where('id', '=', runner.id).returningAll().executeTakeFirstOrThrow();
  }

  /** Runner#assign_to (POST /projects/:id/runners). */
  async assign(runner: CiRunnerRow, project: ProjectRow): Promise<void> {
    if (runner.runner_type !== 'project_type') {
      throw Errors.refused([
        `Assign to Transitioning an ${runner.runner_type === 'instance_type' ? 'instance' : 'group'} runner to a project runner is not supported`,
      ]);
    }
    const exists = await this.k
      .selectFrom('ci_runner_projects')
      .select('runner_id')
      .where('runner_id', '=', runner.id)
      .where('project_id', '=', project.id)
      .executeTakeFirst();
    if (exists) throw Errors.refused(['Assign to Validation failed: Runner has already been taken']);
    await this.k.insertInto('ci_runner_projects').values({ runner_id: runner.id, project_id: project.id, created_at: nowIso() }).execute();
  }

  async unassign(runner: CiRunnerRow, project: ProjectRow): Promise<void> {
    await this.k.deleteFrom('ci_runner_projects').where('runner_id', '=', runner.id).where('project_id', '=', project.id).execute();
  }

  async isAssigned(runnerId: number, projectId: number): Promise<boolean> {
    return !!(await this.k
      .selectFrom('ci_runner_projects')
      .select('runner_id')
      .where('runner_id', '=', runnerId)
      .where('project_id', '=', projectId)
      .executeTakeFirst());
  }

  async projectCount(runnerId: number): Promise<number> {
    const r = await this.k
      .selectFrom('ci_runner_projects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('runner_id', '=', runnerId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  // ---- jobs of a runner --------------------------------------------------------------------------

  /**
   * Ci::RunnerJobsFinder: the runner's jobs (builds only), in projects where `actor` is at least
   * Reporter (administrators: all), optionally by status and system_id, ordered by id.
   */
  jobs(actor: Actor, runner: CiRunnerRow, f: { status?: string; system_id?: string; sort: 'asc' | 'desc' }) {
    let q = this.k.selectFrom('ci_builds').selectAll().where('ci_builds.runner_id', '=', runner.id).where('ci_builds.type', '=', 'build');
    if (f.status) q = q.where('ci_builds.status', '=', f.status);
    if (f.system_id !== undefined) q = q.where('ci_builds.runner_system_id', '=', f.system_id);
    if (!actor.isAdmin) {
      const userId = actor.user!.id;
      q = q.where('ci_builds.project_id', 'in', this.deps.policy.memberProjectIds(userId, REPORTER));
    }
    return q.orderBy('ci_builds.id', f.sort);
  }
}

function parseTags(json: string): string[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** Tags as Ci::Runner's tag_list: trimmed, blank ones dropped, duplicates once. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => String(t).trim()).filter(Boolean))];
}
