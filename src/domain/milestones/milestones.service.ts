// Project and group milestones (GitLab lib/api/milestones.rb, group_milestones.rb, milestone_responses.rb,
// MilestonesFinder, Milestones::CreateService / UpdateService / DestroyService / PromoteService, Timebox validations):
// iids per project or group, titles unique within a project and its group (or a group and its
// projects), states active | closed, lists with GitLab's filters and order (due date first, undated last,
// newest first among equals).
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { MergeRequestsQB } from '../merge-requests/merge-requests-query.ts';
import type { Database, MergeRequestRow, MilestoneRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { nextIid } from '../../db/internal-ids.ts';
import { ciContains, inSubtree, isInt32, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { traversalIds, type GroupAccess, type ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';

const PLANNER = 15;
const TITLE_TAKEN = 'already being used for another group or project milestone.';

/** A milestone row with the URL of its page (projects: /<path>/-/milestones/<iid>, groups: /groups/<path>/-/milestones/<iid>). */
export type MilestoneWithUrl = MilestoneRow & { web_url: string };

/** The project or group whose milestones are read or changed, already resolved for the actor. */
export type MilestoneParent =
  | { type: 'Project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }
  | { type: 'Group'; group: NamespaceRow; access: GroupAccess };

export interface ListMilestonesInput {
  state?: 'active' | 'closed' | 'all';
  iids?: number[];
  title?: string;
  search?: string;
  search_title?: string;
  include_parent_milestones?: boolean;
  include_ancestors?: boolean;
  include_descendants?: boolean;
  /** ISO datetimes, inclusive */
  updated_before?: string;
  updated_after?: string;
}

export interface MilestoneInput {
  title?: string;
  description?: string | null;
  /** YYYY-MM-DD, or null to clear */
  due_date?: string | null;
  start_date?: string | null;
  state_event?: 'close' | 'activate';
}

type MilestoneQuery = SelectQueryBuilder<Database, 'milestones', MilestoneRow>;

/** Ruby's Hash#inspect of errors.messages, as GitLab interpolates it into "Failed to create milestone …". */
export function rubyInspect(errors: Record<string, string[]>): string {
  const str = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `{${Object.entries(errors)
    .map(([k, v]) => `:${k}=>[${v.map(str).join(', ')}]`)
    .join(', ')}}`;
}

/** Label#title= style sanitising: tags dropped, stripped. */
function cleanTitle(s: string): string {
  return s
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] as string)
    .trim();
}

export class MilestonesService {
  constructor(readonly deps: FeatureDeps) {}

  private get k(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /**
   * milestone_issuables_for(:merge_request): the merge requests of `list` (those the caller may read)
   * that carry this milestone; none when the caller may not read the project's merge requests.
   */
  mergeRequests(list: MergeRequestsQB, milestone: Pick<MilestoneRow, 'id'>, readable: boolean): MergeRequestsQB {
    const query = list.where('merge_requests.milestone_id', '=', milestone.id);
    return readable ? query : query.where(sql<SqlBool>`1 = 0`);
  }

  // ---- URLs and batches (merge request entities) ---------------------------------------------

  /** The rows with their web_url: one query for their projects, one for their groups. */
  async withUrls(rows: readonly MilestoneRow[], db: Kysely<Database> = this.k): Promise<MilestoneWithUrl[]> {
    const base = this.deps.externalUrl;
    const projectIds = [...new Set(rows.map((r) => r.project_id).filter((v): v is number => v !== null))];
    const groupIds = [...new Set(rows.map((r) => r.group_id).filter((v): v is number => v !== null))];
    const projectPaths = new Map<number, string>();
    const groupPaths = new Map<number, string>();
    if (projectIds.length) {
      const ps = await db
        .selectFrom('projects')
        .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
        .select(['projects.id', 'projects.path', 'namespaces.full_path'])
        .where('projects.id', 'in', projectIds)
        .execute();
      for (const p of ps) projectPaths.set(p.id, `${p.full_path}/${p.path}`);
    }
    if (groupIds.length) {
      const gs = await db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute();
      for (const g of gs) groupPaths.set(g.id, g.full_path);
    }
    return rows.map((r) => ({
      ...r,
      web_url:
        r.project_id !== null
          ? `${base}/${projectPaths.get(r.project_id) ?? ''}/-/milestones/${r.iid}`
          : `${base}/groups/${groupPaths.get(r.group_id as number) ?? ''}/-/milestones/${r.iid}`,
    }));
  }

  /** Milestones by id with their URLs (for a page of merge requests: two or three queries in all). */
  async byIds(ids: readonly number[], db: Kysely<Database> = this.k): Promise<Map<number, MilestoneWithUrl>> {
    const unique = [...new Set(ids)].filter(isInt32);
    if (!unique.length) return new Map();
    const rows = await db.selectFrom('milestones').selectAll().where('id', 'in', unique).execute();
    return new Map((await this.withUrls(rows, db)).map((m) => [m.id, m]));
  }

  /** The milestone `milestoneId` when it belongs to the project or to one of its ancestor groups (else undefined). */
  async findForProject(project: ProjectRow, milestoneId: number, db: Kysely<Database> = this.k): Promise<MilestoneWithUrl | undefined> {
    if (!isInt32(milestoneId)) return undefined;
    const ns = await db.selectFrom('namespaces').select(['type', 'traversal_ids']).where('id', '=', project.namespace_id).executeTakeFirst();
    const groups = ns && ns.type === 'Group' ? traversalIds(ns) : [];
    const row = await db
      .selectFrom('milestones')
      .selectAll()
      .where('id', '=', milestoneId)
      .where((eb) => (groups.length ? eb.or([eb('project_id', '=', project.id), eb('group_id', 'in', groups)]) : eb('project_id', '=', project.id)))
      .executeTakeFirst();
    return row ? (await this.withUrls([row], db))[0] : undefined;
  }

  /** The milestone titled `title` of the project, else of its nearest ancestor group that has one. */
  async findForProjectByTitle(project: ProjectRow, title: string, db: Kysely<Database> = this.k): Promise<MilestoneRow | undefined> {
    const own = await db.selectFrom('milestones').selectAll().where('project_id', '=', project.id).where('title', '=', title).executeTakeFirst();
    if (own) return own;
    const ns = await db.selectFrom('namespaces').select(['type', 'traversal_ids']).where('id', '=', project.namespace_id).executeTakeFirst();
    const groups = ns && ns.type === 'Group' ? traversalIds(ns) : [];
    if (!groups.length) return undefined;
    const rows = await db.selectFrom('milestones').selectAll().where('group_id', 'in', groups).where('title', '=', title).execute();
    return rows.sort((a, b) => groups.indexOf(b.group_id!) - groups.indexOf(a.group_id!))[0];
  }

  // ---- parents and abilities -----------------------------------------------------------------

  async projectParent(actor: Actor, id: string): Promise<MilestoneParent> {
    return { type: 'Project', ...(await this.deps.resolve.project(actor, id)) };
  }

  async groupParent(actor: Actor, id: string): Promise<MilestoneParent> {
    return { type: 'Group', ...(await this.deps.resolve.group(actor, id)) };
  }

  /** admin_milestone: Planner/Reporter and above, administrators; never on an archived project. */
  canAdmin(actor: Actor, parent: MilestoneParent): boolean {
    if (parent.type === 'Project' && parent.project.archived) return false;
    return actor.isAdmin || parent.access.level >= PLANNER;
  }

  private requireAdmin(actor: Actor, parent: MilestoneParent): void {
    if (!this.canAdmin(actor, parent)) throw Errors.forbidden();
  }

  // ---- reads ---------------------------------------------------------------------------------

  /** MilestonesFinder with the API's parent parameters. */
  async listQuery(actor: Actor, parent: MilestoneParent, input: ListMilestonesInput): Promise<MilestoneQuery> {
    const withAncestors = input.include_ancestors === true || input.include_parent_milestones === true;
    let projectIds: number[] | null = null;
    let groupIds: number[] = [];
    let projectSub: ((eb: any) => any) | null = null;
    if (parent.type === 'Project') {
      projectIds = [parent.project.id];
      if (withAncestors && parent.namespace.type === 'Group') groupIds = traversalIds(parent.namespace);
    } else {
      const g = parent.group;
      groupIds = [g.id];
      if (withAncestors) groupIds = await this.visibleGroupIds(actor, traversalIds(g));
      if (input.include_descendants) {
        const descendants = await this.k
          .selectFrom('namespaces')
          .select('id')
          .where('type', '=', 'Group')
          .where(inSubtree('traversal_ids', g.traversal_ids))
          .where('id', '!=', g.id)
          .execute();
        groupIds = [
          ...groupIds,
          ...(await this.visibleGroupIds(
            actor,
            descendants.map((d) => d.id),
          )),
        ];
        const visible = this.deps.policy.visibleProjects(actor);
        projectSub = (eb) =>
          eb(
            'milestones.project_id',
            'in',
            eb
              .selectFrom('projects')
              .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
              .select('projects.id')
              .where(inSubtree('namespaces.traversal_ids', g.traversal_ids))
              .where(visible),
          );
      }
    }
    let q = this.k.selectFrom('milestones').selectAll();
    q = q.where((eb) => {
      const ors = [];
      if (projectIds) ors.push(eb('milestones.project_id', 'in', projectIds));
      if (groupIds.length) ors.push(eb('milestones.group_id', 'in', groupIds));
      if (projectSub) ors.push(projectSub(eb));
      return eb.or(ors);
    });
    if (input.title !== undefined) q = q.where('milestones.title', '=', input.title);
    const dialect = this.deps.db.dialect;
    if (input.search_title) q = q.where(ciContains(dialect, 'milestones.title', input.search_title));
    if (input.search) {
      const s = input.search;
      q = q.where((eb) => eb.or([ciContains(dialect, 'milestones.title', s), ciContains(dialect, 'milestones.description', s)]));
    }
    if (input.state === 'active' || input.state === 'closed') q = q.where('milestones.state', '=', input.state);
    if (input.updated_before) q = q.where('milestones.updated_at', '<=', input.updated_before);
    if (input.updated_after) q = q.where('milestones.updated_at', '>=', input.updated_after);
    if (input.iids?.length && !input.include_parent_milestones) q = q.where('milestones.iid', 'in', input.iids.filter(isInt32));
    return q.orderBy(sql`case when milestones.due_date is null then 1 else 0 end`).orderBy('milestones.due_date').orderBy('milestones.id', 'desc');
  }

  private async visibleGroupIds(actor: Actor, ids: number[]): Promise<number[]> {
    return this.deps.policy.visibleGroupIdsAmong(actor, ids);
  }

  /** parent.milestones.find(id): the parent's own milestone, else 404 Not found (ActiveRecord::RecordNotFound). */
  async get(parent: MilestoneParent, milestoneId: number): Promise<MilestoneRow> {
    if (!isInt32(milestoneId)) throw Errors.recordNotFound();
    let q = this.k.selectFrom('milestones').selectAll().where('id', '=', milestoneId);
    q = parent.type === 'Project' ? q.where('project_id', '=', parent.project.id) : q.where('group_id', '=', parent.group.id);
    const row = await q.executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  /** The parent's milestone with this iid (the number in its web_url), or 404. */
  async byIid(parent: MilestoneParent, iid: number): Promise<MilestoneWithUrl> {
    if (!isInt32(iid)) throw Errors.recordNotFound();
    let q = this.k.selectFrom('milestones').selectAll().where('iid', '=', iid);
    q = parent.type === 'Project' ? q.where('project_id', '=', parent.project.id) : q.where('group_id', '=', parent.group.id);
    const row = await q.executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return (await this.withUrls([row]))[0]!;
  }

  // ---- writes --------------------------------------------------------------------------------

  /**
   * Milestone#uniqueness_of_title: a project milestone's title may not repeat one of the project's or its
   * group's; a group milestone's, one of the group's or its projects'.
   */
  private async titleTaken(db: Kysely<Database>, parent: MilestoneParent, title: string, exceptId?: number): Promise<boolean> {
    let q = db.selectFrom('milestones').select('id').where('title', '=', title);
    if (parent.type === 'Project') {
      const groupId = parent.namespace.type === 'Group' ? parent.namespace.id : null;
      q = q.where((eb) =>
        groupId !== null ? eb.or([eb('project_id', '=', parent.project.id), eb('group_id', '=', groupId)]) : eb('project_id', '=', parent.project.id),
      );
    } else {
      const g = parent.group;
      q = q.where((eb) =>
        eb.or([eb('group_id', '=', g.id), eb('project_id', 'in', eb.selectFrom('projects').select('projects.id').where('projects.namespace_id', '=', g.id))]),
      );
    }
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return !!(await q.limit(1).executeTakeFirst());
  }

  /** Timebox validations of the values a milestone would have: errors.messages, in the model's order. */
  private async validate(
    db: Kysely<Database>,
    parent: MilestoneParent,
    m: { title: string; start_date: string | null; due_date: string | null },
    exceptId?: number,
    titleChanged = true,
  ): Promise<Record<string, string[]>> {
    const errors: Record<string, string[]> = {};
    const title: string[] = [];
    if (!m.title) title.push("can't be blank");
    if ([...m.title].length > 255) title.push('is too long (maximum is 255 characters)');
    if (title.length) errors.title = title;
    if (m.start_date && m.due_date && m.due_date < m.start_date) errors.due_date = ['must be greater than start date'];
    if (m.title && titleChanged && (await this.titleTaken(db, parent, m.title, exceptId))) (errors.title ??= []).push(TITLE_TAKEN);
    return errors;
  }

  async create(actor: Actor, parent: MilestoneParent, input: MilestoneInput & { title: string }): Promise<MilestoneRow> {
    this.requireAdmin(actor, parent);
    const values = {
      title: cleanTitle(input.title),
      description: input.description ?? null,
      start_date: input.start_date || null,
      due_date: input.due_date || null,
    };
    const fail = (errors: Record<string, string[]>) => Errors.refused(`Failed to create milestone ${rubyInspect(errors)}`);
    try {
      return await this.k.transaction().execute(async (trx) => {
        const errors = await this.validate(trx, parent, values);
        if (Object.keys(errors).length) throw fail(errors);
        const scope = parent.type === 'Project' ? { type: 'Project' as const, id: parent.project.id } : { type: 'Namespace' as const, id: parent.group.id };
        const iid = await nextIid(trx, 'milestones', scope.type, scope.id);
        const now = nowIso();
        return trx
          .insertInto('milestones')
          .values({
            iid,
            project_id: parent.type === 'Project' ? parent.project.id : null,
            group_id: parent.type === 'Group' ? parent.group.id : null,
            ...values,
            state: 'active',
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw fail({ title: [TITLE_TAKEN] });
      throw e;
    }
  }

  async update(actor: Actor, parent: MilestoneParent, milestoneId: number, input: MilestoneInput): Promise<MilestoneRow> {
    this.requireAdmin(actor, parent);
    const current = await this.get(parent, milestoneId);
    const set: Partial<MilestoneRow> = {};
    if (input.title !== undefined) set.title = cleanTitle(input.title);
    if (input.description !== undefined) set.description = input.description;
    if (input.start_date !== undefined) set.start_date = input.start_date || null;
    if (input.due_date !== undefined) set.due_date = input.due_date || null;
    if (input.state_event === 'close') set.state = 'closed';
    if (input.state_event === 'activate') set.state = 'active';
    const next = { ...current, ...set };
    const fail = (errors: Record<string, string[]>) => Errors.refused(`Failed to update milestone ${rubyInspect(errors)}`);
    try {
      return await this.k.transaction().execute(async (trx) => {
        const errors = await this.validate(trx, parent, next, current.id, next.title !== current.title);
        if (Object.keys(errors).length) throw fail(errors);
        const changed = Object.entries(set).some(([k, v]) => current[k as keyof MilestoneRow] !== v);
        if (!changed) return current;
        return trx
          .updateTable('milestones')
          .set({ ...set, updated_at: nowIso() })
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw fail({ title: [TITLE_TAKEN] });
      throw e;
    }
  }

  /**
   * Milestones::PromoteService: a project milestone becomes a milestone of the project's group — a new, active group
   * milestone with its title, description and dates, to which the issues and merge requests of every milestone of
   * that title in the group's projects move (their resource events and board lists follow); those milestones go.
   * The actor manages the milestones of the project and of the group (403 otherwise, and for a project outside a
   * group); a group milestone of that title already is "Promotion failed - Title already being used …" (400).
   */
  async promote(actor: Actor, parent: MilestoneParent, milestoneId: number): Promise<MilestoneRow> {
    if (parent.type !== 'Project') throw Errors.recordNotFound();
    this.requireAdmin(actor, parent);
    const group = parent.namespace.type === 'Group' ? parent.namespace : null;
    if (!group || !this.canAdmin(actor, { type: 'Group', group, access: await this.deps.policy.group(actor, group) })) throw Errors.forbidden();
    const m = await this.get(parent, milestoneId);
    return this.k.transaction().execute(async (trx) => {
      const groupProjects = trx.selectFrom('projects').select('projects.id').where('projects.namespace_id', '=', group.id);
      const same = await trx.selectFrom('milestones').select('id').where('title', '=', m.title).where('project_id', 'in', groupProjects).execute();
      const taken = await trx.selectFrom('milestones').select('id').where('group_id', '=', group.id).where('title', '=', m.title).executeTakeFirst();
      if (taken) throw Errors.refused(`Promotion failed - Title ${TITLE_TAKEN}`);
      const now = nowIso();
      const created = await trx
        .insertInto('milestones')
        .values({
          iid: await nextIid(trx, 'milestones', 'Namespace', group.id),
          project_id: null,
          group_id: group.id,
          title: m.title,
          description: m.description,
          start_date: m.start_date,
          due_date: m.due_date,
          state: 'active',
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const ids = same.map((r) => r.id);
      for (const table of ['issues', 'merge_requests', 'resource_milestone_events', 'board_lists'] as const) {
        await trx.updateTable(table).set({ milestone_id: created.id }).where('milestone_id', 'in', ids).execute();
      }
      await trx.deleteFrom('milestones').where('id', 'in', ids).execute();
      return created;
    });
  }

  /**
   * Milestones::DestroyService: the milestone's merge requests lose it (each recorded as a milestone
   * 'remove' event by the actor, updated_at touched, and `onUpdated` told in the same transaction — the
   * route records the merge request's 'update' hook event there), then the milestone goes.
   */
  async remove(
    actor: Actor,
    parent: MilestoneParent,
    milestoneId: number,
    onUpdated?: (trx: Kysely<Database>, before: MergeRequestRow, after: MergeRequestRow) => Promise<void>,
  ): Promise<void> {
    this.requireAdmin(actor, parent);
    const m = await this.get(parent, milestoneId);
    await this.k.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('merge_requests').selectAll().where('milestone_id', '=', m.id).orderBy('id').execute();
      const now = nowIso();
      if (before.length) {
        await trx
          .insertInto('resource_milestone_events')
          .values(
            before.map((mr) => ({
              merge_request_id: mr.id,
              milestone_id: m.id,
              user_id: actor.user?.id ?? null,
              action: 'remove',
              state: mr.state,
              created_at: now,
            })),
          )
          .execute();
        const after = await trx
          .updateTable('merge_requests')
          .set({ milestone_id: null, updated_at: now })
          .where('milestone_id', '=', m.id)
          .returningAll()
          .execute();
        if (onUpdated) {
          const byId = new Map(after.map((r) => [r.id, r]));
          for (const b of before) await onUpdated(trx, b, byId.get(b.id)!);
        }
      }
      await trx.deleteFrom('milestones').where('id', '=', m.id).execute();
    });
  }
}
