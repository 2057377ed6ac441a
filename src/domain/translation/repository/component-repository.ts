// A component's repository operations (Weblate's Component.commit_pending / do_push / do_update /
// do_reset / do_cleanup / do_file_sync / do_file_scan and the repository status).
//
// The local-branch model. Each component has a bare mirror (ComponentVcs.mirrorDir) holding:
// - `refs/remotes/origin/*`: the upstream's branches as last fetched (a fetch never touches anything
//   else), `refs/remotes/origin/<branch>` being "the remote" of the status;
// - `refs/heads/<branch>` (HEAD points at it): the local branch — the upstream plus the translation
//   commits made here, Weblate's working-copy branch. It is what the git export serves.
// `components.head` is the local branch's head: what scans read and what files render from. Pending
// edits live in the database (units.pending) until committed onto the local branch; `needs_commit` is
// "a pending unit exists", `needs_push` "local is ahead of the remote" (outgoing_commits), `needs_merge`
// "the remote has commits local lacks" (missing_commits).
//
// Commits are made without a working copy (git/commit-builder.ts), the author is the translator and
// the committer the server. Pull commits pending edits first, fetches, then fast-forwards, rebases
// (merge_style rebase, Weblate's default) or merges local commits onto the remote; a conflict leaves
// the local branch as it was and records 23/22 (merge_failure). Push commits pending and brings the
// remote in first, then pushes the local head to `push` (or back to the origin) and `push_branch` (or
// the branch): into a project of this server through its repository service (receive-pack: journal,
// branch protection for the acting user, push events), elsewhere with git under the outbound rules.
// vcs=gitlab (Weblate's "GitLab merge request") pushes to push_branch, or weblate-<project>-<component>,
// and into a project of this server opens a merge request from it into the branch (kept while open).
//
// Every operation takes the component's repository lock (lock.ts): 423 when it stays held.
import fs from 'node:fs';
import path from 'node:path';
import type { Transaction } from 'kysely';
import type { ComponentRow, Database, TranslationRow, UnitRow } from '../../../db/schema.ts';
import { commitFiles as buildCommit, CommitActionError, type FileAction, type Person } from '../../../git/commit-builder.ts';
import { GitError } from '../../../git/command.ts';
import { MergeConflict, mergeBase, mergeCommit, RebaseConflict, rebase } from '../../../git/merge.ts';
import { commitTitle, isoTime } from '../../../git/objects.ts';
import type { Repository } from '../../../git/repository.ts';
import { DomainError, Errors, platformBody } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import { scanComponent, ScanError } from '../components/scan.ts';
import { REMOTE_PREFIX, RepoError, type RepoSource } from '../components/vcs.ts';
import type { TranslationDeps } from '../deps.ts';
import { percent, refreshTranslationStats } from '../stats/stats.ts';
import { BatchCommits } from './batch-commit.ts';
import { LockTimeout, TimedLocks } from './lock.ts';
import { pushToProject } from './platform-push.ts';
import { defineSweep } from '../../../jobs/registry.ts';

/** Who a commit is by (the same shape as units/edits.ts's EditAuthor). */
export interface CommitAuthor {
  userId: number | null;
  name: string;
  email: string;
}

export interface OperationResult {
  result: boolean;
  detail?: string;
}

export type RepositoryOperation =
  | 'commit'
  | 'pull'
  | 'pull-rebase'
  | 'pull-merge'
  | 'pull-merge-noff'
  | 'push'
  | 'reset'
  | 'reset-keep'
  | 'cleanup'
  | 'file-sync'
  | 'file-scan';

export const OPERATIONS: readonly RepositoryOperation[] = [
  'commit',
  'pull',
  'pull-rebase',
  'pull-merge',
  'pull-merge-noff',
  'push',
  'reset',
  'reset-keep',
  'cleanup',
  'file-sync',
  'file-scan',
];

/** how often the worker's round looks for pending edits that are due */
const DUE_CHECK_INTERVAL_MS = 60_000;

/** Weblate's author of edits nobody signed */
const ANONYMOUS_AUTHOR: CommitAuthor = { userId: null, name: 'Anonymous', email: 'noreply@weblate.org' };

export interface CommitSummary {
  revision: string;
  shortrevision: string;
  author: string;
  author_name: string;
  author_email: string;
  authordate: string;
  commit: string;
  commit_name: string;
  commit_email: string;
  commitdate: string;
  message: string;
  summary: string;
}

export interface RepositoryStatus {
  needs_commit: boolean;
  needs_merge: boolean;
  needs_push: boolean;
  remote_commit: CommitSummary | null;
  weblate_commit: CommitSummary | null;
  status: string;
  outgoing_commits: number;
  missing_commits: number;
  pending_units: { total: number; errors_skipped: number; commit_policy_skipped: number; eligible_for_commit: number };
}

type Trx = Transaction<Database>;

export class ComponentRepository {
  private readonly locks = new TimedLocks();
  /** pending edits older than their component's commit age are committed (checked at most every DUE_CHECK_INTERVAL_MS) */
  readonly commits = defineSweep({ name: 'translation commits', everyMs: 0, run: () => this.commitDue() });
  /** how long an operation waits for the repository lock before answering 423 (Weblate: a few seconds) */
  lockTimeoutMs = 10_000;
  private lastDueCheck = 0;

  constructor(private readonly deps: TranslationDeps) {}

  // ---- the lock ----------------------------------------------------------------------------------

  /** Runs `fn` holding the component's repository lock; 423 (DomainError) when it cannot be taken. */
  async locked<T>(component: ComponentRow, fn: (component: ComponentRow) => Promise<T>): Promise<T> {
    const scope = await this.scopeOf(component);
    try {
      return await this.locks.run(String(component.id), scope, this.lockTimeoutMs, async () => {
        const fresh = await this.reload(component);
        await this.ensureMirror(fresh);
        return fn(fresh);
      });
    } catch (e) {
      if (e instanceof LockTimeout) throw Errors.locked(e.scope);
      // another process moved the branch meanwhile (update-ref's compare-and-swap): the lock of a
      // process we could not see; nothing of ours was recorded
      if (e instanceof GitError && /cannot lock ref|but expected/.test(e.stderr || e.message)) throw Errors.locked(scope);
      throw e;
    }
  }

  /** whether an operation holds the component's repository lock now */
  isLocked(component: ComponentRow): boolean {
    return this.locks.isHeld(String(component.id));
  }

  /**
   * A mirror that is gone (a disk replaced, a directory removed by hand) is fetched again from the
   * source: the local branch starts at the upstream head (local commits went with the mirror; pending
   * edits are in the database and stay). RepoError when the source cannot be fetched.
   */
  private async ensureMirror(component: ComponentRow): Promise<void> {
    const dir = this.deps.vcs.mirrorDir(component.id);
    if (fs.existsSync(path.join(dir, 'HEAD'))) return;
    this.deps.log.warn({ component: component.id }, 'a translation mirror was missing: fetching it again');
    this.deps.repos.pool.drop(dir);
    await this.deps.vcs.fetch(dir, await this.sourceOf(component), component.branch, { reset: true });
  }

  private mirrorExists(component: ComponentRow): boolean {
    return fs.existsSync(path.join(this.deps.vcs.mirrorDir(component.id), 'HEAD'));
  }

  private async scopeOf(component: ComponentRow): Promise<string> {
    const p = await this.deps.db.kysely.selectFrom('translation_projects').select('slug').where('id', '=', component.project_id).executeTakeFirst();
    return `${p?.slug ?? ''}/${component.slug}`;
  }

  private async reload(component: ComponentRow): Promise<ComponentRow> {
    return (await this.deps.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirst()) ?? component;
  }

  // ---- git helpers -------------------------------------------------------------------------------

  private mirror(component: ComponentRow): Repository {
    return this.deps.vcs.mirror(component.id);
  }

  private async rev(repo: Repository, ref: string): Promise<string | null> {
    const r = await repo.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { okCodes: [0, 1, 128] });
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /** the local branch's head (components.head when the ref is missing: a mirror of before the local-branch model) */
  private async localHead(component: ComponentRow): Promise<string> {
    const repo = this.mirror(component);
    const head = await this.rev(repo, `refs/heads/${component.branch}`);
    if (head) return head;
    if (component.head) {
      await repo.updateRef(`refs/heads/${component.branch}`, component.head);
      return component.head;
    }
    throw new RepoError('The component has no repository yet.');
  }

  /** the upstream head as last fetched (the local head when nothing was fetched into refs/remotes yet) */
  private async remoteHead(component: ComponentRow, branch = component.branch): Promise<string | null> {
    return this.rev(this.mirror(component), `${REMOTE_PREFIX}${branch}`);
  }

  private async count(repo: Repository, range: string): Promise<number> {
    const r = await repo.run(['rev-list', '--count', range]);
    return Number(r.stdout.toString().trim()) || 0;
  }

  private async isAncestor(repo: Repository, a: string, b: string): Promise<boolean> {
    return (await repo.run(['merge-base', '--is-ancestor', a, b], { okCodes: [0, 1] })).code === 0;
  }

  /** the server as committer (Weblate's DEFAULT_COMMITER_NAME / _EMAIL) */
  private committer(): Person {
    let host = 'localhost';
    try {
      host = new URL(this.deps.externalUrl).hostname || host;
    } catch {
      // keep localhost
    }
    return { name: 'Hearth', email: `noreply@${host}` };
  }

  /** Where the component's strings come from, for fetching (no actor: the worker and follow-ups). */
  private async sourceOf(component: ComponentRow, repoUrl = component.repo): Promise<RepoSource> {
    if (component.platform_project_id !== null && repoUrl === component.repo) {
      const project = await this.deps.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id).executeTakeFirst();
      if (!project) throw new RepoError('The repository was not found.');
      return { kind: 'platform', projectId: project.id, dir: this.deps.repos.pathOf(project), defaultBranch: project.default_branch };
    }
    // URLs are checked against the outbound rules; a local path was allowed when an administrator set it
    return this.deps.vcs.source(SYSTEM_ACTOR, repoUrl);
  }

  // ---- commits -----------------------------------------------------------------------------------

  /** a repository path as given by a caller: relative, inside the tree */
  private checkPath(p: string): void {
    // eslint-disable-next-line no-control-regex
    const bad =
      !p ||
      p.startsWith('/') ||
      p.startsWith('-') ||
      /[\x00-\x1f\x7f\\]/.test(p) ||
      p.split('/').some((s) => s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git');
    if (bad) throw Errors.invalid({ filename: ['Enter a relative path inside the repository.'] });
  }

  /**
   * One commit on the local branch from `parent` writing the files (content null: removed; a removed
   * file that is not there is skipped). Returns the new head, or `parent` when nothing changed.
   */
  private async commitOnBranch(
    component: ComponentRow,
    parent: string,
    files: { path: string; content: Buffer | null }[],
    author: CommitAuthor,
    message: string,
  ): Promise<string> {
    const repo = this.mirror(component);
    const actions: FileAction[] = [];
    for (const f of files) {
      this.checkPath(f.path);
      const entry = await repo.entryAt(parent, f.path);
      if (f.content === null) {
        if (entry) actions.push({ action: 'delete', file_path: f.path });
        continue;
      }
      if (entry && entry.type === 'blob') {
        const current = await repo.read(entry.sha);
        if (current?.content && current.content.equals(f.content)) continue;
      }
      actions.push({ action: entry ? 'update' : 'create', file_path: f.path, content: f.content });
    }
    if (!actions.length) return parent;
    const now = Math.floor(Date.now() / 1000);
    try {
      return await buildCommit(repo, {
        branch: component.branch,
        parent,
        expectedOld: parent,
        actions,
        message,
        author: { name: author.name, email: author.email, time: now },
        committer: { ...this.committer(), time: now },
      });
    } catch (e) {
      if (e instanceof CommitActionError) throw Errors.invalid({ filename: [e.message] });
      throw e;
    }
  }

  /**
   * A commit on the component's local branch writing/removing files, then the rows follow (a rescan of
   * what changed, in `opts.trx` when given). Takes the repository lock. Returns the commit's SHA (the
   * head as it was when nothing changed). A rescan that fails puts the branch back.
   */
  async commitFiles(
    component: ComponentRow,
    files: { path: string; content: Buffer | null }[],
    author: CommitAuthor,
    message: string,
    opts: { trx?: Trx } = {},
  ): Promise<string> {
    return this.locked(component, async (fresh) => {
      const parent = await this.localHead(fresh);
      const sha = await this.commitOnBranch(fresh, parent, files, author, message);
      if (sha === parent) return sha;
      try {
        await scanComponent(this.deps.db.kysely, this.deps.vcs, fresh, sha, { userId: author.userId, trx: opts.trx });
      } catch (e) {
        await this.mirror(fresh).updateRef(`refs/heads/${fresh.branch}`, parent, sha);
        if (e instanceof ScanError) throw Errors.invalid({ [e.field]: [e.message] });
        throw e;
      }
      return sha;
    });
  }

  /** who a pending unit's edit is by */
  private async authorsOf(units: UnitRow[], fallback: CommitAuthor = ANONYMOUS_AUTHOR): Promise<Map<number, CommitAuthor>> {
    const ids = [...new Set(units.map((u) => u.pending_author_id).filter((id): id is number => id !== null))];
    const users = ids.length
      ? await this.deps.db.kysely.selectFrom('users').select(['id', 'name', 'email', 'commit_email']).where('id', 'in', ids).execute()
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    const out = new Map<number, CommitAuthor>();
    for (const u of units) {
      const parsed = /^(.*?)\s*<([^<>]*)>\s*$/.exec(u.pending_author ?? '');
      const user = u.pending_author_id !== null ? byId.get(u.pending_author_id) : undefined;
      if (parsed && parsed[2]) out.set(u.id, { userId: u.pending_author_id, name: parsed[1] || parsed[2], email: parsed[2] });
      else if (user) out.set(u.id, { userId: user.id, name: user.name, email: user.commit_email || user.email });
      else out.set(u.id, fallback);
    }
    return out;
  }

  /** Weblate's commit message templates: {{ name }} and {{ stats.name }} (unknown names are empty) */
  private async message(template: string, component: ComponentRow, translation: TranslationRow | null, author?: CommitAuthor): Promise<string> {
    const project = await this.deps.db.kysely.selectFrom('translation_projects').selectAll().where('id', '=', component.project_id).executeTakeFirstOrThrow();
    const language = translation
      ? await this.deps.db.kysely.selectFrom('languages').select(['code', 'name']).where('id', '=', translation.language_id).executeTakeFirst()
      : undefined;
    const t = translation ? await this.deps.db.kysely.selectFrom('translations').selectAll().where('id', '=', translation.id).executeTakeFirst() : undefined;
    const base = this.deps.externalUrl.replace(/\/+$/, '');
    const vars: Record<string, string> = {
      project_name: project.name,
      project_slug: project.slug,
      component_name: component.name,
      component_slug: component.slug,
      component_remote_branch: component.branch,
      language_code: t?.language_code ?? language?.code ?? '',
      language_name: language?.name ?? '',
      author: author ? `${author.name} <${author.email}>` : '',
      url: translation ? `${base}/translate/${project.slug}/${component.slug}/${language?.code ?? ''}/` : `${base}/projects/${project.slug}/${component.slug}/`,
      'stats.all': String(t?.total ?? 0),
      'stats.total': String(t?.total ?? 0),
      'stats.translated': String(t?.translated ?? 0),
      'stats.translated_percent': percent(t?.translated ?? 0, t?.total ?? 0, true).toFixed(1),
      'stats.fuzzy': String(t?.fuzzy ?? 0),
      'stats.fuzzy_percent': percent(t?.fuzzy ?? 0, t?.total ?? 0).toFixed(1),
      'stats.approved': String(t?.approved ?? 0),
      'stats.approved_percent': percent(t?.approved ?? 0, t?.total ?? 0).toFixed(1),
    };
    return template.replace(/\{\{\s*([a-z_.]+)\s*\}\}/g, (_m, name: string) => vars[name] ?? '');
  }

  /**
   * Commits every pending edit of the component: per translation, one commit per author (in the
   * order their edits came), the file rendered with that author's units and the PO header updated,
   * the component's commit message. The rows then say what the files say (revision, head, pending
   * cleared) without reading them again. Takes the repository lock.
   */
  async commitPending(actor: Actor | null, component: ComponentRow, opts: { translationId?: number } = {}): Promise<OperationResult> {
    return this.locked(component, (fresh) => this.commitPendingLocked(actor, fresh, opts.translationId));
  }

  private async commitPendingLocked(actor: Actor | null, component: ComponentRow, translationId?: number, fallback?: CommitAuthor): Promise<OperationResult> {
    const started = nowIso();
    let pendingQuery = this.deps.db.kysely.selectFrom('units').selectAll().where('component_id', '=', component.id).where('pending', '=', 1);
    if (translationId !== undefined) pendingQuery = pendingQuery.where('translation_id', '=', translationId);
    const units = await pendingQuery.orderBy('translation_id').orderBy('last_updated').orderBy('id').execute();
    if (!units.length) return { result: true };
    const translations = await this.deps.db.kysely
      .selectFrom('translations')
      .selectAll()
      .where('id', 'in', [...new Set(units.map((u) => u.translation_id))])
      .orderBy('id')
      .execute();
    const byTranslation = new Map<number, UnitRow[]>();
    for (const u of units) {
      const list = byTranslation.get(u.translation_id) ?? [];
      list.push(u);
      byTranslation.set(u.translation_id, list);
    }
    const authors = await this.authorsOf(units, fallback);
    const repo = this.mirror(component);
    const base = await this.localHead(component);
    // every commit is made in memory and written at the end (batch-commit.ts); each translation's
    // file is rendered from the head as it was, with the units of its authors so far (the same bytes as
    // rendering after each commit: other translations' commits do not touch this file)
    const batch = new BatchCommits(repo);
    let head = base;
    let tree = await batch.treeOf(base);
    const committer = { ...this.committer(), time: Math.floor(Date.now() / 1000) };
    const committed: { translation: TranslationRow; blob: string | null }[] = [];
    const changes: { translation: TranslationRow; author: CommitAuthor; sha: string }[] = [];
    const failures: string[] = [];
    const skipped = new Set<number>();
    for (const t of translations) {
      const list = byTranslation.get(t.id)!;
      // the source of a bilingual component has no file of its own: its edits (explanations, flags) stay in the database
      if (!t.filename) {
        committed.push({ translation: t, blob: null });
        continue;
      }
      const groups = new Map<string, { author: CommitAuthor; units: UnitRow[] }>();
      for (const u of list) {
        const a = authors.get(u.id)!;
        const key = `${a.name}\0${a.email}`;
        const g = groups.get(key) ?? { author: a, units: [] };
        g.units.push(u);
        groups.set(key, g);
      }
      const before = { head, tree, changes: changes.length };
      try {
        const soFar: UnitRow[] = [];
        for (const g of groups.values()) {
          soFar.push(...g.units);
          const bytes = await this.deps.writes.files.render({ ...component, head: base }, t, { units: [...soFar], author: g.author, now: new Date() });
          const next = await batch.withFile(tree, t.filename, bytes);
          if (!next || next === tree) continue;
          const message = await this.message(component.commit_message, component, t, g.author);
          head = batch.commit(next, [head], { name: g.author.name, email: g.author.email, time: committer.time }, committer, message);
          tree = next;
          changes.push({ translation: t, author: g.author, sha: head });
        }
        committed.push({ translation: t, blob: (await batch.blobAt(tree, t.filename))?.sha ?? null });
      } catch (e) {
        // this translation's edits stay pending; the others are committed
        ({ head, tree } = before);
        changes.length = before.changes;
        skipped.add(t.id);
        failures.push(`Could not commit ${t.filename}: ${(e as Error).message}`);
        this.deps.log.warn({ err: e, translation: t.id }, 'pending translations could not be committed');
      }
    }
    await batch.write();
    if (head !== base) await repo.updateRef(`refs/heads/${component.branch}`, head, base);
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      const ids = units.filter((u) => !skipped.has(u.translation_id)).map((u) => u.id);
      for (let i = 0; i < ids.length; i += 500) {
        await trx
          .updateTable('units')
          .set({ pending: 0, pending_author: '', pending_author_id: null })
          .where('id', 'in', ids.slice(i, i + 500))
          .where('last_updated', '<=', started)
          .execute();
      }
      for (const c of committed) {
        if (c.blob && c.blob !== c.translation.revision)
          await trx.updateTable('translations').set({ revision: c.blob }).where('id', '=', c.translation.id).execute();
      }
      await trx.updateTable('components').set({ head }).where('id', '=', component.id).execute();
      await recordChange(
        trx,
        changes.map((ch) => ({
          projectId: component.project_id,
          componentId: component.id,
          translationId: ch.translation.id,
          languageId: ch.translation.language_id,
          userId: actor?.user?.id ?? ch.author.userId,
          authorId: ch.author.userId,
          action: ACTION.COMMIT,
          target: ch.sha,
        })),
      );
    });
    if (failures.length) return { result: false, detail: failures.join('\n') };
    if (component.push_on_commit && actor && changes.length) {
      const pushed = await this.pushLocked(actor, { ...component, head }, false);
      if (!pushed.result) return pushed;
    }
    return { result: true };
  }

  // ---- pull --------------------------------------------------------------------------------------

  /** fetch upstream, commit pending first, then rebase/merge local commits; records 20/21 or 22/23 */
  async pull(actor: Actor | null, component: ComponentRow, method?: 'rebase' | 'merge' | 'merge_noff'): Promise<OperationResult> {
    return this.locked(component, (fresh) => this.pullLocked(actor, fresh, method));
  }

  private async fetchUpstream(component: ComponentRow): Promise<string> {
    const source = await this.sourceOf(component);
    const dir = this.deps.vcs.mirrorDir(component.id);
    await this.deps.vcs.fetchRemote(dir, source, component.branch);
    this.mirror(component).touchRefs();
    const remote = await this.remoteHead(component);
    if (!remote) throw new RepoError(`The branch ${component.branch} was not found in the repository.`);
    return remote;
  }

  private async pullLocked(actor: Actor | null, component: ComponentRow, method?: 'rebase' | 'merge' | 'merge_noff'): Promise<OperationResult> {
    const committed = await this.commitPendingLocked(actor, { ...component, push_on_commit: 0 });
    if (!committed.result) return committed;
    component = await this.reload(component);
    let remote: string;
    try {
      remote = await this.fetchUpstream(component);
    } catch (e) {
      if (e instanceof RepoError) return { result: false, detail: e.message };
      throw e;
    }
    return this.mergeRemote(actor, component, remote, method ?? (component.merge_style as 'rebase' | 'merge' | 'merge_noff'));
  }

  /** brings `remote` into the local branch (fast-forward, rebase or merge) and rescans */
  private async mergeRemote(actor: Actor | null, component: ComponentRow, remote: string, style: 'rebase' | 'merge' | 'merge_noff'): Promise<OperationResult> {
    const repo = this.mirror(component);
    const local = await this.localHead(component);
    if (local === remote || (await this.isAncestor(repo, remote, local))) {
      // nothing upstream that local lacks; the rows may still be behind a head moved elsewhere
      if (component.head !== local) return this.rescan(actor, component, local, local, null, { from: remote });
      return { result: true };
    }
    const rebasing = style === 'rebase';
    let next: string;
    const ff = await this.isAncestor(repo, local, remote);
    try {
      if (ff && style !== 'merge_noff') next = remote;
      else if (rebasing) {
        const base = await mergeBase(repo, local, remote);
        if (!base) throw new MergeConflict(['unrelated histories']);
        next = await rebase(repo, { ontoSha: remote, baseSha: base, headSha: local, committer: this.committer() });
      } else {
        const message = await this.message(component.merge_message, component, null);
        next = await mergeCommit(repo, { targetSha: local, sourceSha: remote, message, author: this.committer() });
      }
    } catch (e) {
      if (e instanceof MergeConflict || e instanceof RebaseConflict || e instanceof GitError) {
        const files = e instanceof GitError ? [] : e.conflicts;
        const error = rebasing
          ? `Could not rebase local branch onto ${REMOTE_PREFIX.slice('refs/remotes/'.length)}${component.branch}: conflict in ${files.join(', ') || 'the history'}`
          : `Could not merge ${REMOTE_PREFIX.slice('refs/remotes/'.length)}${component.branch} into the local branch: conflict in ${files.join(', ') || 'the history'}`;
        await this.record(component, actor, rebasing ? ACTION.FAILED_REBASE : ACTION.FAILED_MERGE, error, actor?.user?.id ?? null);
        return { result: false, detail: error };
      }
      throw e;
    }
    await repo.updateRef(`refs/heads/${component.branch}`, next, local);
    return this.rescan(actor, component, next, local, rebasing || (ff && style !== 'merge_noff') ? ACTION.REBASE : ACTION.MERGE, { from: remote });
  }

  /** the user whose e-mail a commit's committer carries (the author of a repository update's change) */
  private async committerUser(sha: string, repo: Repository): Promise<number | null> {
    const commit = await repo.commit(sha);
    if (!commit) return null;
    const email = commit.committer.email.toLowerCase();
    const row = await this.deps.db.kysely
      .selectFrom('users')
      .select('id')
      .where((eb) => eb.or([eb(eb.fn('lower', ['email']), '=', email), eb(eb.fn('lower', ['commit_email']), '=', email)]))
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /**
   * The rows follow the local head `next`; the branch goes back to `previous` when the files do not
   * parse. A repository update (`from`: the upstream commit brought in) is authored by that commit's
   * committer (the user with that e-mail, else nobody), not by whoever asked for the pull.
   */
  private async rescan(
    actor: Actor | null,
    component: ComponentRow,
    next: string,
    previous: string,
    action: number | null,
    opts: { full?: boolean; from?: string } = {},
  ): Promise<OperationResult> {
    const repo = this.mirror(component);
    const full = Boolean(opts.full);
    const by = opts.from ? await this.committerUser(opts.from, repo) : (actor?.user?.id ?? null);
    try {
      await this.deps.db.kysely.transaction().execute(async (trx) => {
        if (action !== null) {
          await recordChange(trx, {
            projectId: component.project_id,
            componentId: component.id,
            userId: actor?.user?.id ?? by,
            authorId: by,
            action,
            target: next,
          });
        }
        await scanComponent(trx, this.deps.vcs, component, next, { userId: by, full, trx });
      });
    } catch (e) {
      if (e instanceof ScanError || e instanceof RepoError) {
        if (next !== previous) await repo.updateRef(`refs/heads/${component.branch}`, previous, next);
        await this.record(component, actor, ACTION.PARSE_ERROR, e.message, actor?.user?.id ?? null);
        return { result: false, detail: e.message };
      }
      throw e;
    }
    return { result: true };
  }

  private async record(component: ComponentRow, actor: Actor | null, action: number, target: string, authorId: number | null, trx?: Trx): Promise<void> {
    await recordChange(trx ?? this.deps.db.kysely, {
      projectId: component.project_id,
      componentId: component.id,
      userId: actor?.user?.id ?? null,
      authorId,
      action,
      target,
    });
  }

  // ---- push --------------------------------------------------------------------------------------

  /** commit pending, bring the remote in, push the local head where `push`/`push_branch` say; records 18 or 28 */
  async push(actor: Actor, component: ComponentRow): Promise<OperationResult> {
    return this.locked(component, async (fresh) => {
      const committed = await this.commitPendingLocked(actor, { ...fresh, push_on_commit: 0 });
      if (!committed.result) return committed;
      return this.pushLocked(actor, await this.reload(fresh), true);
    });
  }

  private async pushLocked(actor: Actor, component: ComponentRow, update: boolean): Promise<OperationResult> {
    const repo = this.mirror(component);
    if (update) {
      try {
        const remote = await this.fetchUpstream(component);
        const pulled = await this.mergeRemote(actor, component, remote, component.merge_style as 'rebase' | 'merge' | 'merge_noff');
        if (!pulled.result) return pulled;
        component = await this.reload(component);
      } catch (e) {
        if (!(e instanceof RepoError)) throw e;
        await this.record(component, actor, ACTION.FAILED_PUSH, e.message, actor.user?.id ?? null);
        return { result: false, detail: e.message };
      }
    }
    const local = await this.localHead(component);
    const branch = await this.pushBranchOf(component);
    const pushed = await this.rev(repo, `${REMOTE_PREFIX}${branch}`);
    if (pushed === local) return { result: true };
    let target: number | null = null;
    try {
      const source = component.push ? await this.deps.vcs.source(actor, component.push) : await this.sourceOf(component);
      if (source.kind === 'platform') await pushToProject(this.deps, actor, source.projectId, repo, local, branch, false);
      else await this.deps.vcs.pushTo(this.deps.vcs.mirrorDir(component.id), source, local, branch, false);
      if (source.kind === 'platform') target = source.projectId;
    } catch (e) {
      if (!(e instanceof RepoError)) throw e;
      const error = e.message.startsWith('Could not push') ? e.message : `Could not push the repository: ${e.message}`;
      await this.record(component, actor, ACTION.FAILED_PUSH, error, actor.user?.id ?? null);
      return { result: false, detail: error };
    }
    // what git push does to the remote-tracking ref of the branch it pushed to (a push URL is the
    // origin's pushurl, as Weblate configures it); the next fetch says what the origin really has
    await repo.updateRef(`${REMOTE_PREFIX}${branch}`, local);
    await this.record(component, actor, ACTION.PUSH, local, actor.user?.id ?? null);
    if (component.vcs === 'gitlab' && target !== null && branch !== component.branch) return this.openMergeRequest(actor, component, target, branch);
    return { result: true };
  }

  /** The branch pushes go to: push_branch, else (vcs=gitlab) Weblate's fork branch name weblate-<project>-<component>, else the branch. */
  private async pushBranchOf(component: ComponentRow): Promise<string> {
    if (component.push_branch) return component.push_branch;
    if (component.vcs !== 'gitlab') return component.branch;
    const project = await this.deps.db.kysely.selectFrom('translation_projects').select('slug').where('id', '=', component.project_id).executeTakeFirst();
    return `weblate-${project?.slug ?? component.project_id}-${component.slug}`;
  }

  /**
   * vcs=gitlab ("GitLab merge request") on a project of this server: after the push to the push branch,
   * a merge request from it into `branch` is opened as the pushing user — or, when one is open already
   * (the forge's 409), kept as it is: the push updated it. A refusal is the push's failure (28).
   */
  private async openMergeRequest(actor: Actor, component: ComponentRow, projectId: number, branch: string): Promise<OperationResult> {
    const service = this.deps.mergeRequests;
    if (!service) return { result: true };
    const project = await this.deps.db.kysely
      .selectFrom('translation_projects')
      .select(['name', 'slug'])
      .where('id', '=', component.project_id)
      .executeTakeFirst();
    const site = this.deps.config.externalUrl.replace(/\/+$/, '');
    try {
      await service.create(actor, String(projectId), {
        title: `Translations update from ${site.replace(/^https?:\/\//, '')}`,
        source_branch: branch,
        target_branch: component.branch,
        description: `Translations update from ${site} for ${project?.name ?? ''}/${component.name}.`,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      if (e.status === 409) return { result: true };
      // the forge's own answer (e.g. {"message": "403 Forbidden"}), as its API would give it
      const body = platformBody(e).body as { message?: unknown; error?: unknown };
      const said = body.message ?? body.error ?? e.message;
      const error = `Could not open the merge request: ${typeof said === 'string' ? said : JSON.stringify(said)}`;
      await this.record(component, actor, ACTION.FAILED_PUSH, error, actor.user?.id ?? null);
      return { result: false, detail: error };
    }
    return { result: true };
  }

  // ---- reset, cleanup, file-sync, file-scan ------------------------------------------------------

  /**
   * reset: the local branch goes back to the remote (fetched first), local commits and pending edits
   * are dropped and the rows read again (19). reset-keep: the same, then the translations the rows
   * held and the files no longer have are kept as pending edits (Weblate's "reset and reapply").
   */
  async reset(actor: Actor, component: ComponentRow, keep: boolean): Promise<OperationResult> {
    return this.locked(component, async (fresh) => {
      let remote: string;
      try {
        remote = await this.fetchUpstream(fresh);
      } catch (e) {
        if (e instanceof RepoError) return { result: false, detail: e.message };
        throw e;
      }
      const repo = this.mirror(fresh);
      const local = await this.localHead(fresh);
      const kept = keep
        ? await this.deps.db.kysely
            .selectFrom('units')
            .innerJoin('translations', 'translations.id', 'units.translation_id')
            .select(['units.id_hash', 'units.translation_id', 'units.target', 'units.state', 'units.pending_author', 'units.pending_author_id'])
            .where('units.component_id', '=', fresh.id)
            .where('translations.is_source', '=', 0)
            .where('units.state', '<', 100)
            .execute()
        : [];
      await repo.updateRef(`refs/heads/${fresh.branch}`, remote, local);
      try {
        await this.deps.db.kysely.transaction().execute(async (trx) => {
          await trx
            .updateTable('units')
            .set({ pending: 0, pending_author: '', pending_author_id: null })
            .where('component_id', '=', fresh.id)
            .where('pending', '=', 1)
            .execute();
          await recordChange(trx, {
            projectId: fresh.project_id,
            componentId: fresh.id,
            userId: actor.user?.id ?? null,
            authorId: actor.user?.id ?? null,
            action: ACTION.RESET,
            target: remote,
          });
          await scanComponent(trx, this.deps.vcs, fresh, remote, { userId: actor.user?.id ?? null, full: true, trx });
          if (!kept.length) return;
          const now = nowIso();
          const touched = new Set<number>();
          const current = await trx
            .selectFrom('units')
            .select(['id', 'id_hash', 'translation_id', 'target', 'state'])
            .where('component_id', '=', fresh.id)
            .execute();
          const byKey = new Map(current.map((u) => [`${u.translation_id}\0${u.id_hash}`, u]));
          for (const k of kept) {
            const u = byKey.get(`${k.translation_id}\0${k.id_hash}`);
            if (!u || (u.target === k.target && u.state === k.state)) continue;
            await trx
              .updateTable('units')
              .set({
                target: k.target,
                state: k.state,
                pending: 1,
                pending_author: k.pending_author,
                pending_author_id: k.pending_author_id,
                last_updated: now,
              })
              .where('id', '=', u.id)
              .execute();
            touched.add(u.translation_id);
          }
          for (const id of touched) await refreshTranslationStats(trx as never, id);
        });
      } catch (e) {
        await repo.updateRef(`refs/heads/${fresh.branch}`, local, remote);
        if (e instanceof ScanError) return { result: false, detail: e.message };
        throw e;
      }
      return { result: true };
    });
  }

  /** cleanup: no working copy to clean; temporary index files left by a killed process go, and loose objects are packed (88) */
  async cleanup(actor: Actor, component: ComponentRow): Promise<OperationResult> {
    return this.locked(component, async (fresh) => {
      const repo = this.mirror(fresh);
      for (const name of fs.readdirSync(repo.gitDir)) if (/^hearth-index-/.test(name)) fs.rmSync(path.join(repo.gitDir, name), { force: true });
      await repo.run(['gc', '--quiet', '--auto']);
      await this.record(fresh, actor, ACTION.REPO_CLEANUP, '', actor.user?.id ?? null);
      return { result: true };
    });
  }

  /**
   * file-sync (Weblate's do_file_sync): every string of every translation file marked pending and
   * committed — the files written again from the rows (a commit per translation where bytes change,
   * edits nobody signed attributed to the caller); 83 with the new head.
   */
  async fileSync(actor: Actor, component: ComponentRow): Promise<OperationResult> {
    return this.locked(component, async (fresh) => {
      const ids = await this.deps.db.kysely
        .selectFrom('translations')
        .select('id')
        .where('component_id', '=', fresh.id)
        .where('filename', '!=', '')
        .where('is_source', '=', 0)
        .where('is_template', '=', 0)
        .execute();
      if (ids.length)
        await this.deps.db.kysely
          .updateTable('units')
          .set({ pending: 1 })
          .where(
            'translation_id',
            'in',
            ids.map((r) => r.id),
          )
          .where('state', '<', 100)
          .execute();
      const committed = await this.commitPendingLocked(actor, fresh, undefined, await this.actorAuthor(actor));
      const head = await this.localHead(fresh);
      await this.record(fresh, actor, ACTION.FORCE_SYNC, head, actor.user?.id ?? null);
      return committed;
    });
  }

  /** file-scan: every file read again at the local head (84) */
  async fileScan(actor: Actor, component: ComponentRow): Promise<OperationResult> {
    return this.locked(component, async (fresh) => {
      const head = await this.localHead(fresh);
      await this.record(fresh, actor, ACTION.FORCE_SCAN, head, actor.user?.id ?? null);
      return this.rescan(actor, fresh, head, head, null, { full: true });
    });
  }

  private async actorAuthor(actor: Actor): Promise<CommitAuthor> {
    const u = actor.user;
    return u ? { userId: u.id, name: u.name, email: u.commit_email || u.email } : ANONYMOUS_AUTHOR;
  }

  /** One operation of `POST …/repository/` on one component (the permission already checked). */
  async operate(actor: Actor, component: ComponentRow, op: RepositoryOperation, opts: { translationId?: number } = {}): Promise<OperationResult> {
    try {
      if (op === 'commit' && opts.translationId !== undefined) return await this.commitPending(actor, component, opts);
      return await this.run(actor, component, op);
    } catch (e) {
      // a repository that cannot be used (its mirror gone, a source that went away): said, not a 500
      if (e instanceof RepoError) return { result: false, detail: e.message };
      throw e;
    }
  }

  private async run(actor: Actor, component: ComponentRow, op: RepositoryOperation): Promise<OperationResult> {
    switch (op) {
      case 'commit':
        return this.commitPending(actor, component);
      case 'pull':
        return this.pull(actor, component);
      case 'pull-rebase':
        return this.pull(actor, component, 'rebase');
      case 'pull-merge':
        return this.pull(actor, component, 'merge');
      case 'pull-merge-noff':
        return this.pull(actor, component, 'merge_noff');
      case 'push':
        return this.push(actor, component);
      case 'reset':
        return this.reset(actor, component, false);
      case 'reset-keep':
        return this.reset(actor, component, true);
      case 'cleanup':
        return this.cleanup(actor, component);
      case 'file-sync':
        return this.fileSync(actor, component);
      case 'file-scan':
        return this.fileScan(actor, component);
    }
  }

  // ---- status ------------------------------------------------------------------------------------

  private async summary(repo: Repository, sha: string | null): Promise<CommitSummary | null> {
    const commit = sha ? await repo.commit(sha) : null;
    if (!commit) return null;
    return {
      revision: commit.sha,
      shortrevision: commit.sha.slice(0, 7),
      author: `${commit.author.name} <${commit.author.email}>`,
      author_name: commit.author.name,
      author_email: commit.author.email,
      authordate: isoTime(commit.author.time, commit.author.tz).replace(/\.\d{3}/, ''),
      commit: `${commit.committer.name} <${commit.committer.email}>`,
      commit_name: commit.committer.name,
      commit_email: commit.committer.email,
      commitdate: isoTime(commit.committer.time, commit.committer.tz).replace(/\.\d{3}/, ''),
      message: commit.message,
      summary: commitTitle(commit.message),
    };
  }

  /** pending units of components (one query) */
  async pendingCounts(componentIds: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (!componentIds.length) return out;
    const rows = await this.deps.db.kysely
      .selectFrom('units')
      .select(['component_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('component_id', 'in', componentIds)
      .where('pending', '=', 1)
      .groupBy('component_id')
      .execute();
    for (const r of rows) out.set(r.component_id, Number(r.n));
    return out;
  }

  /** pending units of one translation */
  async pendingOfTranslation(translationId: number): Promise<number> {
    const r = await this.deps.db.kysely
      .selectFrom('units')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('translation_id', '=', translationId)
      .where('pending', '=', 1)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * The repository status of a component as `GET …/repository/` shows it (reference §1.3); with
   * `translationId`, needs_commit and pending_units are that translation's (Weblate's
   * Translation.needs_commit), the rest its component's.
   */
  async status(component: ComponentRow, opts: { translationId?: number } = {}): Promise<RepositoryStatus> {
    const repo = this.mirror(component);
    const present = this.mirrorExists(component);
    const pending =
      opts.translationId !== undefined
        ? await this.pendingOfTranslation(opts.translationId)
        : ((await this.pendingCounts([component.id])).get(component.id) ?? 0);
    let local: string | null = null;
    if (present) {
      try {
        local = await this.localHead(component);
      } catch {
        local = null;
      }
    }
    const pushBranch = await this.pushBranchOf(component);
    const remote = present ? await this.remoteHead(component) : null;
    // needs_push compares with the branch pushed to when it was fetched, else with the branch itself
    const pushRemote = (present && pushBranch !== component.branch ? await this.remoteHead(component, pushBranch) : null) ?? remote;
    const outgoing = local && pushRemote ? await this.count(repo, `${pushRemote}..${local}`) : local && !remote ? await this.count(repo, local) : 0;
    const behindRemote = local && remote ? await this.count(repo, `${local}..${remote}`) : 0;
    const ahead = local && remote ? await this.count(repo, `${remote}..${local}`) : 0;
    const b = component.branch;
    let text = `On branch ${b}\n`;
    if (!remote) text += '\n';
    else if (ahead && behindRemote)
      text += `Your branch and 'origin/${b}' have diverged,\nand have ${ahead} and ${behindRemote} different commits each, respectively.\n  (use "git pull" to merge the remote branch into yours)\n\n`;
    else if (ahead)
      text += `Your branch is ahead of 'origin/${b}' by ${ahead} commit${ahead === 1 ? '' : 's'}.\n  (use "git push" to publish your local commits)\n\n`;
    else if (behindRemote)
      text += `Your branch is behind 'origin/${b}' by ${behindRemote} commit${behindRemote === 1 ? '' : 's'}, and can be fast-forwarded.\n  (use "git pull" to update your local branch)\n\n`;
    else text += `Your branch is up to date with 'origin/${b}'.\n\n`;
    text += 'nothing to commit, working tree clean\n';
    return {
      needs_commit: pending > 0,
      needs_merge: behindRemote > 0,
      needs_push: outgoing > 0,
      remote_commit: await this.summary(repo, remote ?? local),
      weblate_commit: await this.summary(repo, local),
      status: text,
      outgoing_commits: outgoing,
      missing_commits: behindRemote,
      pending_units: { total: pending, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: pending },
    };
  }

  // ---- the worker's round ------------------------------------------------------------------------

  /**
   * the worker's round: commits pending edits older than commit_pending_age hours; how many components
   * it committed. The worker polls often and the ages are hours: the look is taken once a minute at most
   * (`force`: now).
   */
  async commitDue(opts: { now?: number; force?: boolean } = {}): Promise<number> {
    const now = opts.now ?? Date.now();
    if (!opts.force && now - this.lastDueCheck < DUE_CHECK_INTERVAL_MS) return 0;
    this.lastDueCheck = now;
    const rows = await this.deps.db.kysely
      .selectFrom('units')
      .innerJoin('components', 'components.id', 'units.component_id')
      .select(['units.component_id', 'components.commit_pending_age', (eb) => eb.fn.min<string>('units.last_updated').as('oldest')])
      .where('units.pending', '=', 1)
      .groupBy(['units.component_id', 'components.commit_pending_age'])
      .execute();
    let n = 0;
    for (const r of rows) {
      const due = Date.parse(r.oldest) <= now - Number(r.commit_pending_age) * 3600_000;
      if (!due) continue;
      const component = await this.deps.db.kysely.selectFrom('components').selectAll().where('id', '=', r.component_id).executeTakeFirst();
      if (!component) continue;
      try {
        const done = await this.commitPending(null, component);
        if (done.result) n++;
      } catch (e) {
        // a held lock is tried again next round; anything else is logged and the others go on
        if (!(e instanceof DomainError && e.status === 423)) this.deps.log.error({ err: e, component: component.id }, 'committing pending translations failed');
      }
    }
    return n;
  }
}

/** who fetches for the server itself (the worker, follow-ups): URL rules apply to it like to anyone */
const SYSTEM_ACTOR: Actor = {
  kind: 'job',
  user: null,
  isAdmin: true,
  scopes: null,
  credential: 'none',
  tokenId: null,
  sudoFrom: null,
  impersonated: false,
  jobId: null,
};
