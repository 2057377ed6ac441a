// Comments on commits (GitLab's notes with noteable_type 'Commit', Notes::CreateService for a commit):
// listed oldest first; created as a plain note, or as a note on a diff line (LegacyDiffNote) when
// `path`, `line` and `line_type` name a line of the commit's diff. Each new note writes GitLab's note
// hook payload to the outbox (project hooks and activity read it) in the row's transaction.
import crypto from 'node:crypto';
import type { SelectQueryBuilder } from 'kysely';
import type { CommitNoteRow, Database, UserRow } from '../../db/schema.ts';
import { diffBetween, emptyTree, type DiffLimits } from '../../git/diff.ts';
import type { Commit } from '../../git/objects.ts';
import { commitTitle, isoTime } from '../../git/objects.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import { projectHookAttrs, userHookAttrs } from '../core/hook-attrs.ts';
import { recordSystemEvent } from '../core/system-events.ts';
import type { RepoContext } from './context.ts';

export interface CommitNoteInput {
  note: string;
  path?: string;
  line?: number;
  line_type?: 'new' | 'old';
}

/** Every file of the diff (raw_diffs(limits: false)). */
const NO_LIMITS: DiffLimits = {
  enforce: false,
  maxFiles: Number.MAX_SAFE_INTEGER,
  maxLines: Number.MAX_SAFE_INTEGER,
  maxBytes: Number.MAX_SAFE_INTEGER,
  safeMaxFiles: Number.MAX_SAFE_INTEGER,
  safeMaxLines: Number.MAX_SAFE_INTEGER,
  safeMaxBytes: Number.MAX_SAFE_INTEGER,
  maxPatchBytes: Number.MAX_SAFE_INTEGER,
  expanded: true,
};

/** Gitlab::Git.diff_line_code */
export function diffLineCode(filePath: string, newPos: number, oldPos: number): string {
  return `${crypto.createHash('sha1').update(filePath).digest('hex')}_${oldPos}_${newPos}`;
}

/**
 * The line code of `line` in the patch of `path` in the commit's diff against its first parent: an
 * added line at that new line number (`new`) or a removed line at that old line number (`old`); null
 * when the diff has no such line.
 */
export async function findDiffLine(ctx: RepoContext, commit: Commit, path: string, line: number, lineType: 'new' | 'old'): Promise<string | null> {
  const from = commit.parents[0] ?? emptyTree(commit.sha);
  const diff = await diffBetween(ctx.repo, from, commit.sha, NO_LIMITS);
  for (const file of diff.files) {
    if (file.newPath !== path) continue;
    let oldPos = 0;
    let newPos = 0;
    for (const l of file.patch.split('\n')) {
      const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
      if (hunk) {
        oldPos = Number(hunk[1]);
        newPos = Number(hunk[2]);
        continue;
      }
      if (l.startsWith('+')) {
        if (lineType === 'new' && newPos === line) return diffLineCode(file.newPath, newPos, oldPos);
        newPos++;
      } else if (l.startsWith('-')) {
        if (lineType === 'old' && oldPos === line) return diffLineCode(file.newPath, newPos, oldPos);
        oldPos++;
      } else if (l.startsWith(' ')) {
        oldPos++;
        newPos++;
      }
    }
    return null;
  }
  return null;
}

/** Commit#hook_attrs (without the changed files) */
export function commitHookAttrs(commit: Commit, webUrl: string) {
  return {
    id: commit.sha,
    message: commit.message,
    title: commitTitle(commit.message),
    timestamp: isoTime(commit.committer.time, commit.committer.tz).replace(/\.\d{3}/, ''),
    url: `${webUrl}/-/commit/${commit.sha}`,
    author: { name: commit.author.name, email: commit.author.email },
  };
}

/** Gitlab::DataBuilder::Note for a note on a commit. */
function noteHookPayload(ctx: RepoContext, externalUrl: string, user: UserRow, row: CommitNoteRow, commit: Commit) {
  const project = projectHookAttrs(externalUrl, ctx.project, ctx.namespace);
  return {
    object_kind: 'note' as const,
    event_type: 'note',
    user: userHookAttrs(user),
    project_id: ctx.project.id,
    project,
    object_attributes: {
      attachment: null,
      author_id: row.author_id,
      change_position: null,
      commit_id: row.commit_id,
      created_at: row.created_at,
      discussion_id: crypto.createHash('sha1').update(`note-Commit-${row.commit_id}-${row.id}`).digest('hex'),
      id: row.id,
      line_code: row.line_code,
      note: row.note,
      noteable_id: null,
      noteable_type: 'Commit',
      original_position: null,
      position: null,
      project_id: row.project_id,
      resolved_at: null,
      resolved_by_id: null,
      resolved_by_push: null,
      st_diff: null,
      system: false,
      type: row.line_code ? 'LegacyDiffNote' : null,
      updated_at: row.updated_at,
      updated_by_id: null,
      description: row.note,
      url: `${ctx.webUrl}/-/commit/${row.commit_id}#note_${row.id}`,
      action: 'create',
    },
    repository: { name: project.name, url: project.url, description: project.description, homepage: project.homepage },
    commit: commitHookAttrs(commit, ctx.webUrl),
  };
}

export class CommitNotesService {
  constructor(private readonly deps: FeatureDeps) {}

  /** commit.notes.order_created_at_id_asc, as a query to paginate. */
  list(ctx: RepoContext, commitSha: string): SelectQueryBuilder<Database, 'commit_notes', CommitNoteRow> {
    return this.deps.db.kysely
      .selectFrom('commit_notes')
      .selectAll()
      .where('project_id', '=', ctx.project.id)
      .where('commit_id', '=', commitSha)
      .orderBy('created_at')
      .orderBy('id');
  }

  /** Notes::CreateService for a commit: the note, its line when found, the note event. */
  async create(ctx: RepoContext, actor: Actor, commit: Commit, input: CommitNoteInput): Promise<CommitNoteRow> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    // create_note: not in an archived project
    if (ctx.project.archived) throw Errors.forbidden();
    if (input.note.trim() === '') throw Errors.invalid({ note: ["can't be blank"] });
    let lineCode: string | null = null;
    if (input.path !== undefined && input.line !== undefined) {
      lineCode = await findDiffLine(ctx, commit, input.path, input.line, input.line_type ?? 'new');
    }
    const now = nowIso();
    return this.deps.db.kysely.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('commit_notes')
        .values({
          project_id: ctx.project.id,
          commit_id: commit.sha,
          author_id: user.id,
          note: input.note,
          path: lineCode ? input.path! : null,
          line: lineCode ? input.line! : null,
          line_type: lineCode ? (input.line_type ?? 'new') : null,
          line_code: lineCode,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordSystemEvent(trx, noteHookPayload(ctx, this.deps.externalUrl, user, row, commit), { authorId: user.id });
      await trx.updateTable('projects').set({ last_activity_at: now }).where('id', '=', ctx.project.id).execute();
      return row;
    });
  }
}
