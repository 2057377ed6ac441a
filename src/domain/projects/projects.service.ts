// Project writes as GitLab's Projects::CreateService, UpdateService, TransferService and DestroyService
// do them: the same checks in the same order, the same messages, each write and its system event in
// one transaction.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { ciEquals, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { Policy, type ProjectAccess } from '../access/policy.ts';
import type { Resolver } from '../access/resolve.ts';
import type { ProjectAbility } from '../core/roles.ts';
import { restrictedFor } from '../access/visibility.ts';
import { aboveNamespace, clampToNamespace } from '../core/visibility-levels.ts';
import { projectPayload, recordSystemEvent } from '../core/system-events.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { protectionDefaults, protectionDefaultsOf } from '../repository/branch-protection.ts';
import { protectDefaultBranch } from '../repository/default-branch.ts';
import { PROJECT_WILDCARD_ROUTES } from '../core/group-rules.ts';
import { projectOwners } from './project-owners.ts';
import { deleteProjectRows, removeRepositories } from './project-destroy.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { BRANCH_PREFIX, isValidRefName, ZERO_SHA } from '../../git/refs.ts';
import { afterRefChanges, type RefChangeDeps } from '../repository/push-events.ts';
import { defaultSettings, settingsChanges, settingsOf, validateSettings } from '../core/project-settings.ts';

export interface ProjectAttributes {
  name?: string;
  path?: string;
  description?: string;
  default_branch?: string;
  visibility?: string;
  topics?: string[];
  tag_list?: string[];
  repository_storage?: string;
  /** every other attribute: settings (see project-settings.ts) */
  [setting: string]: unknown;
}

export interface CreateProjectInput extends ProjectAttributes {
  namespace_id?: number;
}

/** What a caller adds to a project creation (a fork: its link, and a repository that borrows its source's objects). */
export interface CreateProjectExtras {
  /** written in the creation's transaction, after the project's row and event */
  inTransaction?: (trx: Kysely<Database>, project: ProjectRow) => Promise<void>;
  /** makes the repository instead of an empty one (in the transaction: a failure leaves neither) */
  repository?: (project: ProjectRow) => Promise<void>;
}

/** Gitlab::Regex.project_name_regex */
const NAME_RE = /^[\p{Alphabetic}\p{Nd}\u00A9-\u{1F9FF}_][\p{Alphabetic}\p{Nd}\p{Pd}+\u00A9-\u{1F9FF}_. ]*$/u;
const NAME_MESSAGE = "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";
/** Gitlab::PathRegex.project_path_format_regex */
const PATH_RE = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*$/;
const PATH_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";

const TAKEN = 'has already been taken';
const OWNER = 50;

export const isValidProjectPath = (path: string) => PATH_RE.test(path) && !/\.(git|atom)$/.test(path);

/** ActiveSupport's String#parameterize: ASCII, lower case, runs of other characters become one "-". */
export function parameterize(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9\-_]+/gi, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

/** Topics from `topics` (or the older `tag_list`): comma-separated strings or arrays, trimmed, unique. */
export function topicList(input: { topics?: string[]; tag_list?: string[] }): string[] | undefined {
  const raw = input.topics ?? input.tag_list;
  if (raw === undefined) return undefined;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of raw.flatMap((v) => String(v).split(','))) {
    const name = t.trim();
    if (name && !seen.has(name.toLowerCase())) {
      seen.add(name.toLowerCase());
      out.push(name);
    }
  }
  return out;
}

/** rename_project, change_visibility_level, change_namespace: Owners and administrators (the settings page hides those fields from others). */
export const isOwner = (actor: Actor, access: ProjectAccess) => actor.isAdmin || access.level >= OWNER;

/** Project#visibility_level_allowed_by_group's message. */
export const notAllowedInGroup = (visibility: string, group: string) => `${visibility} is not allowed in a ${group} group.`;
/** BaseService#deny_visibility_level's message (restricted_visibility_levels). */
export const restrictedMessage = (visibility: string) => `${visibility} has been restricted by your GitLab administrator`;

function requireAbility(access: ProjectAccess, ability: ProjectAbility): void {
  Policy.require(access, ability, 'Project', 'read_project');
}

/** Projects::TransferService's refusals: 400 with the model's errors printed as Ruby prints a Hash. */
function transferError(message: string) {
  return Errors.refused(`Failed to transfer project {:new_namespace=>[${JSON.stringify(message)}]}`);
}

export class ProjectsService {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly policy: Policy,
    private readonly resolve: Resolver,
    private readonly repos: RepositoryStore,
    /** where the README's push goes (events, hooks); absent, a README makes no push event */
    private readonly refChanges?: RefChangeDeps,
  ) {}

  // ---- create --------------------------------------------------------------------------------

  async create(actor: Actor, input: CreateProjectInput, extras: CreateProjectExtras = {}): Promise<ProjectRow> {
    const me = actor.user!;
    const s = await this.settings.get();
    const k = this.db.kysely;
    const namespace =
      input.namespace_id !== undefined
        ? await this.resolve.namespaceById(input.namespace_id)
        : await k.selectFrom('namespaces').selectAll().where('owner_id', '=', me.id).where('type', '=', 'User').executeTakeFirst();

    let visibility = input.visibility ?? s.default_project_visibility;
    // A project is never more visible than its group. The default visibility follows the group; a
    // visibility asked for is refused (GitLab's model validation) rather than lowered behind the user's back.
    const aboveGroup = !!namespace && aboveNamespace(visibility, namespace);
    if (aboveGroup && input.visibility === undefined) visibility = namespace.visibility;
    if (restrictedFor(s, actor, visibility)) {
      throw Errors.invalid({ visibility_level: [restrictedMessage(visibility)] });
    }

    let name = input.name ?? '';
    let path = input.path ?? '';
    if (!(name.trim() && path.trim())) {
      if (path.trim()) name = path;
      else if (name.trim()) path = isValidProjectPath(name) ? name : parameterize(name);
    }

    if (namespace?.type === 'User') await this.checkPersonalLimit(me);
    if (!namespace || !(await this.canCreateIn(actor, namespace))) throw Errors.invalid({ namespace: ['is not valid'] });

    const topics = topicList(input) ?? [];
    // Stored: what was given, and the one default that depends on the visibility at creation.
    const stored = { pages_access_level: defaultSettings(visibility).pages_access_level, ...settingsChanges(input, 'create') };
    const errors = this.validate({ name, path, description: input.description ?? null }, { ...defaultSettings(visibility), ...stored });
    if (aboveGroup && input.visibility !== undefined) (errors.visibility_level ??= []).push(notAllowedInGroup(visibility, namespace.visibility));
    this.checkStorage(actor, input.repository_storage, s, errors);
    if (input.default_branch && !isValidRefName(input.default_branch)) (errors.default_branch ??= []).push('is invalid');
    await this.checkTaken(k, namespace, { name, path }, null, errors);
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const now = nowIso();
    const defaultBranch = input.default_branch || s.default_branch_name || 'main'; // Gitlab::DefaultBranch.value
    const storage = actor.isAdmin && input.repository_storage ? input.repository_storage : this.repos.pickStorage(s.repository_storages_weighted);
    let created: ProjectRow | null = null;
    const readme = (stored as Record<string, unknown>).initialize_with_readme === true;
    let project: ProjectRow;
    try {
      project = await k.transaction().execute(async (trx) => {
        const project = await trx
          .insertInto('projects')
          .values({
            namespace_id: namespace.id,
            creator_id: me.id,
            name,
            path,
            description: input.description ?? null,
            visibility,
            default_branch: defaultBranch,
            archived: 0,
            repository_storage: storage,
            topics: JSON.stringify(topics),
            settings: JSON.stringify(stored),
            created_at: now,
            updated_at: now,
            last_activity_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        // Personal projects: the namespace's owner becomes the project's Owner (group projects inherit).
        if (namespace.type === 'User' && namespace.owner_id !== null) {
          await trx
            .insertInto('members')
            .values({
              source_type: 'Project',
              source_id: project.id,
              user_id: namespace.owner_id,
              access_level: OWNER,
              expires_at: null,
              member_role_id: null,
              created_by_id: me.id,
              created_at: now,
              updated_at: now,
            })
            .execute();
        }
        await this.claimPath(trx, `${namespace.full_path}/${path}`);
        await recordSystemEvent(trx, projectPayload('project_create', project, namespace, await projectOwners(trx, project, namespace)));
        if (extras.inTransaction) await extras.inTransaction(trx, project);
        // The repository is made inside the transaction: a failure leaves neither row nor repository.
        created = project;
        if (extras.repository) await extras.repository(project);
        else await this.repos.create(project, { defaultBranch, readme: readme ? { title: name, author: { name: me.name, email: me.email } } : undefined });
        // a default branch made with the project (a README, a fork) is protected: ProtectDefaultBranchService
        if (readme || extras.repository) await protectDefaultBranch(trx, project, protectionDefaultsOf(namespace, protectionDefaults(s)));
        return project;
      });
    } catch (e) {
      if (created) this.repos.remove(created);
      if (isUniqueViolation(e)) throw Errors.invalid(await this.takenErrors(namespace, { name, path }, null));
      throw e;
    }
    // GitLab commits the README through Files::CreateService: a push like any other (activity, hooks).
    if (readme && !extras.repository && this.refChanges) {
      const repo = this.repos.repository(project);
      const head = await repo.branch(defaultBranch);
      if (head) {
        const changes = [{ before: ZERO_SHA, after: head.sha, ref: BRANCH_PREFIX + defaultBranch }];
        project = (await afterRefChanges(this.refChanges, { project, namespace, user: me, repo }, changes)).project;
      }
    }
    return project;
  }

  /** Project#check_personal_projects_limit: the creator's own projects against their projects_limit. */
  private async checkPersonalLimit(creator: UserRow): Promise<void> {
    const row = await this.db.kysely
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('namespaces.owner_id', '=', creator.id)
      .where('namespaces.type', '=', 'User')
      .executeTakeFirstOrThrow();
    if (creator.projects_limit - Number(row.n) > 0) return;
    const message =
      creator.projects_limit === 0
        ? 'Personal project creation is not allowed. Please contact your administrator with questions'
        : `Your project limit is ${creator.projects_limit} projects! Please contact your administrator to increase it`;
    // GitLab: error!(project.errors[:limit_reached], 403) — the messages array under "error".
    throw Errors.rejected([message], 403);
  }

  /** create_projects in the namespace: its owner for a personal one, the group's project_creation_level for a group. */
  private async canCreateIn(actor: Actor, namespace: NamespaceRow): Promise<boolean> {
    if (actor.isAdmin) return true;
    if (namespace.type === 'User') return namespace.owner_id === actor.user!.id;
    const access = await this.policy.group(actor, namespace);
    return access.abilities.has('read_group') && access.abilities.has('create_projects');
  }

  // ---- validation ----------------------------------------------------------------------------

  /** Project's model validations, GitLab's messages, in GitLab's order. */
  private validate(p: { name: string; path: string; description: string | null }, settings: Record<string, unknown>): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const add = (k: string, m: string) => void (errors[k] ??= []).push(m);
    if (p.description !== null && p.description.length > 2000) add('description', 'is too long (maximum is 2000 characters)');
    validateSettings(settings, errors);
    if (!p.name.trim()) add('name', "can't be blank");
    if (p.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
    if (!NAME_RE.test(p.name)) add('name', NAME_MESSAGE);
    if (!p.path.trim()) add('path', "can't be blank");
    if (!isValidProjectPath(p.path)) add('path', PATH_MESSAGE);
    else if (PROJECT_WILDCARD_ROUTES.has(p.path.toLowerCase())) add('path', `${p.path} is a reserved name`);
    if (p.path.length > 255) add('path', 'is too long (maximum is 255 characters)');
    return errors;
  }

  /** repository_storage (administrators only; others' value is dropped): one of the instance's storages. */
  private checkStorage(actor: Actor, storage: string | undefined, s: Record<string, unknown>, errors: Record<string, string[]>): void {
    if (!actor.isAdmin || storage === undefined) return;
    if (!Object.hasOwn((s.repository_storages_weighted ?? {}) as object, storage)) (errors.repository_storage ??= []).push('is not included in the list');
  }

  /** Names and paths are unique in a namespace (any case); a path may not be a subgroup's either. */
  private async checkTaken(
    k: Kysely<Database>,
    namespace: NamespaceRow,
    p: { name: string; path: string },
    exceptId: number | null,
    errors: Record<string, string[]>,
  ): Promise<void> {
    const taken = await this.takenErrors(namespace, p, exceptId, k);
    const merged: Record<string, string[]> = {};
    // The project's namespace record is validated first in GitLab, so its error leads.
    if (taken['project_namespace.name']) merged['project_namespace.name'] = taken['project_namespace.name'];
    for (const [key, msgs] of Object.entries(errors)) merged[key] = msgs;
    for (const key of ['name', 'path']) if (taken[key]) (merged[key] ??= []).push(...taken[key]);
    for (const key of Object.keys(errors)) delete errors[key];
    Object.assign(errors, merged);
  }

  private async takenErrors(
    namespace: NamespaceRow,
    p: { name: string; path: string },
    exceptId: number | null,
    k: Kysely<Database> = this.db.kysely,
  ): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    const others = k
      .selectFrom('projects')
      .select('id')
      .where('namespace_id', '=', namespace.id)
      .where('id', '!=', exceptId ?? -1);
    if (p.name && (await others.where(ciEquals('name', p.name)).executeTakeFirst())) {
      out['project_namespace.name'] = [TAKEN];
      out.name = [TAKEN];
    }
    const pathTaken =
      p.path &&
      ((await others.where(ciEquals('path', p.path)).executeTakeFirst()) ||
        (await k
          .selectFrom('namespaces')
          .select('id')
          .where(ciEquals('full_path', `${namespace.full_path}/${p.path}`))
          .executeTakeFirst()));
    if (pathTaken) out.path = [TAKEN];
    return out;
  }

  // ---- update --------------------------------------------------------------------------------

  async update(actor: Actor, idOrPath: string, input: ProjectAttributes): Promise<ProjectRow> {
    const { project, namespace, access } = await this.resolve.project(actor, idOrPath);
    requireAbility(access, 'admin_project');
    // rename_project and change_visibility_level: Owners (and administrators) only.
    if (input.name && !isOwner(actor, access)) throw Errors.forbidden();
    if (input.visibility !== undefined && !isOwner(actor, access)) throw Errors.forbidden();

    const name = input.name ?? project.name;
    const path = input.path ?? project.path;
    const description = input.description !== undefined ? input.description : project.description;
    const visibility = input.visibility ?? project.visibility;
    const changes = settingsChanges(input, 'update');
    const stored = { ...(JSON.parse(project.settings) as Record<string, unknown>), ...changes };
    const s = await this.settings.get();

    if (visibility !== project.visibility && restrictedFor(s, actor, visibility)) {
      throw Errors.invalid({ visibility_level: [restrictedMessage(visibility)] });
    }
    const errors = this.validate({ name, path, description }, { ...settingsOf(project), ...changes });
    this.checkStorage(actor, input.repository_storage, s, errors);
    await this.checkTaken(this.db.kysely, namespace, { name: name !== project.name ? name : '', path: path !== project.path ? path : '' }, project.id, errors);
    if (aboveNamespace(visibility, namespace)) {
      (errors.visibility_level ??= []).push(notAllowedInGroup(visibility, namespace.visibility));
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    const repo = this.repos.repository(project);
    const newDefault = input.default_branch && input.default_branch !== project.default_branch ? input.default_branch : null;
    if (newDefault && repo.exists() && !(await repo.isEmpty()) && !(await repo.branch(newDefault))) {
      throw Errors.refused(`Could not set the default branch. Do you have a branch named '${newDefault}'?`);
    }

    const topics = topicList(input);
    const now = nowIso();
    const oldFullPath = `${namespace.full_path}/${project.path}`;
    const renamed = path !== project.path;
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('projects')
          .set({
            name,
            path,
            description,
            visibility,
            settings: JSON.stringify(stored),
            updated_at: now,
            ...(input.default_branch ? { default_branch: input.default_branch } : {}),
            ...(topics !== undefined ? { topics: JSON.stringify(topics) } : {}),
            ...(actor.isAdmin && input.repository_storage ? { repository_storage: input.repository_storage } : {}),
          })
          .where('id', '=', project.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        if (renamed) {
          await this.claimPath(trx, `${namespace.full_path}/${path}`);
          await trx.insertInto('redirect_routes').values({ source_type: 'Project', source_id: project.id, path: oldFullPath, created_at: now }).execute();
        }
        const owners = await projectOwners(trx, updated, namespace);
        await recordSystemEvent(
          trx,
          renamed ? projectPayload('project_rename', updated, namespace, owners, oldFullPath) : projectPayload('project_update', updated, namespace, owners),
        );
        if (updated.repository_storage !== project.repository_storage) this.repos.move(project, updated.repository_storage);
        if (newDefault && repo.exists()) await this.repos.repository(updated).setHead(newDefault);
        return updated;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid(await this.takenErrors(namespace, { name, path }, project.id));
      throw e;
    }
  }

  // ---- archive -------------------------------------------------------------------------------

  async setArchived(actor: Actor, idOrPath: string, archived: boolean): Promise<ProjectRow> {
    const { project, namespace, access } = await this.resolve.project(actor, idOrPath);
    requireAbility(access, 'archive_project');
    return this.db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('projects')
        .set({ archived: archived ? 1 : 0, updated_at: nowIso() })
        .where('id', '=', project.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordSystemEvent(trx, projectPayload('project_update', updated, namespace, await projectOwners(trx, updated, namespace)));
      return updated;
    });
  }

  // ---- transfer ------------------------------------------------------------------------------

  async transfer(actor: Actor, idOrPath: string, target: string): Promise<ProjectRow> {
    const { project, namespace, access } = await this.resolve.project(actor, idOrPath);
    // change_namespace: Owners and administrators.
    if (!isOwner(actor, access)) throw Errors.forbidden();
    const to = await this.findNamespace(actor, target);
    if (to.id === project.namespace_id) throw transferError('Project is already in this namespace.');
    if (!(await this.canCreateIn(actor, to))) throw transferError("You don't have permission to transfer projects into that namespace.");
    const k = this.db.kysely;
    const clash =
      (await k
        .selectFrom('projects')
        .select('id')
        .where('namespace_id', '=', to.id)
        .where((eb) => eb.or([ciEquals('path', project.path), ciEquals('name', project.name)]))
        .executeTakeFirst()) ??
      (await k
        .selectFrom('namespaces')
        .select('id')
        .where(ciEquals('full_path', `${to.full_path}/${project.path}`))
        .executeTakeFirst());
    if (clash) throw transferError('Project with same name or path in target namespace already exists');

    // The project can be no more visible than its new group.
    const visibility = clampToNamespace(project.visibility, to);
    const now = nowIso();
    const oldFullPath = `${namespace.full_path}/${project.path}`;
    try {
      return await k.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable('projects')
          .set({ namespace_id: to.id, visibility, updated_at: now })
          .where('id', '=', project.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await this.claimPath(trx, `${to.full_path}/${project.path}`);
        await trx.insertInto('redirect_routes').values({ source_type: 'Project', source_id: project.id, path: oldFullPath, created_at: now }).execute();
        await recordSystemEvent(trx, projectPayload('project_transfer', moved, to, await projectOwners(trx, moved, to), oldFullPath));
        return moved;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw transferError('Project with same name or path in target namespace already exists');
      throw e;
    }
  }

  /** find_namespace!: an id or a full path the caller may see (its own namespace, a readable group). */
  private async findNamespace(actor: Actor, key: string): Promise<NamespaceRow> {
    const k = this.db.kysely.selectFrom('namespaces').selectAll();
    const ns = /^\d+$/.test(key) ? await k.where('id', '=', Number(key)).executeTakeFirst() : await k.where(ciEquals('full_path', key)).executeTakeFirst();
    if (ns) {
      if (ns.type === 'User' && (actor.isAdmin || ns.owner_id === actor.user!.id)) return ns;
      if (ns.type === 'Group' && (await this.policy.group(actor, ns)).abilities.has('read_group')) return ns;
    }
    throw Errors.notFound('Namespace');
  }

  // ---- delete --------------------------------------------------------------------------------

  /** Deletes the project, what hangs on it (memberships, old paths) and its repository. */
  async remove(actor: Actor, idOrPath: string, unmodifiedSince?: number): Promise<void> {
    const { project, namespace, access } = await this.resolve.project(actor, idOrPath);
    requireAbility(access, 'remove_project');
    if (unmodifiedSince !== undefined && Date.parse(project.updated_at) > unmodifiedSince) throw Errors.preconditionFailed();
    await this.db.kysely.transaction().execute(async (trx) => {
      await recordSystemEvent(trx, projectPayload('project_destroy', project, namespace, await projectOwners(trx, project, namespace)));
      await deleteProjectRows(trx, [project]);
    });
    removeRepositories(this.repos, [project]);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** A path now in use stops redirecting to whatever used it before. */
  private async claimPath(trx: Kysely<Database>, fullPath: string): Promise<void> {
    await trx.deleteFrom('redirect_routes').where(ciEquals('path', fullPath)).execute();
  }
}
