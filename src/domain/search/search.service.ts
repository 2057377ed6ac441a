// GitLab's basic search (SearchService, Search::GlobalService / GroupService / ProjectService,
// Gitlab::SearchResults, GroupSearchResults, ProjectSearchResults): one scope at a time, at the instance, a
// group or a project, over what the viewer may read. Each scope is one entry of a registry that answers a
// page through the lists the rest of the product uses (projects, merge requests, users, members) with the
// search term as their `search`, or through the repository's search (code, commits).
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database, IssueRow, MergeRequestRow, MilestoneRow, NamespaceRow, NoteRow, ProjectRow } from '../../db/schema.ts';
import type { IssueFilters, IssueListScope, IssuesQuery } from '../issues/issues-query.ts';
import { canReadIssues } from '../issues/issue-access.ts';
import { ciContains } from '../../db/sql.ts';
import type { Commit } from '../../git/objects.ts';
import { MAX_COUNT } from '../../lib/pagination.ts';
import type { Actor } from '../access/actor.ts';
import type { GroupAccess, ProjectAccess } from '../access/policy.ts';
import { featureOpen, openProjectsWhere, privateFeatureMinLevel } from '../access/visibility.ts';
import { BASIC_COLUMNS, type UserBasicRow } from '../core/user-columns.ts';
import type { FeatureDeps } from '../deps.ts';
import type { MembersService } from '../members/members.service.ts';
import { canReadMergeRequests, type MergeRequestFilters, type MergeRequestsQuery } from '../merge-requests/merge-requests-query.ts';
import type { ProjectsQuery } from '../projects/projects-query.ts';
import type { FoundBlob } from '../repository/search.ts';
import type { RepoContext } from '../repository/context.ts';

/** The scopes of each level (API::Helpers::SearchHelpers, basic search). */
export const GLOBAL_SCOPES = ['projects', 'issues', 'merge_requests', 'milestones', 'snippet_titles', 'users'] as const;
export const GROUP_SCOPES = ['projects', 'issues', 'merge_requests', 'milestones', 'users'] as const;
export const PROJECT_SCOPES = ['issues', 'merge_requests', 'milestones', 'notes', 'wiki_blobs', 'commits', 'blobs', 'users'] as const;
export type SearchScope = (typeof GLOBAL_SCOPES)[number] | (typeof PROJECT_SCOPES)[number];
/** API::Helpers::SearchHelpers.search_states */
export const SEARCH_STATES = ['all', 'opened', 'closed', 'merged'] as const;
export type SearchState = (typeof SEARCH_STATES)[number];

/** Gitlab::Search::Params and AbuseDetection: the limits of a search term. */
export const SEARCH_CHAR_LIMIT = 4096;
export const SEARCH_TERM_LIMIT = 64;
const MIN_TERM_LENGTH = 2;
const ABUSIVE_TERM_SIZE = 100;
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);
/** AbuseDetection's characters of a ref */
const REF_CHARS = /^[\p{L}\p{N}_\-+/.!]+$/u;
/** Gitlab::SearchResults::COUNT_LIMIT: what the git scopes find at most beyond the page's offset. */
export const COUNT_LIMIT = 100;

/** Where a search looks, resolved for the viewer. */
export type SearchTarget =
  | { level: 'global' }
  | { level: 'group'; group: NamespaceRow; access: GroupAccess }
  | { level: 'project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess };

export interface SearchInput {
  scope: SearchScope;
  search: string;
  state?: SearchState;
  confidential?: boolean;
  order_by?: string;
  sort?: string;
  /** a branch, tag or commit of the project (commits, blobs); default: the default branch */
  ref?: string;
  include_archived?: boolean;
  page: number;
  perPage: number;
}

/** A note found by a search: an issue's or a merge request's, with the noteable's iid, or a commit's. */
export type FoundNote =
  | { kind: 'issue'; note: NoteRow; issueIid: number }
  | { kind: 'merge_request'; note: NoteRow; mrIid: number }
  | { kind: 'commit'; note: CommitNoteView };
export interface CommitNoteView {
  id: number;
  project_id: number;
  commit_id: string;
  author_id: number | null;
  note: string;
  created_at: string;
  updated_at: string;
}

/** What a scope found, by kind; the API and the pages map each kind with its entity. */
export type SearchHits =
  | { scope: 'projects'; items: ProjectRow[] }
  | { scope: 'merge_requests'; items: MergeRequestRow[] }
  | { scope: 'issues'; items: IssueRow[] }
  | { scope: 'milestones'; items: MilestoneRow[] }
  | { scope: 'users'; items: UserBasicRow[] }
  | { scope: 'notes'; items: FoundNote[] }
  | { scope: 'commits'; items: Commit[]; repo: RepoContext | null }
  | { scope: 'blobs'; items: FoundBlob[] }
  /** scopes of things Hearth does not keep (yet): snippets, wikis */
  | { scope: 'snippet_titles' | 'wiki_blobs'; items: never[] };

export interface SearchPage {
  hits: SearchHits;
  hasNext: boolean;
  /** the count behind X-Total, or null where GitLab leaves it out (a relation without count) */
  total: number | null;
}

interface Window {
  offset: number;
  limit: number;
}

type Finder = (actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window) => Promise<SearchPage>;

/**
 * Whether GitLab's abuse detection would answer nothing for this term (Search::EmptySearchResults), or its
 * validations would refuse it: a term of one character, a stop word alone, a word of 100 characters or more
 * (200 for a URL), more than 64 words or 4,096 characters, a ref with other characters than a ref's.
 */
export function emptySearch(term: string, ref?: string): boolean {
  if (term === '') return true;
  if (term.length > SEARCH_CHAR_LIMIT) return true;
  const words = term.split(/\s+/).filter(Boolean);
  if (words.length > SEARCH_TERM_LIMIT) return true;
  if (term !== '*' && !STOP_WORDS.has(term) && term.length < MIN_TERM_LENGTH) return true;
  if (STOP_WORDS.has(term)) return true;
  if (words.some((w) => w.length >= (/^[a-z][a-z0-9+.-]*:\/\/\S/i.test(w) ? ABUSIVE_TERM_SIZE * 2 : ABUSIVE_TERM_SIZE))) return true;
  if (ref !== undefined && ref !== '' && !REF_CHARS.test(ref)) return true;
  return false;
}

/**
 * Gitlab::Search::SortOptions for issues and merge requests: order_by with sort, or sort alone
 * (`created_desc` …); anything else is the default, the newest first. Popularity orders issues only.
 */
export function issuableOrder(
  orderBy: string | undefined,
  sort: string | undefined,
  scope: 'issues' | 'merge_requests',
): Pick<MergeRequestFilters, 'orderBy' | 'sort'> {
  const key = orderBy
    ? `${orderBy}_${sort ?? ''}`
    : (
        {
          created_asc: 'created_at_asc',
          created_desc: 'created_at_desc',
          updated_asc: 'updated_at_asc',
          updated_desc: 'updated_at_desc',
          popularity_asc: 'popularity_asc',
          popularity_desc: 'popularity_desc',
        } as Record<string, string>
      )[sort ?? ''];
  switch (key) {
    case 'created_at_asc':
      return { orderBy: 'created_at', sort: 'asc' };
    case 'updated_at_asc':
      return { orderBy: 'updated_at', sort: 'asc' };
    case 'updated_at_desc':
      return { orderBy: 'updated_at', sort: 'desc' };
    case 'popularity_asc':
    case 'popularity_desc':
      if (scope === 'issues') return { orderBy: 'popularity', sort: key.endsWith('asc') ? 'asc' : 'desc' };
      return { orderBy: 'created_at', sort: 'desc' };
    default:
      return { orderBy: 'created_at', sort: 'desc' };
  }
}

export class SearchService {
  /** scope → how it is searched; a scope's levels are checked by the caller (the API's values) */
  private readonly finders: Record<SearchScope, Finder>;

  constructor(
    private readonly deps: FeatureDeps,
    private readonly projectsQuery: ProjectsQuery,
    private readonly mergeRequestsQuery: MergeRequestsQuery,
    private readonly members: MembersService,
    private readonly issuesQuery: IssuesQuery,
  ) {
    this.finders = {
      projects: (a, t, i, term, w) => this.projects(a, t, i, term, w),
      issues: (a, t, i, term, w) => this.issues(a, t, i, term, w),
      merge_requests: (a, t, i, term, w) => this.mergeRequests(a, t, i, term, w),
      milestones: (a, t, i, term, w) => this.milestones(a, t, i, term, w),
      // Hearth keeps no snippets and no wikis: nothing to find
      snippet_titles: async () => ({ hits: { scope: 'snippet_titles', items: [] }, hasNext: false, total: null }),
      wiki_blobs: async () => ({ hits: { scope: 'wiki_blobs', items: [] }, hasNext: false, total: 0 }),
      users: (a, t, i, term, w) => this.users(a, t, i, term, w),
      notes: (a, t, i, term, w) => this.notes(a, t, i, term, w),
      commits: (a, t, i, term, w) => this.commits(a, t, i, term, w),
      blobs: (a, t, i, term, w) => this.blobs(a, t, i, term, w),
    };
  }

  private get k() {
    return this.deps.db.kysely;
  }

  /** The project a project search looks in (404 Project Not Found when the viewer cannot see it). */
  async projectTarget(actor: Actor, id: string | number): Promise<SearchTarget> {
    return { level: 'project', ...(await this.deps.resolve.project(actor, id)) };
  }

  /** The group a group search looks in (404 Group Not Found when the viewer cannot see it). */
  async groupTarget(actor: Actor, id: string | number): Promise<SearchTarget> {
    return { level: 'group', ...(await this.deps.resolve.group(actor, id)) };
  }

  /** One page of one scope. A term GitLab's abuse detection stops finds nothing. */
  async search(actor: Actor, target: SearchTarget, input: SearchInput): Promise<SearchPage> {
    const term = input.search.trim();
    const w = { offset: (input.page - 1) * input.perPage, limit: input.perPage };
    if (emptySearch(term, input.ref))
      return { hits: { scope: input.scope, items: [] } as SearchHits, hasNext: false, total: scopeCounts(input.scope, target) ? 0 : null };
    return this.finders[input.scope](actor, target, input, term, w);
  }

  // ---- the scopes -------------------------------------------------------------------------------

  /** A page of an ordered query: one row more tells whether there is a next page. */
  private async window<T>(q: { limit(n: number): { offset(n: number): { execute(): Promise<T[]> } } }, w: Window): Promise<{ items: T[]; hasNext: boolean }> {
    const rows = await q
      .limit(w.limit + 1)
      .offset(w.offset)
      .execute();
    return { items: rows.slice(0, w.limit), hasNext: rows.length > w.limit };
  }

  /** SearchResults#projects: the visible projects whose path (with the namespace's), name or description holds the term; not archived ones. */
  private async projects(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const scope =
      target.level === 'group' ? { kind: 'group' as const, group: target.group, includeSubgroups: true, includeAncestors: false } : { kind: 'all' as const };
    const q = await this.projectsQuery.list(actor, scope, {
      search: term,
      search_namespaces: true,
      archived: input.include_archived ? undefined : false,
      order_by: 'id',
      sort: 'desc',
    });
    const { items, hasNext } = await this.window(q, w);
    return { hits: { scope: 'projects', items }, hasNext, total: null };
  }

  /** SearchResults#issues: IssuesFinder with the term (or `#iid`), the state and confidentiality, GitLab's search order. */
  private async issues(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const none = { hits: { scope: 'issues' as const, items: [] }, hasNext: false, total: null };
    if (target.level === 'project' && !canReadIssues(actor, target.project, target.access)) return none;
    const iid = /#(\d+)$/.exec(term);
    const f: IssueFilters = {
      scope: 'all',
      state: input.state === 'opened' || input.state === 'closed' ? input.state : 'all',
      ...(input.confidential !== undefined ? { confidential: input.confidential } : {}),
      ...(iid ? { iids: [Number(iid[1])] } : { search: term }),
      ...(issuableOrder(input.order_by, input.sort, 'issues') as Pick<IssueFilters, 'orderBy' | 'sort'>),
    };
    if (iid && !Number.isSafeInteger(f.iids![0])) return none;
    const where: IssueListScope =
      target.level === 'project'
        ? { kind: 'project', project: target.project, namespace: target.namespace, access: target.access }
        : target.level === 'group'
          ? { kind: 'group', group: target.group, nonArchived: !input.include_archived }
          : { kind: 'all' };
    const { items, hasNext } = await this.window(await this.issuesQuery.list(actor, where, f), w);
    return { hits: { scope: 'issues', items }, hasNext, total: null };
  }

  /** SearchResults#merge_requests: MergeRequestsFinder with the term (or `#iid`), the state, GitLab's search order. */
  private async mergeRequests(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const none = { hits: { scope: 'merge_requests' as const, items: [] }, hasNext: false, total: null };
    if (target.level === 'project' && !canReadMergeRequests(actor, target.project, target.access)) return none;
    const iid = /#(\d+)$/.exec(term);
    const f: MergeRequestFilters = {
      scope: 'all',
      state: input.state ?? 'all',
      ...(iid ? { iids: [Number(iid[1])] } : { search: term }),
      ...issuableOrder(input.order_by, input.sort, 'merge_requests'),
    };
    if (iid && !Number.isSafeInteger(f.iids![0])) return none;
    const where =
      target.level === 'project'
        ? { kind: 'project' as const, project: target.project }
        : target.level === 'group'
          ? { kind: 'group' as const, group: target.group, nonArchived: !input.include_archived }
          : { kind: 'all' as const };
    const { items, hasNext } = await this.window(await this.mergeRequestsQuery.list(actor, where, f), w);
    return { hits: { scope: 'merge_requests', items }, hasNext, total: null };
  }

  /**
   * SQL: the projects of the target whose issues or merge requests the viewer may read
   * (`ids_with_issuables_available_for`), not archived.
   */
  private async issuableProjects(actor: Actor, target: SearchTarget, input: SearchInput) {
    const scope =
      target.level === 'group' ? { kind: 'group' as const, group: target.group, includeSubgroups: true, includeAncestors: false } : { kind: 'all' as const };
    const visible = await this.projectsQuery.list(actor, scope, { archived: input.include_archived ? undefined : false, order_by: 'id', sort: 'desc' });
    const mergeRequests = await this.mergeRequestsQuery.readableProjects(actor);
    const issues = await this.featureReadable(actor, 'issues');
    return visible
      .clearSelect()
      .clearOrderBy()
      .select('projects.id')
      .where((eb) => eb.or([mergeRequests(eb), issues(eb)]));
  }

  /** SQL: the feature of the project is open to the viewer (disabled for nobody, private for members of its level). */
  private async featureReadable(actor: Actor, feature: 'issues') {
    const notAt = (level: string) => sql<SqlBool>`projects.settings not like ${`%"${feature}_access_level":"${level}"%`}`;
    if (actor.isAdmin) return () => notAt('disabled');
    const user = actor.user;
    const open = openProjectsWhere(actor);
    if (!user) return (eb: ExpressionBuilder<Database, 'projects'>) => eb.and([open(eb), notAt('disabled'), notAt('private')]);
    const members = await this.projectsQuery.memberProjects(user.id, privateFeatureMinLevel(feature, 'private'));
    return (eb: ExpressionBuilder<Database, 'projects'>): Expression<SqlBool> =>
      eb.and([notAt('disabled'), eb.or([eb.and([open(eb), notAt('private')]), members(eb)])]);
  }

  /** SearchResults#milestones: project milestones whose title or description holds the term, the latest updated first. */
  private async milestones(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    let q = this.k.selectFrom('milestones').selectAll('milestones');
    if (target.level === 'project') {
      const readable =
        actor.isAdmin ||
        (target.access.abilities.has('read_project') &&
          (featureOpen(actor, target.project, target.access, 'issues') || canReadMergeRequests(actor, target.project, target.access)));
      if (!readable) return { hits: { scope: 'milestones', items: [] }, hasNext: false, total: null };
      q = q.where('milestones.project_id', '=', target.project.id);
    } else {
      q = q.where('milestones.project_id', 'in', await this.issuableProjects(actor, target, input));
    }
    const dialect = this.deps.db.dialect;
    q = q
      .where((eb) => eb.or([ciContains(dialect, 'milestones.title', term), ciContains(dialect, 'milestones.description', term)]))
      .orderBy('milestones.updated_at', 'desc')
      .orderBy('milestones.id', 'desc');
    const { items, hasNext } = await this.window(q, w);
    return { hits: { scope: 'milestones', items }, hasNext, total: null };
  }

  /**
   * SearchResults#users: the users list with the term (UsersFinder); a group's are the members of the group
   * and its ancestors, a project's its members (direct or through its groups). Signed-in viewers only.
   */
  private async users(actor: Actor, target: SearchTarget, _input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const counted = target.level === 'project';
    const none = { hits: { scope: 'users' as const, items: [] }, hasNext: false, total: counted ? 0 : null };
    if (!actor.user) return none;
    let q = this.deps.users.list(actor, { search: term }).query.select([...BASIC_COLUMNS]);
    if (target.level !== 'global') {
      const source = target.level === 'project' ? { type: 'Project' as const, ...target } : { type: 'Group' as const, ...target };
      if (!this.members.canList(source)) return none;
      const memberList = this.members.list(source, { deep: true }).clearOrderBy();
      q = q.where('users.id', 'in', this.k.selectFrom(memberList.as('ml')).select('ml.user_id'));
    }
    const [{ items, hasNext }, total] = await Promise.all([this.window(q, w), counted ? this.count(q) : null]);
    return { hits: { scope: 'users', items: items as UserBasicRow[] }, hasNext, total };
  }

  /** count(*) of a query up to MAX_COUNT + 1; null above MAX_COUNT (GitLab's headers then leave the total out). */
  private async count(q: { clearSelect(): any }): Promise<number | null> {
    const inner = q
      .clearSelect()
      .clearOrderBy()
      .select(sql.lit(1).as('one'))
      .limit(MAX_COUNT + 1);
    const row = await this.k
      .selectFrom(inner.as('limited'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const n = Number(row.n);
    return n > MAX_COUNT ? null : n;
  }

  /**
   * ProjectSearchResults#notes (NotesFinder over every noteable type): the comments (no system notes) on the
   * project's issues, merge requests and commits that hold the term, the latest updated first; internal notes for
   * Reporters and up; issues' notes on the issues the viewer may read (IssuesFinder: the feature, confidential
   * issues), merge requests' when they may read merge requests, commits' when they may read the code.
   */
  private async notes(actor: Actor, target: SearchTarget, _input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    if (target.level !== 'project') return { hits: { scope: 'notes', items: [] }, hasNext: false, total: 0 };
    const { project, namespace, access } = target;
    const dialect = this.deps.db.dialect;
    const upTo = w.offset + w.limit + 1;
    const readInternal = actor.isAdmin || access.level >= 20;
    const issueNotes = canReadIssues(actor, project, access)
      ? await (async () => {
          const readable = (await this.issuesQuery.list(actor, { kind: 'project', project, namespace, access }, { scope: 'all', state: 'all' }))
            .clearSelect()
            .clearOrderBy()
            .select('issues.id');
          let q = this.k
            .selectFrom('notes')
            .innerJoin('issues', 'issues.id', 'notes.noteable_id')
            .selectAll('notes')
            .select('issues.iid as issue_iid')
            .where('notes.noteable_type', '=', 'Issue')
            .where('issues.project_id', '=', project.id)
            .where('issues.id', 'in', readable)
            .where('notes.system', '=', 0)
            .where(ciContains(dialect, 'notes.body', term));
          // read_internal_note: Reporters and up (as on the issue's own notes)
          if (!readInternal) q = q.where('notes.internal', '=', 0);
          return q;
        })()
      : null;
    const mrNotes = canReadMergeRequests(actor, project, access)
      ? (() => {
          let q = this.k
            .selectFrom('notes')
            .innerJoin('merge_requests', 'merge_requests.id', 'notes.noteable_id')
            .selectAll('notes')
            .select('merge_requests.iid as mr_iid')
            .where('notes.noteable_type', '=', 'MergeRequest')
            .where('merge_requests.project_id', '=', project.id)
            .where('notes.system', '=', 0)
            .where(ciContains(dialect, 'notes.body', term));
          // read_internal_note: Reporters and up (as on the merge request's own notes)
          if (!readInternal) q = q.where('notes.internal', '=', 0);
          return q;
        })()
      : null;
    const readCode = this.deps.repository.readableContext(actor, { project, namespace, access }) !== null;
    const commitNotes = readCode
      ? this.k
          .selectFrom('commit_notes')
          .select(['id', 'project_id', 'commit_id', 'author_id', 'note', 'created_at', 'updated_at'])
          .where('commit_notes.project_id', '=', project.id)
          .where(ciContains(dialect, 'commit_notes.note', term))
      : null;
    const [issueRows, mrRows, commitRows, issueCount, mrCount, commitCount] = await Promise.all([
      issueNotes ? issueNotes.orderBy('notes.updated_at', 'desc').orderBy('notes.id', 'desc').limit(upTo).execute() : [],
      mrNotes ? mrNotes.orderBy('notes.updated_at', 'desc').orderBy('notes.id', 'desc').limit(upTo).execute() : [],
      commitNotes ? commitNotes.orderBy('commit_notes.updated_at', 'desc').orderBy('commit_notes.id', 'desc').limit(upTo).execute() : [],
      issueNotes ? this.count(issueNotes) : 0,
      mrNotes ? this.count(mrNotes) : 0,
      commitNotes ? this.count(commitNotes) : 0,
    ]);
    // issue notes and merge request notes share the notes table (and its ids); commit comments have their own
    const found: FoundNote[] = [
      ...issueRows.map(({ issue_iid, ...note }) => ({ kind: 'issue' as const, note: note as NoteRow, issueIid: issue_iid })),
      ...mrRows.map(({ mr_iid, ...note }) => ({ kind: 'merge_request' as const, note: note as NoteRow, mrIid: mr_iid })),
      ...commitRows.map((note) => ({ kind: 'commit' as const, note })),
    ].sort((a, b) => (a.note.updated_at === b.note.updated_at ? b.note.id - a.note.id : a.note.updated_at < b.note.updated_at ? 1 : -1));
    const items = found.slice(w.offset, w.offset + w.limit);
    const counts = [issueCount, mrCount, commitCount];
    const sum = counts.reduce<number>((n, c) => n + (c ?? 0), 0);
    const total = counts.includes(null) || sum > MAX_COUNT ? null : sum;
    return { hits: { scope: 'notes', items }, hasNext: found.length > w.offset + w.limit, total };
  }

  /** The project's repository when the viewer may read its code. */
  private codeOf(actor: Actor, target: SearchTarget): RepoContext | null {
    if (target.level !== 'project') return null;
    return this.deps.repository.readableContext(actor, target);
  }

  /** ProjectSearchResults#commits: commits whose message holds the term, and the commit a SHA names (at most 100 past the page's offset). */
  private async commits(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const repo = this.codeOf(actor, target);
    const all = repo ? await this.deps.repository.searchCommits(repo, input.ref, term, COUNT_LIMIT + w.offset) : [];
    return { hits: { scope: 'commits', items: all.slice(w.offset, w.offset + w.limit), repo }, hasNext: all.length > w.offset + w.limit, total: all.length };
  }

  /** ProjectSearchResults#blobs: files found by path or content at the ref (at most 100 past the page's offset). */
  private async blobs(actor: Actor, target: SearchTarget, input: SearchInput, term: string, w: Window): Promise<SearchPage> {
    const repo = this.codeOf(actor, target);
    const all = repo ? await this.deps.repository.searchBlobs(repo, input.ref, term, COUNT_LIMIT + w.offset) : [];
    return { hits: { scope: 'blobs', items: all.slice(w.offset, w.offset + w.limit) }, hasNext: all.length > w.offset + w.limit, total: all.length };
  }
}

/** Whether a scope's answer carries a count (X-Total): the project's notes, users and the git scopes. */
export function scopeCounts(scope: SearchScope, target: SearchTarget): boolean {
  return target.level === 'project' && ['notes', 'users', 'commits', 'blobs', 'wiki_blobs'].includes(scope);
}
