// GitLab references in rendered markdown, in two steps, as Banzai's reference filters then its
// ReferenceRedactor:
//   1. link (for every viewer): the candidates the render found (reference-scan.ts) are looked up — one
//      query per kind for the whole text (the projects named, issues, merge requests, labels, milestones,
//      users and groups; commits from the repositories) — and each that exists becomes GitLab's link
//      (`class="gfm gfm-issue"`, `data-reference-type`, `data-original`, `title`, `href` …); one that does
//      not stays text. The result is kept by the text's render key while the tables it read keep their
//      versions, so a renamed label or a new title shows at once.
//   2. redact (per viewer, for all the texts of a page at once): which of the linked issues, merge
//      requests, projects, repositories and groups the viewer may read — one query per kind present — and
//      every other link is replaced by the text as written, so neither its title nor its attributes reach
//      the viewer.
// The issues are read in issue-references.ts (who may read them is the issue finder's rule).
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { readVersions, stamp } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import type { Actor } from '../access/actor.ts';
import type { Policy } from '../access/policy.ts';
import { traversalIds } from '../access/policy.ts';
import { openLevels, privateFeatureMinLevel } from '../access/visibility.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { prefersDarkText } from '../labels/label-color.ts';
import { canReadCode } from '../repository/read-access.ts';
import { ProjectsQuery } from '../projects/projects-query.ts';
import { settingsOf } from '../core/project-settings.ts';
import { closingIssueReferences, compileClosingPattern, DEFAULT_ISSUE_CLOSING_PATTERN } from './closing-pattern.ts';
import { type IssueReadRule, readableIssues, type ReferencedIssue, referencedIssues } from './issue-references.ts';
import type { MarkdownContext, RenderedParts } from './markdown.ts';
import { escapeHtml, FULL_NAMESPACE_FORMAT, PLACEHOLDERS, type ReferenceCandidate, type ReferenceKind } from './reference-scan.ts';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** a project's path (Gitlab::PathRegex.project_path_format) */
const PROJECT_PATH = '(?:[a-zA-Z0-9_.][a-zA-Z0-9_\\-.]*)(?<!\\.git|\\.atom)';

/** What a viewer must be allowed to read for a link to stay a link. */
type Check = { kind: 'issue' | 'merge_request' | 'project' | 'code' | 'group'; id: number } | null;

interface Link {
  html: string;
  /** the text as written, escaped: what the link becomes when redacted */
  original: string;
  check: Check;
}

/** A text with its references linked: `parts[i]`, `links[i]`, …, `parts[n]`. */
export interface LinkedMarkdown {
  parts: string[];
  links: Link[];
}

/** What a viewer may read, by kind of check. */
type Visible = Record<NonNullable<Check>['kind'], ReadonlySet<number>>;

/** The text with the links `visible` allows and every other link as written (all of them without `visible`). */
function join(t: LinkedMarkdown, visible: Visible | null): string {
  let out = t.parts[0];
  for (let i = 0; i < t.links.length; i++) {
    const l = t.links[i];
    const shown = !l.check || (visible !== null && visible[l.check.kind].has(l.check.id));
    out += (shown ? l.html : l.original) + t.parts[i + 1];
  }
  return out;
}

/** The tables each kind of reference reads (the cache's versions). */
const TABLES: Record<ReferenceKind, readonly string[]> = {
  issue: ['issues'],
  merge_request: ['merge_requests'],
  // commits are read from the repository: a push writes `projects` (last_activity_at)
  commit: [],
  label: ['labels'],
  milestone: ['milestones'],
  user: ['users'],
};

/** A project a reference names, with what its links show. */
interface RefProject {
  id: number;
  repository_storage: string;
  path: string;
  name: string;
  fullPath: string;
  namespace: Pick<NamespaceRow, 'id' | 'type' | 'name' | 'traversal_ids' | 'full_path'>;
}

/** The text of each placeholder as written, escaped (a render whose references are not linked). */
export function unlinkedReferences(parts: RenderedParts): string {
  return parts.html.replace(PLACEHOLDERS, (_, i: string) => escapeHtml(parts.refs[Number(i)]?.text ?? ''));
}

export class MarkdownReferences {
  private readonly linkedCache = new VersionedCache<LinkedMarkdown>(10_000, 10 * 60 * 1000, {
    size: (l) => 2 * (l.parts.reduce((n, p) => n + p.length, 0) + l.links.reduce((n, x) => n + x.html.length + x.original.length, 0)),
    maxSize: 32 * 1024 * 1024,
  });
  private readonly projects: ProjectsQuery;

  private readonly log?: Logger;
  private readonly closingPattern: RegExp;
  /** who may read an issue (the issue finder's rule; without it issue links are redacted for everyone) */
  private readonly issueRule: IssueReadRule | null;
  /** the repositories commits are read from (without them commits stay text) */
  private readonly repos: RepositoryStore | null;

  constructor(
    private readonly db: Db,
    private readonly policy: Policy,
    private readonly externalUrl: string,
    opts: { log?: Logger; closingPattern?: RegExp; repos?: RepositoryStore; issues?: IssueReadRule } = {},
  ) {
    this.issueRule = opts.issues ?? null;
    this.projects = new ProjectsQuery(db, policy);
    this.log = opts.log;
    this.repos = opts.repos ?? null;
    this.closingPattern = opts.closingPattern ?? compileClosingPattern(DEFAULT_ISSUE_CLOSING_PATTERN);
  }

  /**
   * The issues `text` (a commit message, a merge request description) closes in `project`
   * (ClosingIssueExtractor#closed_by_message): none when the project's autoclose_referenced_issues is
   * off; those that exist, each once, in the order written, without the issues of the project it was
   * forked from. Not access-checked: the caller decides what the author may close.
   */
  async closingIssues(project: Pick<ProjectRow, 'id' | 'settings' | 'visibility'>, fullPath: string, text: string): Promise<ReferencedIssue[]> {
    if (!settingsOf(project).autoclose_referenced_issues) return [];
    const refs = closingIssueReferences(text, fullPath, { pattern: this.closingPattern, externalUrl: this.externalUrl });
    if (!refs.length) return [];
    const projects = await this.projectsByPath([...new Set(refs.map((r) => r.project.toLowerCase()))]);
    const upstream = await this.db.kysely.selectFrom('project_forks').select('forked_from_project_id').where('project_id', '=', project.id).executeTakeFirst();
    const wanted = new Map<number, Set<number>>();
    for (const r of refs) {
      const p = projects.get(r.project.toLowerCase());
      if (!p || p.id === upstream?.forked_from_project_id) continue;
      let s = wanted.get(p.id);
      if (!s) wanted.set(p.id, (s = new Set()));
      s.add(r.iid);
    }
    const found = new Map((await referencedIssues(this.db, wanted)).map((i) => [`${i.project_id}:${i.iid}`, i]));
    const out: ReferencedIssue[] = [];
    for (const r of refs) {
      const p = projects.get(r.project.toLowerCase());
      const issue = p ? found.get(`${p.id}:${r.iid}`) : undefined;
      if (issue && !out.includes(issue)) out.push(issue);
    }
    return out;
  }

  /**
   * The issues a rendered text (`linkedOrText`) references that `author` may read, as Mentionable's
   * referenced_mentionables runs the reference extractor as the text's author: its issue references (`#12`,
   * `project#12`, `group/project#12`; not in code, not escaped) and its links to issues of this instance (an
   * autolinked URL or a link's target, …/group/project/-/issues/12 or the older …/issues/12), in the order
   * written, each once.
   */
  async readableIssuesIn(text: string | LinkedMarkdown, author: Actor): Promise<number[]> {
    const linked = typeof text === 'string' ? { parts: [text], links: [] } : text;
    const order: ({ id: number } | { path: string; iid: number })[] = [];
    const links = new RegExp(
      `<a href="${escapeRegExp(escapeHtml(this.externalUrl))}/((?:${FULL_NAMESPACE_FORMAT})/${PROJECT_PATH})(?:/-)?/issues/(\\d+)(?![\\d])`,
      'g',
    );
    for (let i = 0; i < linked.parts.length; i++) {
      for (const m of linked.parts[i].matchAll(links)) order.push({ path: m[1].toLowerCase(), iid: Number(m[2]) });
      const check = linked.links[i]?.check;
      if (check?.kind === 'issue') order.push({ id: check.id });
    }
    const byUrl = order.filter((o): o is { path: string; iid: number } => 'path' in o && o.iid > 0 && o.iid <= 2147483647);
    const urlIssues = new Map<string, number>();
    if (byUrl.length) {
      const projects = await this.projectsByPath([...new Set(byUrl.map((o) => o.path))]);
      const wanted = new Map<number, Set<number>>();
      for (const o of byUrl) {
        const p = projects.get(o.path);
        if (!p) continue;
        let s = wanted.get(p.id);
        if (!s) wanted.set(p.id, (s = new Set()));
        s.add(o.iid);
      }
      const pathOf = new Map([...projects.values()].map((p) => [p.id, p.fullPath.toLowerCase()]));
      for (const issue of await referencedIssues(this.db, wanted)) urlIssues.set(`${pathOf.get(issue.project_id)}#${issue.iid}`, issue.id);
    }
    const ids: number[] = [];
    for (const o of order) {
      const id = 'id' in o ? o.id : urlIssues.get(`${o.path}#${o.iid}`);
      if (id !== undefined && !ids.includes(id)) ids.push(id);
    }
    if (!ids.length || !this.issueRule) return [];
    const readable = await readableIssues(this.db, this.issueRule, author, ids);
    return ids.filter((id) => readable.has(id));
  }

  /** The rendered text with its references linked and redacted for `viewer`; never fails. */
  async html(parts: RenderedParts, key: string, ctx: MarkdownContext, viewer: Actor): Promise<string> {
    return (await this.redactAll([await this.linkedOrText(parts, key, ctx)], viewer))[0];
  }

  /** Step 1, never failing: the render's HTML when it has no references, else its links (their text as written when the lookups fail). */
  async linkedOrText(parts: RenderedParts, key: string, ctx: MarkdownContext): Promise<string | LinkedMarkdown> {
    if (!parts.refs.length) return parts.html;
    try {
      return await this.linked(parts, key, ctx);
    } catch (e) {
      this.log?.error({ err: e }, 'markdown references failed');
      return unlinkedReferences(parts);
    }
  }

  /**
   * Step 2 for several texts of one viewer (a page's descriptions and notes), as ReferenceRedactor redacts
   * a page's documents: one access query per kind for all of them. Never fails: when the queries do,
   * every link is its text as written.
   */
  async redactAll(texts: readonly (string | LinkedMarkdown)[], viewer: Actor): Promise<string[]> {
    const linked = texts.filter((t): t is LinkedMarkdown => typeof t !== 'string' && t.links.length > 0);
    let visible: Visible | null = null;
    if (linked.length) {
      try {
        visible = await this.visible(linked, viewer);
      } catch (e) {
        this.log?.error({ err: e }, 'markdown reference redaction failed');
      }
    }
    return texts.map((t) => (typeof t === 'string' ? t : join(t, visible)));
  }

  /** Step 1: the references linked for every viewer, cached on the versions of the tables they read. */
  async linked(parts: RenderedParts, key: string, ctx: MarkdownContext): Promise<LinkedMarkdown> {
    const tables = new Set<string>(['projects', 'namespaces']);
    for (const r of parts.refs) for (const t of TABLES[r.kind]) tables.add(t);
    const st = stamp(await readVersions(this.db), [...tables].sort());
    const hit = this.linkedCache.get(key, st);
    if (hit) return hit;
    const linked = await this.link(parts, ctx);
    this.linkedCache.set(key, st, linked);
    return linked;
  }

  /** Which of the linked issues, merge requests, projects and groups `viewer` may read: one query per kind present. */
  private async visible(texts: LinkedMarkdown[], viewer: Actor): Promise<Visible> {
    const ids = { issue: new Set<number>(), merge_request: new Set<number>(), project: new Set<number>(), code: new Set<number>(), group: new Set<number>() };
    for (const t of texts) for (const l of t.links) if (l.check) ids[l.check.kind].add(l.check.id);
    const [issue, merge_request, project, code, group] = await Promise.all([
      this.issueRule ? readableIssues(this.db, this.issueRule, viewer, [...ids.issue]) : new Set<number>(),
      this.readableMergeRequests(viewer, [...ids.merge_request]),
      this.visibleProjects(viewer, [...ids.project]),
      this.readableCode(viewer, [...ids.code]),
      ids.group.size ? this.policy.visibleGroupIdsAmong(viewer, [...ids.group]).then((v) => new Set(v)) : new Set<number>(),
    ]);
    return { issue, merge_request, project, code, group };
  }

  /**
   * Of these merge request ids, those `actor` may read: the rule of the merge request lists
   * (MergeRequestsQuery's, on the row's `visibility`: its project's narrowed by the feature, private for
   * members of Reporter and up).
   */
  private async readableMergeRequests(actor: Actor, ids: number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    let q = this.db.kysely.selectFrom('merge_requests').select('merge_requests.id').where('merge_requests.id', 'in', ids);
    const open = openLevels(actor);
    if (actor.isAdmin) q = q.where('merge_requests.visibility', '<>', 'disabled');
    else if (!actor.user) q = q.where('merge_requests.visibility', 'in', open);
    else {
      const mine = await this.projects.memberProjects(actor.user.id, privateFeatureMinLevel('merge_requests', 'private'));
      const members = this.db.kysely.selectFrom('projects').select('projects.id').where(mine);
      q = q.where((eb) =>
        eb.or([
          eb('merge_requests.visibility', 'in', open),
          eb.and([eb('merge_requests.visibility', '<>', 'disabled'), eb('merge_requests.project_id', 'in', members)]),
        ]),
      );
    }
    return new Set((await q.execute()).map((r) => r.id));
  }

  /**
   * Of these project ids, those whose code `actor` may read (canReadCode: the repository feature too). The
   * policy's answer per project (commits of a text name one or two projects).
   */
  private async readableCode(actor: Actor, ids: number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const rows = await this.db.kysely
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .selectAll('projects')
      .select('namespaces.id as ns_id')
      .where('projects.id', 'in', ids)
      .execute();
    const namespaces = new Map(
      (
        await this.db.kysely
          .selectFrom('namespaces')
          .selectAll()
          .where('id', 'in', [...new Set(rows.map((r) => r.ns_id))])
          .execute()
      ).map((n) => [n.id, n]),
    );
    const out = new Set<number>();
    await Promise.all(
      rows.map(async ({ ns_id, ...project }) => {
        const ns = namespaces.get(ns_id);
        if (ns && canReadCode(actor, project, await this.policy.project(actor, project, ns))) out.add(project.id);
      }),
    );
    return out;
  }

  /** Of these project ids, those `actor` may see. */
  private async visibleProjects(actor: Actor, ids: number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    if (actor.isAdmin) return new Set(ids);
    const rows = await this.db.kysely
      .selectFrom('projects')
      .select('projects.id')
      .where('projects.id', 'in', ids)
      .where(await this.projects.visible(actor))
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  // ---- step 1: lookups and links ------------------------------------------------------------------

  private async link(parts: RenderedParts, ctx: MarkdownContext): Promise<LinkedMarkdown> {
    const refs = parts.refs;
    const contextPath = ctx.project?.fullPath ?? null;
    const contextNamespace = contextPath ? contextPath.slice(0, contextPath.lastIndexOf('/')) : null;
    /** the full path of the project a reference names (AbstractReferenceFilter's full_project_path) */
    const projectPathOf = (r: ReferenceCandidate): string | null => {
      if (r.kind === 'user' || !contextPath) return null;
      if (r.project === null) return contextPath;
      return r.project.includes('/') ? r.project : `${contextNamespace}/${r.project}`;
    };
    const paths = new Set<string>();
    if (contextPath) paths.add(contextPath.toLowerCase());
    for (const r of refs) {
      const p = projectPathOf(r);
      if (p) paths.add(p.toLowerCase());
    }
    const projects = await this.projectsByPath([...paths]);
    const from = contextPath ? (projects.get(contextPath.toLowerCase()) ?? null) : null;
    const parentOf = (r: ReferenceCandidate): RefProject | null => {
      const p = projectPathOf(r);
      return p ? (projects.get(p.toLowerCase()) ?? null) : null;
    };

    const want = (kind: ReferenceKind) => {
      const m = new Map<number, Set<number>>();
      for (const r of refs) {
        const parent = r.kind === kind && r.number !== undefined ? parentOf(r) : null;
        if (!parent) continue;
        let s = m.get(parent.id);
        if (!s) m.set(parent.id, (s = new Set()));
        s.add(r.number!);
      }
      return m;
    };
    const kinds = new Set(refs.map((r) => r.kind));
    const [issues, mrs, labels, milestones, users, commits] = await Promise.all([
      kinds.has('issue') ? referencedIssues(this.db, want('issue')) : [],
      kinds.has('merge_request') ? this.mergeRequests(want('merge_request')) : [],
      kinds.has('label')
        ? this.labels(
            refs.filter((r) => r.kind === 'label'),
            parentOf,
          )
        : [],
      kinds.has('milestone')
        ? this.milestones(
            refs.filter((r) => r.kind === 'milestone'),
            parentOf,
          )
        : [],
      kinds.has('user') ? this.namespaces(refs.filter((r) => r.kind === 'user' && r.name !== 'all').map((r) => r.name!)) : new Map<string, UserOrGroup>(),
      kinds.has('commit')
        ? this.commits(
            refs.filter((r) => r.kind === 'commit'),
            parentOf,
          )
        : new Map<string, CommitHit>(),
    ]);
    const groupNames = await this.fullNames([
      ...[...projects.values()].filter((p) => from && p.id !== from.id && p.namespace.id !== from.namespace.id).map((p) => p.namespace),
      ...[...users.values()].filter((u) => u.type === 'Group').map((u) => u.namespace),
    ]);
    const byKey = <T extends { project_id: number | null }>(rows: readonly T[], n: (r: T) => number) =>
      new Map(rows.map((r) => [`${r.project_id}:${n(r)}`, r]));
    const issueAt = byKey(issues, (r) => r.iid);
    const mrAt = byKey(mrs, (r) => r.iid);

    const out: LinkedMarkdown = { parts: [''], links: [] };
    const pieces = parts.html.split(PLACEHOLDERS);
    for (let i = 0; i < pieces.length; i++) {
      if (i % 2 === 0) {
        out.parts[out.parts.length - 1] += pieces[i];
        continue;
      }
      const r = refs[Number(pieces[i])];
      const original = escapeHtml(r?.text ?? '');
      const link = r ? this.linkFor(r, { from, parent: parentOf(r), issueAt, mrAt, labels, milestones, users, groupNames, commits }) : null;
      if (!link) {
        out.parts[out.parts.length - 1] += original;
        continue;
      }
      out.links.push({ ...link, original });
      out.parts.push('');
    }
    return out;
  }

  private linkFor(
    r: ReferenceCandidate,
    k: {
      from: RefProject | null;
      parent: RefProject | null;
      issueAt: Map<string, { id: number; iid: number; title: string; issue_type: string }>;
      mrAt: Map<string, { id: number; iid: number; title: string }>;
      labels: LabelHit[];
      milestones: MilestoneHit[];
      users: Map<string, UserOrGroup>;
      groupNames: Map<number, string>;
      commits: Map<string, CommitHit>;
    },
  ): Omit<Link, 'original'> | null {
    const ext = this.externalUrl;
    const { from, parent } = k;
    const original = r.text;
    if (r.kind === 'user') {
      if (r.name === 'all') {
        if (!from) return null;
        return {
          html: userLink(`${ext}/${from.fullPath}`, { project: from.id }, 'All Project and Group Members', '@all'),
          check: { kind: 'project', id: from.id },
        };
      }
      const u = k.users.get(r.name!.toLowerCase());
      if (!u) return null;
      if (u.type === 'User') return { html: userLink(`${ext}/${u.path}`, { user: u.userId }, u.title, `@${u.path}`), check: null };
      return {
        html: userLink(`${ext}/groups/${u.path}`, { group: u.namespace.id }, k.groupNames.get(u.namespace.id) ?? u.namespace.name, `@${u.path}`),
        check: { kind: 'group', id: u.namespace.id },
      };
    }
    if (!parent || !from) return null;
    const base = referenceBase(parent, from);
    if (r.kind === 'issue') {
      const issue = k.issueAt.get(`${parent.id}:${r.number}`);
      if (!issue) return null;
      const html = anchor(
        `${ext}/${parent.fullPath}/-/issues/${issue.iid}`,
        [
          ['data-reference-type', 'issue'],
          ['data-original', original],
          ['data-link', 'false'],
          ['data-link-reference', 'false'],
          ['data-project', String(parent.id)],
          ['data-issue', String(issue.id)],
          ['data-project-path', parent.fullPath],
          ['data-iid', String(issue.iid)],
          ['data-issue-type', issue.issue_type],
          ['data-container', 'body'],
          ['data-placement', 'top'],
          ['title', issue.title],
          ['class', 'gfm gfm-issue'],
        ],
        escapeHtml(`${base}#${issue.iid}`),
      );
      return { html, check: { kind: 'issue', id: issue.id } };
    }
    if (r.kind === 'merge_request') {
      const mr = k.mrAt.get(`${parent.id}:${r.number}`);
      if (!mr) return null;
      const html = anchor(
        `${ext}/${parent.fullPath}/-/merge_requests/${mr.iid}`,
        [
          ['data-reference-type', 'merge_request'],
          ['data-original', original],
          ['data-link', 'false'],
          ['data-link-reference', 'false'],
          ['data-project', String(parent.id)],
          ['data-merge-request', String(mr.id)],
          ['data-project-path', parent.fullPath],
          ['data-iid', String(mr.iid)],
          ['data-container', 'body'],
          ['data-placement', 'top'],
          ['title', mr.title],
          ['class', 'gfm gfm-merge_request'],
        ],
        escapeHtml(`${base}!${mr.iid}`),
      );
      return { html, check: { kind: 'merge_request', id: mr.id } };
    }
    if (r.kind === 'commit') {
      const commit = k.commits.get(`${parent.id}:${r.name}`);
      if (!commit) return null;
      const short = commit.sha.slice(0, 8);
      const html = anchor(
        `${ext}/${parent.fullPath}/-/commit/${commit.sha}`,
        [
          ['data-reference-type', 'commit'],
          ['data-original', original],
          ['data-link', 'false'],
          ['data-link-reference', 'false'],
          ['data-project', String(parent.id)],
          ['data-commit', commit.sha],
          ['data-container', 'body'],
          ['data-placement', 'top'],
          ['title', commit.title],
          ['class', 'gfm gfm-commit has-tooltip'],
        ],
        escapeHtml(base ? `${base}@${short}` : short),
      );
      return { html, check: { kind: 'code', id: parent.id } };
    }
    if (r.kind === 'label') {
      const label = findLabel(k.labels, parent, r);
      if (!label) return null;
      // a label of another project says whose it is (to_human_reference: the name, with the namespace's across namespaces)
      const suffix =
        r.project !== null && parent.id !== from.id
          ? ` <i>in ${escapeHtml(parent.namespace.id === from.namespace.id ? parent.name : `${k.groupNames.get(parent.namespace.id) ?? parent.namespace.name} / ${parent.name}`)}</i>`
          : '';
      const color = /^#(?:[0-9A-Fa-f]{3}){1,2}$/.test(label.color) ? label.color : null;
      const text =
        `<span class="gl-label-text ${color && prefersDarkText(color) ? 'gl-label-text-dark' : 'gl-label-text-light'}" data-container="body" data-html="true"` +
        `${color ? ` style="background-color: ${color}"` : ''}>${escapeHtml(label.title)}${suffix}</span>`;
      const html = anchor(
        `${ext}/${parent.fullPath}/-/issues?label_name=${encodeURIComponent(label.title).replace(/%20/g, '+')}`,
        [
          ['data-reference-type', 'label'],
          ['data-original', original],
          ['data-link', 'false'],
          ['data-link-reference', 'false'],
          ['data-project', String(parent.id)],
          ['data-label', String(label.id)],
          ['data-container', 'body'],
          ['data-placement', 'top'],
          ['title', label.description ?? ''],
          ['class', 'gfm gfm-label has-tooltip gl-link gl-label-link'],
        ],
        text,
      );
      return { html: `<span class="gl-label gl-label-sm">${html}</span>`, check: { kind: 'project', id: parent.id } };
    }
    const milestone = findMilestone(k.milestones, parent, r);
    if (!milestone) return null;
    const owner = milestone.project_id !== null ? milestone.project : null;
    const inProject = owner && owner.id !== from.id ? ` <i>in ${escapeHtml(referenceBase(owner, from))}</i>` : '';
    const group = milestone.group;
    const url = owner ? `${ext}/${owner.fullPath}/-/milestones/${milestone.iid}` : `${ext}/groups/${group?.full_path ?? ''}/-/milestones/${milestone.iid}`;
    // a group's milestone names its group (MilestoneReferenceFilter#data_attributes_for)
    const parentAttrs: [string, string][] = group
      ? [
          ['data-group', String(group.id)],
          ['data-namespace', String(group.id)],
        ]
      : [['data-project', String(parent.id)]];
    const html = anchor(
      url,
      [
        ['data-reference-type', 'milestone'],
        ['data-original', original],
        ['data-link', 'false'],
        ['data-link-reference', 'false'],
        ...parentAttrs,
        ['data-milestone', String(milestone.id)],
        ['data-container', 'body'],
        ['data-placement', 'top'],
        ['title', ''],
        ['class', 'gfm gfm-milestone has-tooltip'],
      ],
      `${escapeHtml(`%${milestone.title}`)}${inProject}`,
    );
    return { html, check: group ? { kind: 'group', id: group.id } : { kind: 'project', id: parent.id } };
  }

  /** The commits the references name, by project and SHA as written (lower case): read from the repositories. */
  private async commits(refs: ReferenceCandidate[], parentOf: (r: ReferenceCandidate) => RefProject | null): Promise<Map<string, CommitHit>> {
    const out = new Map<string, CommitHit>();
    const repos = this.repos;
    if (!repos) return out;
    const wanted = new Map<string, { project: RefProject; sha: string }>();
    for (const r of refs) {
      const project = parentOf(r);
      if (project && r.name) wanted.set(`${project.id}:${r.name}`, { project, sha: r.name });
    }
    await Promise.all(
      [...wanted].map(async ([key, { project, sha }]) => {
        try {
          const repo = repos.repository(project);
          // no repository, or no commit in it yet: nothing to read
          if (!repo.exists() || repo.isEmptySync()) return;
          const full = await repo.resolveCommit(sha);
          const commit = full ? await repo.commit(full) : null;
          if (commit) out.set(key, { sha: commit.sha, title: commitTitle(commit.message) });
        } catch {
          // no repository (or not readable): the text stays as written
        }
      }),
    );
    return out;
  }

  /** Projects by full path (lower case), with their namespaces: one query. */
  private async projectsByPath(paths: string[]): Promise<Map<string, RefProject>> {
    const out = new Map<string, RefProject>();
    const split = paths.map((p) => [p.slice(0, p.lastIndexOf('/')), p.slice(p.lastIndexOf('/') + 1)] as const).filter(([ns, p]) => ns && p);
    if (!split.length) return out;
    const rows = await this.db.kysely
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select([
        'projects.id',
        'projects.repository_storage',
        'projects.path',
        'projects.name',
        'namespaces.id as ns_id',
        'namespaces.type as ns_type',
        'namespaces.name as ns_name',
        'namespaces.full_path as ns_full_path',
        'namespaces.traversal_ids as ns_traversal_ids',
      ])
      .where((eb) => eb(eb.fn('lower', ['namespaces.full_path']), 'in', [...new Set(split.map(([ns]) => ns))]))
      .where((eb) => eb(eb.fn('lower', ['projects.path']), 'in', [...new Set(split.map(([, p]) => p))]))
      .execute();
    const wanted = new Set(paths);
    for (const r of rows) {
      const fullPath = `${r.ns_full_path}/${r.path}`;
      if (!wanted.has(fullPath.toLowerCase())) continue;
      out.set(fullPath.toLowerCase(), {
        id: r.id,
        repository_storage: r.repository_storage,
        path: r.path,
        name: r.name,
        fullPath,
        namespace: { id: r.ns_id, type: r.ns_type, name: r.ns_name, full_path: r.ns_full_path, traversal_ids: r.ns_traversal_ids },
      });
    }
    return out;
  }

  private async mergeRequests(wanted: Map<number, Set<number>>): Promise<{ id: number; project_id: number; iid: number; title: string }[]> {
    const projectIds = [...wanted.keys()];
    const iids = [...new Set([...wanted.values()].flatMap((s) => [...s]))];
    if (!projectIds.length) return [];
    const rows = await this.db.kysely
      .selectFrom('merge_requests')
      .select(['id', 'project_id', 'iid', 'title'])
      .where('project_id', 'in', projectIds)
      .where('iid', 'in', iids)
      .execute();
    return rows.filter((r) => wanted.get(r.project_id)?.has(r.iid));
  }

  /** The labels the references may name: of their projects and those projects' groups, by id or title (one query). */
  private async labels(refs: ReferenceCandidate[], parentOf: (r: ReferenceCandidate) => RefProject | null): Promise<LabelHit[]> {
    const projectIds = new Set<number>();
    const groupIds = new Set<number>();
    const ids = new Set<number>();
    const titles = new Set<string>();
    for (const r of refs) {
      const p = parentOf(r);
      if (!p) continue;
      projectIds.add(p.id);
      if (p.namespace.type === 'Group') for (const g of traversalIds(p.namespace)) groupIds.add(g);
      if (r.number !== undefined) ids.add(r.number);
      else if (r.name !== undefined) titles.add(r.name);
    }
    if (!projectIds.size || (!ids.size && !titles.size)) return [];
    return this.db.kysely
      .selectFrom('labels')
      .select(['id', 'project_id', 'group_id', 'title', 'color', 'description'])
      .where((eb) =>
        eb.and([
          eb.or([eb('project_id', 'in', [...projectIds]), ...(groupIds.size ? [eb('group_id', 'in', [...groupIds])] : [])]),
          eb.or([...(ids.size ? [eb('id', 'in', [...ids])] : []), ...(titles.size ? [eb('title', 'in', [...titles])] : [])]),
        ]),
      )
      .execute();
  }

  /** The milestones the references may name: by iid of their projects, by title of their projects and groups (one query). */
  private async milestones(refs: ReferenceCandidate[], parentOf: (r: ReferenceCandidate) => RefProject | null): Promise<MilestoneHit[]> {
    const projectIds = new Set<number>();
    const groupIds = new Set<number>();
    const iids = new Set<number>();
    const titles = new Set<string>();
    const projects = new Map<number, RefProject>();
    for (const r of refs) {
      const p = parentOf(r);
      if (!p) continue;
      projects.set(p.id, p);
      projectIds.add(p.id);
      if (r.number !== undefined) iids.add(r.number);
      else if (r.name !== undefined) {
        titles.add(r.name);
        if (p.namespace.type === 'Group') for (const g of traversalIds(p.namespace)) groupIds.add(g);
      }
    }
    if (!projectIds.size) return [];
    const rows = await this.db.kysely
      .selectFrom('milestones')
      .leftJoin('namespaces', 'namespaces.id', 'milestones.group_id')
      .select(['milestones.id', 'milestones.iid', 'milestones.project_id', 'milestones.group_id', 'milestones.title', 'namespaces.full_path as group_path'])
      .where((eb) =>
        eb.or([
          ...(iids.size ? [eb.and([eb('milestones.project_id', 'in', [...projectIds]), eb('milestones.iid', 'in', [...iids])])] : []),
          ...(titles.size
            ? [
                eb.and([
                  eb.or([eb('milestones.project_id', 'in', [...projectIds]), ...(groupIds.size ? [eb('milestones.group_id', 'in', [...groupIds])] : [])]),
                  eb('milestones.title', 'in', [...titles]),
                ]),
              ]
            : []),
        ]),
      )
      .execute();
    return rows.map((m) => ({
      id: m.id,
      iid: m.iid,
      project_id: m.project_id,
      group_id: m.group_id,
      title: m.title,
      project: m.project_id !== null ? (projects.get(m.project_id) ?? null) : null,
      group: m.group_id !== null && m.group_path !== null ? { id: m.group_id, full_path: m.group_path } : null,
    }));
  }

  /** Users and groups by path (lower case): `@name` is a user's namespace or a group (one query). */
  private async namespaces(names: string[]): Promise<Map<string, UserOrGroup>> {
    const out = new Map<string, UserOrGroup>();
    const lower = [...new Set(names.map((n) => n.toLowerCase()))];
    if (!lower.length) return out;
    const rows = await this.db.kysely
      .selectFrom('namespaces')
      .leftJoin('users', (j) => j.onRef('users.id', '=', 'namespaces.owner_id').on('namespaces.type', '=', 'User'))
      .select([
        'namespaces.id',
        'namespaces.type',
        'namespaces.name',
        'namespaces.full_path',
        'namespaces.traversal_ids',
        'users.id as user_id',
        'users.name as user_name',
        'users.username',
      ])
      .where((eb) => eb(eb.fn('lower', ['namespaces.full_path']), 'in', lower))
      .execute();
    for (const r of rows) {
      const namespace = { id: r.id, type: r.type, name: r.name, full_path: r.full_path, traversal_ids: r.traversal_ids };
      if (r.type === 'User') {
        if (r.user_id === null) continue;
        out.set(r.full_path.toLowerCase(), { type: 'User', path: r.username ?? r.full_path, userId: r.user_id, title: r.user_name ?? '', namespace });
      } else out.set(r.full_path.toLowerCase(), { type: 'Group', path: r.full_path, userId: null, title: r.name, namespace });
    }
    return out;
  }

  /** Namespace#full_name of groups ("Top / Sub"): the names of their ancestors (one query). */
  private async fullNames(namespaces: RefProject['namespace'][]): Promise<Map<number, string>> {
    const groups = namespaces.filter((n) => n.type === 'Group');
    const out = new Map<number, string>();
    if (!groups.length) return out;
    const ids = [...new Set(groups.flatMap((g) => traversalIds(g)))];
    const rows = await this.db.kysely.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ids).execute();
    const names = new Map(rows.map((r) => [r.id, r.name]));
    for (const g of groups)
      out.set(
        g.id,
        traversalIds(g)
          .map((id) => names.get(id) ?? '')
          .join(' / '),
      );
    return out;
  }
}

/** Commit#title: the first line, cut at a word near 80 characters with `…` when it is 100 or longer. */
function commitTitle(message: string): string {
  const line = message.split('\n')[0] ?? '';
  if (line.length < 100) return line;
  const cut = line.slice(0, 80);
  const space = cut.lastIndexOf(' ');
  return `${space > 0 ? cut.slice(0, space) : cut}…`;
}

interface CommitHit {
  sha: string;
  /** Commit#title: the message's first line */
  title: string;
}

interface LabelHit {
  id: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  color: string;
  description: string | null;
}

interface MilestoneHit {
  id: number;
  iid: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  project: RefProject | null;
  group: { id: number; full_path: string } | null;
}

interface UserOrGroup {
  type: 'User' | 'Group';
  path: string;
  userId: number | null;
  title: string;
  namespace: RefProject['namespace'];
}

/** The label a reference names in `parent`: its own first, then its nearest group's. */
function findLabel(labels: LabelHit[], parent: RefProject, r: ReferenceCandidate): LabelHit | null {
  const groups = parent.namespace.type === 'Group' ? traversalIds(parent.namespace) : [];
  let best: LabelHit | null = null;
  let rank = -1;
  for (const l of labels) {
    if (r.number !== undefined ? l.id !== r.number : l.title !== r.name) continue;
    const here = l.project_id === parent.id ? groups.length + 1 : l.group_id !== null ? groups.indexOf(l.group_id) : -1;
    if (here > rank) {
      best = l;
      rank = here;
    }
  }
  return best;
}

/** The milestone a reference names in `parent`: by iid its own; by title its own first, then its nearest group's. */
function findMilestone(milestones: MilestoneHit[], parent: RefProject, r: ReferenceCandidate): MilestoneHit | null {
  if (r.number !== undefined) return milestones.find((m) => m.project_id === parent.id && m.iid === r.number) ?? null;
  const groups = parent.namespace.type === 'Group' ? traversalIds(parent.namespace) : [];
  let best: MilestoneHit | null = null;
  let rank = -1;
  for (const m of milestones) {
    if (m.title !== r.name) continue;
    const here = m.project_id === parent.id ? groups.length + 1 : m.group_id !== null ? groups.indexOf(m.group_id) : -1;
    if (here > rank) {
      best = m;
      rank = here;
    }
  }
  return best;
}

/** Project#to_reference_base: nothing in the same project, its path in the same namespace, else its full path. */
function referenceBase(target: RefProject, from: RefProject): string {
  if (target.id === from.id) return '';
  if (target.namespace.id === from.namespace.id) return target.path;
  return target.fullPath;
}

/** `<a href=…>` with attributes in order, every value escaped; `content` is HTML. */
function anchor(href: string, attrs: [string, string][], content: string): string {
  let s = `<a href="${escapeHtml(href)}"`;
  for (const [k, v] of attrs) s += ` ${k}="${escapeHtml(v)}"`;
  return `${s}>${content}</a>`;
}

/** UserReferenceFilter's link: a user, a group, or everyone of the project (`@all`). */
function userLink(href: string, data: Record<string, number | null>, title: string, text: string): string {
  const attrs: [string, string][] = [['data-reference-type', 'user']];
  for (const [k, v] of Object.entries(data)) if (v !== null) attrs.push([`data-${k}`, String(v)]);
  attrs.push(['data-container', 'body'], ['data-placement', 'top'], ['class', 'gfm gfm-project_member js-user-link'], ['title', title]);
  return anchor(href, attrs, escapeHtml(text));
}
