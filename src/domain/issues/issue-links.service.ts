// Links between issues (IssueLinks::CreateService / DestroyService, Issue#related_issues): relates_to and
// blocks, read from either side ("is_blocked_by" is a `blocks` link seen from its target, and is stored as
// one). Linking needs the right to change both issues' relations (admin_issue_link: Guests and up, as
// GitLab's admin_issue_relation); each side gets a system note.
import type { Kysely } from 'kysely';
import { ISSUE_COLUMNS, type Database, type IssueLinkRow, type IssueRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import type { NotesService } from '../notes/notes.service.ts';
import { canReadIssue, canReadIssues } from './issue-access.ts';
import type { FoundIssue, IssuesService } from './issues.service.ts';

export const LINK_TYPES = ['relates_to', 'blocks', 'is_blocked_by'] as const;
export type LinkType = (typeof LINK_TYPES)[number];

/** A linked issue as the source issue sees it. */
export interface RelatedIssue {
  issue: IssueRow;
  link: IssueLinkRow;
  /** the link's type from the source's side */
  linkType: LinkType;
}

const NOT_FOUND = 'No matching issue found. Make sure that you are adding a valid issue URL.';

export class IssueLinksService {
  constructor(
    readonly deps: FeatureDeps,
    private readonly issues: IssuesService,
    private readonly notes: NotesService,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** The links of `f`'s issue to issues the actor may read, oldest link first. */
  async related(actor: Actor, f: FoundIssue): Promise<RelatedIssue[]> {
    const links = await this.db
      .selectFrom('issue_links')
      .selectAll()
      .where((eb) => eb.or([eb('source_id', '=', f.issue.id), eb('target_id', '=', f.issue.id)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    if (!links.length) return [];
    const otherIds = links.map((l) => (l.source_id === f.issue.id ? l.target_id : l.source_id));
    const others = await this.db.selectFrom('issues').select(ISSUE_COLUMNS).where('id', 'in', otherIds).execute();
    const out: RelatedIssue[] = [];
    for (const link of links) {
      const otherId = link.source_id === f.issue.id ? link.target_id : link.source_id;
      const issue = others.find((i) => i.id === otherId);
      if (!issue || !(await this.readable(actor, issue))) continue;
      const linkType: LinkType = link.link_type === 'blocks' ? (link.source_id === f.issue.id ? 'blocks' : 'is_blocked_by') : 'relates_to';
      out.push({ issue, link, linkType });
    }
    return out;
  }

  /** Whether the actor may read an issue of any project (its project's rules, then the issue's own). */
  private async readable(actor: Actor, issue: IssueRow): Promise<boolean> {
    const row = await this.deps.resolve.findProjectRow(issue.project_id);
    if (!row || !('project' in row)) return false;
    const access = await this.deps.policy.project(actor, row.project, row.namespace);
    if (!access.abilities.has('read_project') && !actor.isAdmin) return false;
    if (!canReadIssues(actor, row.project, access)) return false;
    const assignees = await this.db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).execute();
    return canReadIssue(
      actor,
      access,
      issue,
      assignees.map((a) => a.user_id),
    );
  }

  /** admin_issue_link on the issue's project: whether the actor may link it to others (and remove its links). */
  canLink(actor: Actor, f: FoundIssue): boolean {
    return !!actor.user && (actor.isAdmin || f.access.abilities.has('admin_issue_link'));
  }

  /** POST …/links: 404 for a target the actor cannot see, 409 for a second link of the pair, 403 without the right. */
  async create(
    actor: Actor,
    source: FoundIssue,
    targetProject: string,
    targetIid: number,
    type: LinkType = 'relates_to',
  ): Promise<{ link: IssueLinkRow; source: IssueRow; target: IssueRow }> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    let target: FoundIssue;
    try {
      target = await this.issues.find(actor, targetProject, targetIid);
    } catch {
      throw Errors.refused(NOT_FOUND, 404);
    }
    const may = (f: FoundIssue) => actor.isAdmin || f.access.abilities.has('admin_issue_link');
    if (!may(source)) throw Errors.forbidden();
    if (!may(target)) throw Errors.refused(NOT_FOUND, 404);
    if (target.issue.id === source.issue.id) throw Errors.refused('Source cannot be related to itself');
    const [from, to] = type === 'is_blocked_by' ? [target.issue, source.issue] : [source.issue, target.issue];
    const existing = await this.db
      .selectFrom('issue_links')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('source_id', '=', source.issue.id), eb('target_id', '=', target.issue.id)]),
          eb.and([eb('source_id', '=', target.issue.id), eb('target_id', '=', source.issue.id)]),
        ]),
      )
      .executeTakeFirst();
    if (existing) throw Errors.conflict('Issue(s) already assigned');
    const at = nowIso();
    try {
      const link = await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('issue_links')
          .values({ source_id: from.id, target_id: to.id, link_type: type === 'relates_to' ? 'relates_to' : 'blocks', created_at: at, updated_at: at })
          .returningAll()
          .executeTakeFirstOrThrow();
        const [sourceNote, targetNote] =
          type === 'relates_to'
            ? ['marked this issue as related to', 'marked this issue as related to']
            : type === 'blocks'
              ? ['marked this issue as blocking', 'marked this issue as blocked by']
              : ['marked this issue as blocked by', 'marked this issue as blocking'];
        await this.notes.addSystemNote(trx, 'Issue', source.issue, user.id, `${sourceNote} ${await this.reference(trx, target.issue, source.issue)}`);
        await this.notes.addSystemNote(trx, 'Issue', target.issue, user.id, `${targetNote} ${await this.reference(trx, source.issue, target.issue)}`);
        return row;
      });
      return { link, source: source.issue, target: target.issue };
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.conflict('Issue(s) already assigned');
      throw e;
    }
  }

  /** One link of the issue (either side), its other issue readable by the actor: else 404 Not found. */
  async get(actor: Actor, f: FoundIssue, linkId: number): Promise<{ link: IssueLinkRow; source: IssueRow; target: IssueRow }> {
    const link = await this.db
      .selectFrom('issue_links')
      .selectAll()
      .where('id', '=', linkId)
      .where((eb) => eb.or([eb('source_id', '=', f.issue.id), eb('target_id', '=', f.issue.id)]))
      .executeTakeFirst();
    if (!link) throw Errors.recordNotFound();
    const [source, target] = await Promise.all([
      this.db.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', link.source_id).executeTakeFirstOrThrow(),
      this.db.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', link.target_id).executeTakeFirstOrThrow(),
    ]);
    const other = source.id === f.issue.id ? target : source;
    if (!(await this.readable(actor, other))) throw Errors.recordNotFound();
    return { link, source, target };
  }

  /** DELETE …/links/:id: the link goes, each side gets "removed the relation with". */
  async remove(actor: Actor, f: FoundIssue, linkId: number): Promise<{ link: IssueLinkRow; source: IssueRow; target: IssueRow }> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const found = await this.get(actor, f, linkId);
    if (!(actor.isAdmin || f.access.abilities.has('admin_issue_link'))) throw Errors.forbidden();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('issue_links').where('id', '=', found.link.id).execute();
      await this.notes.addSystemNote(trx, 'Issue', found.source, user.id, `removed the relation with ${await this.reference(trx, found.target, found.source)}`);
      await this.notes.addSystemNote(trx, 'Issue', found.target, user.id, `removed the relation with ${await this.reference(trx, found.source, found.target)}`);
    });
    return found;
  }

  /** Issue#to_reference(from): `#iid` in the same project, the path or full path across projects. */
  private async reference(trx: Kysely<Database>, issue: IssueRow, from: IssueRow): Promise<string> {
    if (issue.project_id === from.project_id) return `#${issue.iid}`;
    const rows = await trx
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select(['projects.id', 'projects.path', 'projects.namespace_id', 'namespaces.full_path'])
      .where('projects.id', 'in', [issue.project_id, from.project_id])
      .execute();
    const target = rows.find((r) => r.id === issue.project_id)!;
    const source = rows.find((r) => r.id === from.project_id)!;
    return target.namespace_id === source.namespace_id ? `${target.path}#${issue.iid}` : `${target.full_path}/${target.path}#${issue.iid}`;
  }
}
