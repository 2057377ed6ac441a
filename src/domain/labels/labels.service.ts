// Project and group labels (GitLab lib/api/labels.rb, group_labels.rb, helpers/label_helpers.rb,
// LabelsFinder, Labels::CreateService / UpdateService / FindOrCreateService / PromoteService): lists with
// inheritance (a project sees its own labels and its groups'), create, update, delete, promote, and the
// find-or-create by titles merge requests use. Titles are unique per project or group case-insensitively
// (and a new label may not repeat one it would inherit); colours are "#RGB", "#RRGGBB" or a CSS name.
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database, LabelRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { ciContains, ciEquals, inSubtree, isInt32, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { traversalIds, type GroupAccess, type ProjectAccess } from '../access/policy.ts';
import type { ResolvedGroup, ResolvedProject } from '../access/resolve.ts';
import type { FeatureDeps } from '../deps.ts';

/** Label::DEFAULT_COLOR (labels created from a merge request's unknown label names). */
export const DEFAULT_LABEL_COLOR = '#6699cc';
const COLOR_PATTERN = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;
const PLANNER = 15;

/** Gitlab::Color::Constants::COLOR_NAME_TO_HEX. */
const COLOR_NAMES: Record<string, string> = {
  black: '#000000',
  silver: '#C0C0C0',
  gray: '#808080',
  white: '#FFFFFF',
  maroon: '#800000',
  red: '#FF0000',
  purple: '#800080',
  fuchsia: '#FF00FF',
  green: '#008000',
  lime: '#00FF00',
  olive: '#808000',
  yellow: '#FFFF00',
  navy: '#000080',
  blue: '#0000FF',
  teal: '#008080',
  aqua: '#00FFFF',
  orange: '#FFA500',
  aliceblue: '#F0F8FF',
  antiquewhite: '#FAEBD7',
  aquamarine: '#7FFFD4',
  azure: '#F0FFFF',
  beige: '#F5F5DC',
  bisque: '#FFE4C4',
  blanchedalmond: '#FFEBCD',
  blueviolet: '#8A2BE2',
  brown: '#A52A2A',
  burlywood: '#DEB887',
  cadetblue: '#5F9EA0',
  chartreuse: '#7FFF00',
  chocolate: '#D2691E',
  coral: '#FF7F50',
  cornflowerblue: '#6495ED',
  cornsilk: '#FFF8DC',
  crimson: '#DC143C',
  darkblue: '#00008B',
  darkcyan: '#008B8B',
  darkgoldenrod: '#B8860B',
  darkgray: '#A9A9A9',
  darkgreen: '#006400',
  darkgrey: '#A9A9A9',
  darkkhaki: '#BDB76B',
  darkmagenta: '#8B008B',
  darkolivegreen: '#556B2F',
  darkorange: '#FF8C00',
  darkorchid: '#9932CC',
  darkred: '#8B0000',
  darksalmon: '#E9967A',
  darkseagreen: '#8FBC8F',
  darkslateblue: '#483D8B',
  darkslategray: '#2F4F4F',
  darkslategrey: '#2F4F4F',
  darkturquoise: '#00CED1',
  darkviolet: '#9400D3',
  deeppink: '#FF1493',
  deepskyblue: '#00BFFF',
  dimgray: '#696969',
  dimgrey: '#696969',
  dodgerblue: '#1E90FF',
  firebrick: '#B22222',
  floralwhite: '#FFFAF0',
  forestgreen: '#228B22',
  gainsboro: '#DCDCDC',
  ghostwhite: '#F8F8FF',
  gold: '#FFD700',
  goldenrod: '#DAA520',
  greenyellow: '#ADFF2F',
  grey: '#808080',
  honeydew: '#F0FFF0',
  hotpink: '#FF69B4',
  indianred: '#CD5C5C',
  indigo: '#4B0082',
  ivory: '#FFFFF0',
  khaki: '#F0E68C',
  lavender: '#E6E6FA',
  lavenderblush: '#FFF0F5',
  lawngreen: '#7CFC00',
  lemonchiffon: '#FFFACD',
  lightblue: '#ADD8E6',
  lightcoral: '#F08080',
  lightcyan: '#E0FFFF',
  lightgoldenrodyellow: '#FAFAD2',
  lightgray: '#D3D3D3',
  lightgreen: '#90EE90',
  lightgrey: '#D3D3D3',
  lightpink: '#FFB6C1',
  lightsalmon: '#FFA07A',
  lightseagreen: '#20B2AA',
  lightskyblue: '#87CEFA',
  lightslategray: '#778899',
  lightslategrey: '#778899',
  lightsteelblue: '#B0C4DE',
  lightyellow: '#FFFFE0',
  limegreen: '#32CD32',
  linen: '#FAF0E6',
  mediumaquamarine: '#66CDAA',
  mediumblue: '#0000CD',
  mediumorchid: '#BA55D3',
  mediumpurple: '#9370DB',
  mediumseagreen: '#3CB371',
  mediumslateblue: '#7B68EE',
  mediumspringgreen: '#00FA9A',
  mediumturquoise: '#48D1CC',
  mediumvioletred: '#C71585',
  midnightblue: '#191970',
  mintcream: '#F5FFFA',
  mistyrose: '#FFE4E1',
  moccasin: '#FFE4B5',
  navajowhite: '#FFDEAD',
  oldlace: '#FDF5E6',
  olivedrab: '#6B8E23',
  orangered: '#FF4500',
  orchid: '#DA70D6',
  palegoldenrod: '#EEE8AA',
  palegreen: '#98FB98',
  paleturquoise: '#AFEEEE',
  palevioletred: '#DB7093',
  papayawhip: '#FFEFD5',
  peachpuff: '#FFDAB9',
  peru: '#CD853F',
  pink: '#FFC0CB',
  plum: '#DDA0DD',
  powderblue: '#B0E0E6',
  rosybrown: '#BC8F8F',
  royalblue: '#4169E1',
  saddlebrown: '#8B4513',
  salmon: '#FA8072',
  sandybrown: '#F4A460',
  seagreen: '#2E8B57',
  seashell: '#FFF5EE',
  sienna: '#A0522D',
  skyblue: '#87CEEB',
  slateblue: '#6A5ACD',
  slategray: '#708090',
  slategrey: '#708090',
  snow: '#FFFAFA',
  springgreen: '#00FF7F',
  steelblue: '#4682B4',
  tan: '#D2B48C',
  thistle: '#D8BFD8',
  tomato: '#FF6347',
  turquoise: '#40E0D0',
  violet: '#EE82EE',
  wheat: '#F5DEB3',
  whitesmoke: '#F5F5F5',
  yellowgreen: '#9ACD32',
  rebeccapurple: '#663399',
};

/** Labels::BaseService#convert_color_name_to_hex then the Color type: names become hex, anything else stays as written (stripped). */
export function normaliseColor(color: string): string {
  const c = color.trim();
  if (c.startsWith('#')) return c;
  return COLOR_NAMES[c.toLowerCase()] ?? c;
}

/** Label#title= : Sanitize.clean (tags dropped) then CGI.unescapeHTML, and stripped. */
export function sanitizeTitle(value: string): string {
  return unescapeHtml(value.replace(/<[^>]*>/g, '')).trim();
}
function unescapeHtml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[e] as string);
}

/** The project or group whose labels are read or changed, already resolved for the actor. */
export type LabelParent =
  | { type: 'Project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }
  | { type: 'Group'; group: NamespaceRow; access: GroupAccess };

export interface ListLabelsInput {
  search?: string;
  include_ancestor_groups?: boolean;
  include_descendant_groups?: boolean;
  only_group_labels?: boolean;
}

export interface CreateLabelInput {
  name: string;
  color: string;
  description?: string | null;
  priority?: number | null;
}

export interface UpdateLabelInput {
  new_name?: string;
  color?: string;
  description?: string | null;
  /** absent: unchanged; null: no priority */
  priority?: number | null;
}

export interface LabelCountsRow {
  open_issues_count: number;
  closed_issues_count: number;
  open_merge_requests_count: number;
}

type LabelQuery = SelectQueryBuilder<Database, 'labels', LabelRow>;

/** Rails' errors.messages of an invalid label (color first: Label validates it first). */
function validationErrors(title: string | undefined, color: string | undefined): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (color !== undefined) {
    if (color === '') errors.color = ["can't be blank", 'must be a valid color code'];
    else if (!COLOR_PATTERN.test(color)) errors.color = ['must be a valid color code'];
  }
  if (title !== undefined) {
    const t: string[] = [];
    if (title === '') t.push("can't be blank");
    if (!/^[^,]+$/.test(title)) t.push('is invalid');
    if ([...title].length > 255) t.push('is too long (maximum is 255 characters)');
    if (t.length) errors.title = t;
  }
  return errors;
}

/** LabelPriority validates its priority as a non-negative integer. */
function priorityErrors(priority: number | null | undefined): Record<string, string[]> {
  return typeof priority === 'number' && priority < 0 ? { priority: ['must be greater than or equal to 0'] } : {};
}

export class LabelsService {
  constructor(readonly deps: FeatureDeps) {}

  private get k(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- abilities -----------------------------------------------------------------------------

  /** admin_label: Planner/Reporter and above (GitLab's permission table), administrators; not on an archived project. */
  canAdminProject(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
    if (project.archived) return false;
    return actor.isAdmin || access.level >= PLANNER;
  }
  canAdminGroup(actor: Actor, access: GroupAccess): boolean {
    return actor.isAdmin || access.level >= PLANNER;
  }
  private requireAdmin(actor: Actor, parent: LabelParent): void {
    const ok = parent.type === 'Project' ? this.canAdminProject(actor, parent.project, parent.access) : this.canAdminGroup(actor, parent.access);
    if (!ok) throw Errors.forbidden();
  }

  // ---- contracts for merge requests --------------------------------------------------------

  /** The ids of the groups above a project (its group and that group's ancestors), root first. */
  private async projectGroupIds(project: ProjectRow, db: Kysely<Database> = this.k): Promise<number[]> {
    const ns = await db.selectFrom('namespaces').select(['type', 'traversal_ids']).where('id', '=', project.namespace_id).executeTakeFirst();
    return ns && ns.type === 'Group' ? traversalIds(ns) : [];
  }

  /** The labels a project's merge requests may carry: its own and its ancestor groups', by title. */
  async availableForProject(project: ProjectRow, db: Kysely<Database> = this.k): Promise<LabelRow[]> {
    const groups = await this.projectGroupIds(project, db);
    return db
      .selectFrom('labels')
      .selectAll()
      .where((eb) => (groups.length ? eb.or([eb('project_id', '=', project.id), eb('group_id', 'in', groups)]) : eb('project_id', '=', project.id)))
      .orderBy('title')
      .orderBy('id')
      .execute();
  }

  /** Label rows by id (for pages of merge requests: one query). */
  async byIds(ids: readonly number[], db: Kysely<Database> = this.k): Promise<Map<number, LabelRow>> {
    const unique = [...new Set(ids)].filter(isInt32);
    if (!unique.length) return new Map();
    const rows = await db.selectFrom('labels').selectAll().where('id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Labels::AvailableLabelsService#find_or_create_by_titles: each title (comma lists split, blanks
   * dropped) matched case-insensitively against the project's and its groups' labels (the project's own
   * first, then the nearest group's); a missing one is created as a project label with the default colour
   * when the actor may manage labels (else skipped), or never with `findOnly`. In the order given, each once.
   * Pass the writer's transaction as `db` to create inside it (then also the project's `access`).
   */
  async findOrCreateByTitles(
    actor: Actor,
    project: ProjectRow,
    titles: readonly string[] | string,
    opts: { findOnly?: boolean; db?: Kysely<Database>; access?: ProjectAccess } = {},
  ): Promise<LabelRow[]> {
    const db = opts.db ?? this.k;
    const wanted = (typeof titles === 'string' ? titles.split(',') : titles.flatMap((t) => t.split(','))).map(sanitizeTitle).filter(Boolean);
    if (!wanted.length) return [];
    const groups = await this.projectGroupIds(project, db);
    const available = await this.availableForProject(project, db);
    const depth = (l: LabelRow) => (l.project_id !== null ? -1 : groups.indexOf(l.group_id as number));
    const byTitle = new Map<string, LabelRow>();
    for (const l of [...available].sort((a, b) => depth(b) - depth(a))) {
      const key = l.title.toLowerCase();
      if (!byTitle.has(key)) byTitle.set(key, l);
    }
    let mayCreate: boolean | undefined;
    const out: LabelRow[] = [];
    const seen = new Set<number>();
    for (const title of wanted) {
      let label = byTitle.get(title.toLowerCase());
      if (!label && !opts.findOnly) {
        if (mayCreate === undefined) {
          // Inside the caller's transaction the policy (which reads through the pool) must not be asked:
          // on SQLite the one connection is the transaction's.
          if (opts.db && !opts.access) throw new Error('findOrCreateByTitles: give the project access when passing a transaction');
          const access = opts.access ?? (await this.deps.policy.project(actor, project, (await this.deps.resolve.namespaceById(project.namespace_id))!));
          mayCreate = this.canAdminProject(actor, project, access);
        }
        if (mayCreate && Object.keys(validationErrors(title, undefined)).length === 0) {
          const now = nowIso();
          label = await db
            .insertInto('labels')
            .values({
              project_id: project.id,
              group_id: null,
              title,
              color: DEFAULT_LABEL_COLOR,
              description: null,
              priority: null,
              created_at: now,
              updated_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          byTitle.set(title.toLowerCase(), label);
        }
      }
      if (label && !seen.has(label.id)) {
        seen.add(label.id);
        out.push(label);
      }
    }
    return out;
  }

  // ---- resolution of the parent ------------------------------------------------------------

  async projectParent(actor: Actor, id: string): Promise<LabelParent> {
    const r: ResolvedProject = await this.deps.resolve.project(actor, id);
    return { type: 'Project', ...r };
  }

  async groupParent(actor: Actor, id: string): Promise<LabelParent> {
    const r: ResolvedGroup = await this.deps.resolve.group(actor, id);
    return { type: 'Group', ...r };
  }

  /** Of these groups, those the actor may see (LabelsFinder#groups_user_can_read_labels). */
  private async readableGroupIds(actor: Actor, ids: number[]): Promise<number[]> {
    return this.deps.policy.visibleGroupIdsAmong(actor, ids);
  }

  // ---- reads ---------------------------------------------------------------------------------

  /**
   * LabelsFinder for the API. A project: its labels and its group's (with the group's ancestors when
   * include_ancestor_groups, the default). A group: its labels (+ ancestors', + descendants' with
   * include_descendant_groups), and with only_group_labels=false also the labels of its projects.
   * Groups and projects the actor cannot see are left out. Ordered by title.
   */
  async listQuery(actor: Actor, parent: LabelParent, input: ListLabelsInput): Promise<LabelQuery> {
    const includeAncestors = input.include_ancestor_groups !== false;
    let q = this.k.selectFrom('labels').selectAll();
    if (parent.type === 'Project') {
      const groups = parent.namespace.type === 'Group' ? traversalIds(parent.namespace) : [];
      const groupIds = await this.readableGroupIds(actor, includeAncestors ? groups : groups.slice(-1));
      q = q.where((eb) =>
        groupIds.length ? eb.or([eb('project_id', '=', parent.project.id), eb('group_id', 'in', groupIds)]) : eb('project_id', '=', parent.project.id),
      );
    } else {
      const g = parent.group;
      const ids = [g.id];
      if (includeAncestors) ids.unshift(...traversalIds(g).filter((id) => id !== g.id));
      const descendants = input.include_descendant_groups
        ? (
            await this.k
              .selectFrom('namespaces')
              .select('id')
              .where('type', '=', 'Group')
              .where(inSubtree('traversal_ids', g.traversal_ids))
              .where('id', '!=', g.id)
              .execute()
          ).map((r) => r.id)
        : [];
      const groupIds = await this.readableGroupIds(actor, [...ids, ...descendants]);
      const projectGroups = [g.id, ...descendants];
      const onlyGroups = input.only_group_labels !== false;
      q = q.where((eb) => {
        const own = eb('group_id', 'in', groupIds.length ? groupIds : [g.id]);
        if (onlyGroups) return own;
        const projects = eb
          .selectFrom('projects')
          .select('projects.id')
          .where('projects.namespace_id', 'in', projectGroups)
          .where((pe) => this.deps.policy.visibleProjects(actor)(pe as any));
        return eb.or([own, eb('project_id', 'in', projects)]);
      });
    }
    if (input.search) {
      const s = input.search;
      q = q.where((eb) => eb.or([ciContains(this.deps.db.dialect, 'labels.title', s), ciContains(this.deps.db.dialect, 'labels.description', s)]));
    }
    return q.orderBy('title').orderBy('id');
  }

  /** The counts of `with_counts`: open merge requests the actor may see, and the issues' counts the caller read. */
  async counts(
    actor: Actor,
    labels: readonly LabelRow[],
    issues: ReadonlyMap<number, { opened: number; closed: number }>,
  ): Promise<Map<number, LabelCountsRow>> {
    const out = new Map<number, LabelCountsRow>();
    if (!labels.length) return out;
    const rows = await this.k
      .selectFrom('merge_request_labels as ml')
      .innerJoin('merge_requests as mr', 'mr.id', 'ml.merge_request_id')
      .innerJoin('projects', 'projects.id', 'mr.project_id')
      .select(['ml.label_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where(
        'ml.label_id',
        'in',
        labels.map((l) => l.id),
      )
      .where('mr.state', '=', 'opened')
      .where(this.deps.policy.visibleProjects(actor))
      .groupBy('ml.label_id')
      .execute();
    const n = new Map(rows.map((r) => [r.label_id, Number(r.n)]));
    for (const l of labels) {
      const i = issues.get(l.id);
      out.set(l.id, { open_issues_count: i?.opened ?? 0, closed_issues_count: i?.closed ?? 0, open_merge_requests_count: n.get(l.id) ?? 0 });
    }
    return out;
  }

  /**
   * Of these labels, those the actor follows (Label entity `subscribed`): a subscription everywhere, or
   * within the project the labels are seen from.
   */
  async subscribedIds(actor: Actor, labelIds: readonly number[], project?: ProjectRow): Promise<Set<number>> {
    const me = actor.user?.id;
    if (me === undefined || !labelIds.length) return new Set();
    const rows = await this.k
      .selectFrom('subscriptions')
      .select('subscribable_id')
      .where('subscribable_type', '=', 'Label')
      .where('subscribable_id', 'in', [...labelIds])
      .where('user_id', '=', me)
      .where('subscribed', '=', 1)
      .where((eb) => (project ? eb.or([eb('project_id', 'is', null), eb('project_id', '=', project.id)]) : eb('project_id', 'is', null)))
      .execute();
    return new Set(rows.map((r) => r.subscribable_id));
  }

  /**
   * POST …/labels/:label_id/subscribe and /unsubscribe (Subscribable): the label as find_label finds it;
   * null when nothing changes (the route answers 304). From a project the subscription is that project's;
   * the other level's subscription is turned off, as GitLab's unsubscribe_from_other_levels does.
   */
  async setSubscription(actor: Actor, parent: LabelParent, idOrTitle: string, subscribed: boolean): Promise<LabelRow | null> {
    const me = actor.user;
    if (!me) throw Errors.unauthorized();
    const label = await this.find(actor, parent, idOrTitle);
    const project = parent.type === 'Project' ? parent.project : undefined;
    const current = (await this.subscribedIds(actor, [label.id], project)).has(label.id);
    if (current === subscribed) return null;
    const projectId = project?.id ?? null;
    const now = nowIso();
    await this.k.transaction().execute(async (trx) => {
      const mine = trx
        .updateTable('subscriptions')
        .set({ subscribed: 0, updated_at: now })
        .where('subscribable_type', '=', 'Label')
        .where('subscribable_id', '=', label.id)
        .where('user_id', '=', me.id);
      await (projectId === null ? mine.where('project_id', 'is not', null) : mine.where('project_id', 'is', null)).execute();
      const level = (q: any) => (projectId === null ? q.where('project_id', 'is', null) : q.where('project_id', '=', projectId));
      const existing = await level(
        trx
          .selectFrom('subscriptions')
          .select('id')
          .where('subscribable_type', '=', 'Label')
          .where('subscribable_id', '=', label.id)
          .where('user_id', '=', me.id),
      ).executeTakeFirst();
      if (existing)
        await trx
          .updateTable('subscriptions')
          .set({ subscribed: subscribed ? 1 : 0, updated_at: now })
          .where('id', '=', existing.id)
          .execute();
      else
        await trx
          .insertInto('subscriptions')
          .values({
            user_id: me.id,
            subscribable_type: 'Label',
            subscribable_id: label.id,
            project_id: projectId,
            subscribed: subscribed ? 1 : 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
    });
    return label;
  }

  /**
   * find_label: by id, then by title (exact), among the labels the list would show (`own` = the parent's
   * own labels only, as update, delete and promote look them up). 404 Label Not Found.
   */
  async find(actor: Actor, parent: LabelParent, idOrTitle: string, input: ListLabelsInput & { own?: boolean } = {}): Promise<LabelRow> {
    let q: LabelQuery;
    if (input.own) {
      q = this.k.selectFrom('labels').selectAll();
      q = parent.type === 'Project' ? q.where('project_id', '=', parent.project.id) : q.where('group_id', '=', parent.group.id);
    } else {
      q = await this.listQuery(actor, parent, { ...input, search: undefined });
    }
    if (/^\d+$/.test(idOrTitle) && isInt32(Number(idOrTitle))) {
      const byId = await q.where('labels.id', '=', Number(idOrTitle)).executeTakeFirst();
      if (byId) return byId;
    }
    const byTitle = await q.where('labels.title', '=', idOrTitle).executeTakeFirst();
    if (!byTitle) throw Errors.notFound('Label');
    return byTitle;
  }

  // ---- writes --------------------------------------------------------------------------------

  /** A label with this title (case-insensitive) the parent has or inherits, other than `exceptId`. */
  private async titleTaken(db: Kysely<Database>, parent: LabelParent, title: string, exceptId?: number): Promise<boolean> {
    const groups = parent.type === 'Project' ? (parent.namespace.type === 'Group' ? traversalIds(parent.namespace) : []) : traversalIds(parent.group);
    let q = db
      .selectFrom('labels')
      .select('id')
      .where(ciEquals('title', title))
      .where((eb) => {
        const own = parent.type === 'Project' ? [eb('project_id', '=', parent.project.id)] : [];
        return eb.or([...own, ...(groups.length ? [eb('group_id', 'in', groups)] : [])]);
      });
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return !!(await q.limit(1).executeTakeFirst());
  }

  async create(actor: Actor, parent: LabelParent, input: CreateLabelInput): Promise<LabelRow> {
    this.requireAdmin(actor, parent);
    const title = sanitizeTitle(input.name);
    if (title && (await this.titleTaken(this.k, parent, title))) throw Errors.conflict('Label already exists');
    const color = normaliseColor(input.color);
    const errors = validationErrors(title, color);
    if (parent.type === 'Project') Object.assign(errors, priorityErrors(input.priority));
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    const now = nowIso();
    try {
      return await this.k
        .insertInto('labels')
        .values({
          project_id: parent.type === 'Project' ? parent.project.id : null,
          group_id: parent.type === 'Group' ? parent.group.id : null,
          title,
          color,
          description: input.description ? sanitizeTitle(input.description) || null : null,
          priority: parent.type === 'Project' ? (input.priority ?? null) : null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.conflict('Label already exists');
      throw e;
    }
  }

  async update(actor: Actor, parent: LabelParent, idOrTitle: string, input: UpdateLabelInput): Promise<LabelRow> {
    this.requireAdmin(actor, parent);
    const label = await this.find(actor, parent, idOrTitle, { own: true });
    const set: Partial<LabelRow> = {};
    const title = input.new_name !== undefined ? sanitizeTitle(input.new_name) : undefined;
    const color = input.color !== undefined ? normaliseColor(input.color) : undefined;
    const errors = validationErrors(title, color);
    if (parent.type === 'Project') Object.assign(errors, priorityErrors(input.priority));
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    if (title !== undefined && title !== label.title) {
      // Label validates uniqueness within its own project or group only (inherited titles may be repeated on rename).
      let same = this.k.selectFrom('labels').select('id').where(ciEquals('title', title)).where('id', '!=', label.id);
      same = parent.type === 'Project' ? same.where('project_id', '=', parent.project.id) : same.where('group_id', '=', parent.group.id);
      if (await same.executeTakeFirst()) throw Errors.invalid({ title: ['has already been taken'] });
      set.title = title;
    }
    if (color !== undefined) set.color = color;
    if (input.description !== undefined) set.description = input.description ? sanitizeTitle(input.description) || null : null;
    if (parent.type === 'Project' && input.priority !== undefined) set.priority = input.priority;
    if (!Object.keys(set).length) return label;
    set.updated_at = nowIso();
    try {
      return await this.k.updateTable('labels').set(set).where('id', '=', label.id).returningAll().executeTakeFirstOrThrow();
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid({ title: ['has already been taken'] });
      throw e;
    }
  }

  /** Labels::DestroyService: the label and its links (merge requests lose it; label events keep a null label). */
  async remove(actor: Actor, parent: LabelParent, idOrTitle: string, unmodifiedSince?: number): Promise<void> {
    const label = await this.find(actor, parent, idOrTitle, { own: true });
    this.requireAdmin(actor, parent);
    // destroy_conditionally!: If-Unmodified-Since older than the label's last change.
    if (unmodifiedSince !== undefined && Date.parse(label.updated_at) > unmodifiedSince) throw Errors.preconditionFailed();
    await this.k.transaction().execute(async (trx) => {
      await trx.deleteFrom('merge_request_labels').where('label_id', '=', label.id).execute();
      await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', '=', label.id).execute();
      await trx.deleteFrom('labels').where('id', '=', label.id).execute();
    });
  }

  /**
   * Labels::PromoteService: a project label becomes a label of the project's group; every label with
   * that title in the group's projects (and the group's descendants' projects) is merged into it: their
   * issues and merge requests relabelled, their resource events and board lists pointed at it, one
   * subscription per user (the latest) moved to it. Only for projects in a group; the actor must manage the
   * group's labels.
   */
  async promote(actor: Actor, parent: LabelParent, idOrTitle: string): Promise<{ label: LabelRow; group: NamespaceRow }> {
    if (parent.type !== 'Project') throw Errors.notFound();
    if (parent.namespace.type !== 'Group') throw Errors.refused('Failed to promote project label to group label');
    const group = parent.namespace;
    const groupAccess = await this.deps.policy.group(actor, group);
    if (!this.canAdminGroup(actor, groupAccess)) {
      if (!groupAccess.abilities.has('read_group')) throw Errors.notFound('Group');
      throw Errors.forbidden();
    }
    const label = await this.find(actor, parent, idOrTitle, { own: true });
    const promoted = await this.k.transaction().execute(async (trx) => {
      if (await this.titleTaken(trx, { type: 'Group', group, access: groupAccess }, label.title)) {
        throw Errors.refused('Failed to promote project label to group label');
      }
      const now = nowIso();
      const created = await trx
        .insertInto('labels')
        .values({
          project_id: null,
          group_id: group.id,
          title: label.title,
          color: label.color,
          description: label.description,
          priority: null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const same = await trx
        .selectFrom('labels')
        .innerJoin('projects', 'projects.id', 'labels.project_id')
        .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
        .select('labels.id')
        .where(inSubtree('namespaces.traversal_ids', group.traversal_ids))
        .where(ciEquals('labels.title', label.title))
        .execute();
      const ids = same.map((r) => r.id);
      if (ids.length) {
        // Links to the old labels move to the new one (a merge request that had two of them keeps one).
        await trx
          .insertInto('merge_request_labels')
          .columns(['merge_request_id', 'label_id', 'created_at'])
          .expression((eb) =>
            eb
              .selectFrom('merge_request_labels')
              .select(['merge_request_id', sql.lit(created.id).as('label_id'), sql<string>`min(created_at)`.as('created_at')])
              .where('label_id', 'in', ids)
              .groupBy('merge_request_id'),
          )
          .execute();
        await trx
          .insertInto('issue_labels')
          .columns(['issue_id', 'label_id', 'project_id', 'created_at'])
          .expression((eb) =>
            eb
              .selectFrom('issue_labels')
              .select(['issue_id', sql.lit(created.id).as('label_id'), 'project_id', sql<string>`min(created_at)`.as('created_at')])
              .where('label_id', 'in', ids)
              .groupBy(['issue_id', 'project_id']),
          )
          .execute();
        await trx.updateTable('resource_label_events').set({ label_id: created.id }).where('label_id', 'in', ids).execute();
        await trx.updateTable('board_lists').set({ label_id: created.id }).where('label_id', 'in', ids).execute();
        // a user subscribed to several of the labels keeps one subscription: the latest
        const latest = trx
          .selectFrom('subscriptions')
          .select((eb) => eb.fn.max('id').as('id'))
          .where('subscribable_type', '=', 'Label')
          .where('subscribable_id', 'in', ids)
          .groupBy('user_id');
        await trx.updateTable('subscriptions').set({ subscribable_id: created.id }).where('id', 'in', latest).execute();
        await trx.deleteFrom('merge_request_labels').where('label_id', 'in', ids).execute();
        await trx.deleteFrom('issue_labels').where('label_id', 'in', ids).execute();
        await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', ids).execute();
        await trx.deleteFrom('labels').where('id', 'in', ids).execute();
      }
      return created;
    });
    return { label: promoted, group };
  }
}
