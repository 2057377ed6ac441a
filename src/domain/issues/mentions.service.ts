// Merge requests that mention issues (GitLab's cross references: Mentionable#create_cross_references! and
// SystemNotes::IssuablesService#cross_reference). When a merge request is opened, when its title or description
// is edited, and when a note on it is written or edited, the issues the text references — read as its writer
// reads them (the reference extractor runs as that user: an issue they may not read is no reference) — get the
// system note "mentioned in merge request !45" (`app!45` from another project of the issue's namespace,
// `grp/app!45` from elsewhere), by the writer, once per issue and merge request: a row of
// merge_requests_mentioning_issues keeps the pair and names the note.
// An issue's related merge requests (Issues::ReferencedMergeRequestsService) are those mentioning it and those
// closing it that the caller may read, in IssuableSorter's order; the note itself is hidden from whoever may not
// read its merge request (Note#cross_reference_not_visible_for?).
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import type { FoundMergeRequest, MergeRequestsService } from '../merge-requests/merge-requests.service.ts';
import { referenceTo } from '../merge-requests/rules.ts';
import type { FoundNoteable } from '../notes/noteable.ts';
import type { NotesService } from '../notes/notes.service.ts';
import type { FoundIssue } from './issues.service.ts';

/** What finds the issues a text references that its author may read (the markdown renderer, given by the container). */
export interface MentionReferences {
  readableIssuesIn(text: string, project: { fullPath: string; defaultBranch: string }, author: Actor): Promise<number[]>;
}

/** An issue a text mentions, with what the note's reference needs. */
export interface MentionedIssue {
  id: number;
  project_id: number;
  namespace_id: number;
}

/** The project a merge request belongs to (its target), as the note names it. */
export interface MentionSource {
  project: Pick<ProjectRow, 'id' | 'path' | 'namespace_id' | 'default_branch'>;
  namespace: Pick<NamespaceRow, 'full_path'>;
}

/** Natural order of references (VersionSorter): runs of digits compare as numbers. */
export function naturalCompare(a: string, b: string): number {
  const pa = a.match(/\d+|\D+/g) ?? [];
  const pb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    const nx = /^\d/.test(x);
    const ny = /^\d/.test(y);
    if (nx && ny) return Number(x) - Number(y) || (x < y ? -1 : 1);
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

export class IssueMentionsService {
  private refs: MentionReferences | null = null;

  constructor(
    readonly deps: FeatureDeps,
    private readonly notes: NotesService,
    private readonly mergeRequests: MergeRequestsService,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** The references finder (wired by the container). */
  useReferences(refs: MentionReferences): void {
    this.refs = refs;
  }

  /**
   * Read before the writer's transaction: the issues `texts` (written in the merge request's project) reference
   * that `author` may read, in the order written, each once.
   */
  async mentioned(author: Actor, from: MentionSource, texts: readonly (string | null | undefined)[]): Promise<MentionedIssue[]> {
    if (!this.refs || !author.user) return [];
    const project = { fullPath: `${from.namespace.full_path}/${from.project.path}`, defaultBranch: from.project.default_branch ?? 'main' };
    const ids: number[] = [];
    for (const text of texts) {
      if (!text) continue;
      for (const id of await this.refs.readableIssuesIn(text, project, author)) if (!ids.includes(id)) ids.push(id);
    }
    if (!ids.length) return [];
    const rows = await this.db
      .selectFrom('issues')
      .innerJoin('projects', 'projects.id', 'issues.project_id')
      .select(['issues.id', 'issues.project_id', 'projects.namespace_id'])
      .where('issues.id', 'in', ids)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * In the writer's transaction: the system note on each issue this merge request has not mentioned yet
   * (Mentionable#cross_reference_exists?), written as `authorId`.
   */
  async keep(trx: Kysely<Database>, mr: { id: number; iid: number }, from: MentionSource, issues: readonly MentionedIssue[], authorId: number): Promise<void> {
    for (const issue of issues) {
      const at = nowIso();
      const added = await trx
        .insertInto('merge_requests_mentioning_issues')
        .values({ issue_id: issue.id, merge_request_id: mr.id, note_id: null, created_at: at })
        .onConflict((oc) => oc.columns(['issue_id', 'merge_request_id']).doNothing())
        .returning('issue_id')
        .executeTakeFirst();
      if (!added) continue;
      const note = await this.notes.addSystemNote(trx, 'Issue', issue, authorId, `mentioned in merge request ${referenceFrom(mr, from, issue)}`);
      await trx
        .updateTable('merge_requests_mentioning_issues')
        .set({ note_id: note.id })
        .where('issue_id', '=', issue.id)
        .where('merge_request_id', '=', mr.id)
        .execute();
    }
  }

  /** The listener of notes written on merge requests: the issues a note mentions, as its merge request does. */
  readonly noteText = {
    read: (actor: Actor, f: FoundNoteable, body: string) => this.mentioned(actor, f, [body]),
    keep: (trx: Kysely<Database>, f: FoundNoteable, issues: MentionedIssue[], authorId: number) => this.keep(trx, f.target, f, issues, authorId),
  };

  /**
   * GET …/issues/:iid/related_merge_requests and the issue page: the merge requests mentioning or closing the
   * issue that `actor` may read — those of the issue's project first, then of its namespace, then the others,
   * each group in the natural order of their references from the issue's project (IssuableSorter).
   */
  async related(actor: Actor, f: FoundIssue): Promise<FoundMergeRequest[]> {
    const [mentioning, closing] = await Promise.all([
      this.db.selectFrom('merge_requests_mentioning_issues').select('merge_request_id').where('issue_id', '=', f.issue.id).execute(),
      this.db.selectFrom('merge_requests_closing_issues').select('merge_request_id').where('issue_id', '=', f.issue.id).execute(),
    ]);
    const ids = [...new Set([...mentioning, ...closing].map((r) => r.merge_request_id))];
    const found = await this.mergeRequests.readableByIds(actor, ids);
    const here = f.project;
    const group = (m: FoundMergeRequest) => (m.project.id === here.id ? 0 : m.project.namespace_id === here.namespace_id ? 1 : 2);
    const ref = (m: FoundMergeRequest) => referenceFrom(m.mr, m, { project_id: here.id, namespace_id: here.namespace_id });
    return found.sort((a, b) => group(a) - group(b) || naturalCompare(ref(a), ref(b)) || a.mr.id - b.mr.id);
  }

  /** The cross-reference notes of an issue that `actor` may not see: those of merge requests they may not read. */
  async hiddenNoteIds(actor: Actor, f: FoundNoteable): Promise<number[]> {
    const rows = await this.db
      .selectFrom('merge_requests_mentioning_issues')
      .select(['merge_request_id', 'note_id'])
      .where('issue_id', '=', f.target.id)
      .where('note_id', 'is not', null)
      .execute();
    if (!rows.length) return [];
    const readable = new Set((await this.mergeRequests.readableByIds(actor, [...new Set(rows.map((r) => r.merge_request_id))])).map((m) => m.mr.id));
    return rows.filter((r) => !readable.has(r.merge_request_id)).map((r) => r.note_id!);
  }
}

/** The merge request as the issue's project names it (MergeRequest#to_reference from the issue's project). */
function referenceFrom(mr: { iid: number }, from: MentionSource, issue: { project_id: number; namespace_id: number }): string {
  const target = { ...from.project, fullPath: `${from.namespace.full_path}/${from.project.path}` };
  return referenceTo(mr.iid, target, { project: { id: issue.project_id, namespace_id: issue.namespace_id } });
}
