// After every accepted change of refs (a git push, or a commit/branch/tag made through the API): the
// default branch adopted when it is missing, then push, tag_push and repository_update events in the
// outbox, with GitLab's system-hook payloads, in one transaction with the project's activity time.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { Repository } from '../../git/repository.ts';
import { BRANCH_PREFIX, TAG_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import { nowIso } from '../../lib/time.ts';
import { projectHookAttrs } from '../core/hook-attrs.ts';
import { recordSystemEvent } from '../core/system-events.ts';
import type { Settings } from '../core/settings-definitions.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { isProtectedRef } from './branch-protection.ts';
import { adoptDefaultBranch } from './default-branch.ts';

export interface RefChange {
  before: string;
  after: string;
  /** full ref name, "refs/heads/main" */
  ref: string;
}

export interface PushContext {
  db: Db;
  externalUrl: string;
  settings: Settings;
  project: ProjectRow;
  namespace: NamespaceRow;
  user: UserRow;
  repo: Repository;
}

const projectAttrs = (ctx: PushContext) => projectHookAttrs(ctx.externalUrl, ctx.project, ctx.namespace);

function repositoryHookAttrs(ctx: PushContext) {
  const a = projectAttrs(ctx);
  return {
    name: a.name,
    url: a.url,
    description: a.description,
    homepage: a.homepage,
    git_http_url: a.git_http_url,
    git_ssh_url: a.git_ssh_url,
    visibility_level: a.visibility_level,
  };
}

function userAttrs(u: UserRow) {
  return { user_id: u.id, user_name: u.name, user_username: u.username, user_email: u.email, user_avatar: u.avatar_url ?? null };
}

/**
 * Commits a push brings (GitLab's BranchHooksService): every commit of a new default branch, the
 * commits of a new branch that the default branch lacks, old..new for an update.
 */
async function pushRange(repo: Repository, c: RefChange, defaultBranch: string): Promise<string[]> {
  if (c.before !== ZERO_SHA) return [`${c.before}..${c.after}`];
  if (c.ref === BRANCH_PREFIX + defaultBranch || !(await repo.branch(defaultBranch))) return [c.after];
  return [c.after, '--not', BRANCH_PREFIX + defaultBranch];
}

async function commitsCount(repo: Repository, c: RefChange, defaultBranch: string): Promise<number> {
  if (c.after === ZERO_SHA) return 0;
  const { stdout } = await repo.run(['rev-list', '--count', ...(await pushRange(repo, c, defaultBranch))], { okCodes: [0, 128] });
  return Number(stdout.toString().trim()) || 0;
}

/** The most commits a push event lists (Gitlab::DataBuilder::Push: the latest 20). */
export const PUSH_COMMITS_LIMIT = 20;

/** Commit#hook_attrs(with_changed_files: true). */
export interface HookCommit {
  id: string;
  message: string;
  title: string;
  timestamp: string;
  url: string;
  author: { name: string; email: string };
  added: string[];
  modified: string[];
  removed: string[];
}

/** Commit#title: the first line, cut at a word near 80 characters when 100 or longer (with "…"). */
export function commitTitle(message: string): string {
  const full = message.split('\n', 1)[0].replace(/\r$/, '');
  if (full.length < 100) return full;
  const cut = full.slice(0, 80);
  const at = cut.lastIndexOf(' ');
  return `${at > 0 ? cut.slice(0, at) : cut}…`;
}

/**
 * The commits of `rev` (git log arguments: a range, or a tip and its exclusions), newest `limit` of
 * them, oldest first (newest last), with the paths each changed against its first parent (a rename is
 * an addition and a removal, as GitLab's Commit#repo_changes).
 */
export async function hookCommits(repo: Repository, rev: string[], webUrl: string, limit = PUSH_COMMITS_LIMIT): Promise<HookCommit[]> {
  const { stdout } = await repo.run(
    ['log', '-z', '--root', '--format=%x1e%H%x00%an%x00%ae%x00%cI%x00%B%x00', '--name-status', '-M', '--diff-merges=first-parent', '-n', String(limit), ...rev],
    { okCodes: [0, 128] },
  );
  const out: HookCommit[] = [];
  for (const record of stdout.toString('utf8').split('\x1e')) {
    if (!record) continue;
    const f = record.split('\0');
    if (f.length < 5) continue;
    const [id, name, email, timestamp, message] = f;
    const c: HookCommit = {
      id,
      message,
      title: commitTitle(message),
      timestamp,
      url: `${webUrl}/-/commit/${id}`,
      author: { name, email },
      added: [],
      modified: [],
      removed: [],
    };
    const rest = f.slice(5);
    for (let i = 0; i < rest.length; ) {
      const status = rest[i].trim();
      if (!status) {
        i++;
        continue;
      }
      if (status[0] === 'R' || status[0] === 'C') {
        if (status[0] === 'R') c.removed.push(rest[i + 1]);
        c.added.push(rest[i + 2]);
        i += 3;
        continue;
      }
      const path = rest[i + 1];
      if (status[0] === 'A') c.added.push(path);
      else if (status[0] === 'D') c.removed.push(path);
      else c.modified.push(path);
      i += 2;
    }
    out.push(c);
  }
  return out.reverse();
}

/**
 * The commits a branch push lists (the latest 20 of what it brings; none for a deletion) and how many it
 * brings: counted by git only when the list is full (a push of fewer commits is its list's length).
 */
async function pushCommitsAndCount(ctx: PushContext, c: RefChange, webUrl: string): Promise<{ commits: HookCommit[]; total_commits_count: number }> {
  if (c.after === ZERO_SHA) return { commits: [], total_commits_count: 0 };
  const commits = await hookCommits(ctx.repo, await pushRange(ctx.repo, c, ctx.project.default_branch ?? 'main'), webUrl);
  const total = commits.length < PUSH_COMMITS_LIMIT ? commits.length : await commitsCount(ctx.repo, c, ctx.project.default_branch ?? 'main');
  return { commits, total_commits_count: total };
}

/** What the journal adds to the transaction of the events: its record's deletion first, a merge's settlement after. */
export interface EventsTransaction {
  /** runs first: when it answers false, nothing is written */
  claim?(trx: Kysely<Database>): Promise<boolean>;
  /** runs after the events */
  then?(trx: Kysely<Database>): Promise<void>;
}

/**
 * Builds the payloads (git reads first) and writes them with the activity time in one transaction.
 * `claim` runs first in that transaction (a push journal deleting its record): when it answers false,
 * nothing is written and the result is false; `then` runs last in it.
 */
export async function recordPushEvents(ctx: PushContext, changes: RefChange[], opts: EventsTransaction = {}): Promise<boolean> {
  if (!changes.length) return false;
  const project = projectAttrs(ctx);
  const repository = repositoryHookAttrs(ctx);
  const user = userAttrs(ctx.user);
  const branchChanges = changes.filter((c) => c.ref.startsWith(BRANCH_PREFIX));
  const limit = Number(ctx.settings.push_event_hooks_limit ?? 3);
  const payloads: ({ event_name: 'push' | 'tag_push' | 'repository_update' } & Record<string, unknown>)[] = [];
  // GitLab: no push hooks for a push of more than push_event_hooks_limit branches
  if (branchChanges.length <= limit) {
    for (const c of branchChanges) {
      const branch = c.ref.slice(BRANCH_PREFIX.length);
      payloads.push({
        object_kind: 'push',
        event_name: 'push',
        before: c.before,
        after: c.after,
        ref: c.ref,
        ref_protected: await isProtectedRef(ctx, 'branch', branch),
        checkout_sha: c.after === ZERO_SHA ? null : c.after,
        message: null,
        ...user,
        project_id: ctx.project.id,
        project,
        ...(await pushCommitsAndCount(ctx, c, project.web_url)),
        push_options: {},
        repository,
      });
    }
  }
  for (const c of changes.filter((x) => x.ref.startsWith(TAG_PREFIX))) {
    const peeled = c.after === ZERO_SHA ? null : ((await ctx.repo.info(`${c.after}^{commit}`))?.sha ?? c.after);
    payloads.push({
      object_kind: 'tag_push',
      event_name: 'tag_push',
      before: c.before,
      after: c.after,
      ref: c.ref,
      ref_protected: await isProtectedRef(ctx, 'tag', c.ref.slice(TAG_PREFIX.length)),
      checkout_sha: peeled,
      message: null,
      ...user,
      project_id: ctx.project.id,
      project,
      // Git::TagHooksService: the tagged commit (none for a deletion)
      commits: peeled ? await hookCommits(ctx.repo, ['--no-walk', peeled], project.web_url, 1) : [],
      total_commits_count: peeled ? 1 : 0,
      push_options: {},
      repository,
    });
  }
  payloads.push({
    event_name: 'repository_update',
    ...user,
    project_id: ctx.project.id,
    project,
    changes: changes.map((c) => ({ before: c.before, after: c.after, ref: c.ref })),
    refs: changes.map((c) => c.ref),
  });
  const now = nowIso();
  return ctx.db.kysely.transaction().execute(async (trx) => {
    if (opts.claim && !(await opts.claim(trx))) return false;
    for (const p of payloads) await recordSystemEvent(trx, p);
    await trx.updateTable('projects').set({ last_activity_at: now }).where('id', '=', ctx.project.id).execute();
    await opts.then?.(trx);
    return true;
  });
}

/** What follows the events of an accepted change of refs (the refresh of merge requests), per database. */
export type RefChangeListener = (
  target: { project: ProjectRow; namespace: NamespaceRow; user: UserRow; repo: Repository },
  changes: RefChange[],
) => Promise<void>;

const listeners = new WeakMap<Db, RefChangeListener[]>();

/**
 * Registers `fn` to run after every accepted change of refs written to `db` (a push, an API write, a
 * replayed push): MergeService refreshes merge requests there (MergeRequests::RefreshService). One
 * list per database, so each container sees only its own changes.
 */
export function onRefsChanged(db: Db, fn: RefChangeListener): void {
  const list = listeners.get(db) ?? [];
  list.push(fn);
  listeners.set(db, list);
}

/** Where the events of a change of refs go. */
export interface RefChangeDeps {
  db: Db;
  settings: SettingsService;
  externalUrl: string;
}

/**
 * What follows every accepted change of refs, however it was made (a push, the API): a branch that
 * moved while the default branch does not exist becomes the default branch (adoptDefaultBranch), then
 * the events. Returns the project as it is afterwards and whether the events were written (false when
 * `claim` answered false).
 */
export async function afterRefChanges(
  deps: RefChangeDeps,
  target: { project: ProjectRow; namespace: NamespaceRow; user: UserRow; repo: Repository },
  changes: RefChange[],
  opts: EventsTransaction = {},
): Promise<{ project: ProjectRow; recorded: boolean }> {
  const settings = await deps.settings.get();
  const project = await adoptDefaultBranch(deps.db, target, changes, settings);
  const ctx = { db: deps.db, externalUrl: deps.externalUrl, settings, project, namespace: target.namespace, user: target.user, repo: target.repo };
  const recorded = await recordPushEvents(ctx, changes, opts);
  // the listeners report their own failures: a refresh never undoes an accepted push
  if (recorded) for (const fn of listeners.get(deps.db) ?? []) await fn({ ...target, project }, changes);
  return { project, recorded };
}

/**
 * Gitlab::DataBuilder::Push.build_sample (the test of a webhook): the latest 3 commits of the default
 * branch, newest first, as a push (or tag push) of the default branch's name; null when the repository
 * has no commit. ref_protected is left false: the sample is no push.
 */
export async function samplePushData(ctx: Omit<PushContext, 'settings' | 'db'>, isTag: boolean): Promise<Record<string, unknown> | null> {
  const branch = ctx.project.default_branch ?? 'main';
  const tip = await ctx.repo.branch(branch);
  if (!tip) return null;
  const project = projectHookAttrs(ctx.externalUrl, ctx.project, ctx.namespace);
  const commits = (await hookCommits(ctx.repo, [tip.sha], project.web_url, 3)).reverse();
  if (!commits.length) return null;
  const a = project;
  return {
    object_kind: isTag ? 'tag_push' : 'push',
    event_name: isTag ? 'tag_push' : 'push',
    before: commits[commits.length - 1].id,
    after: commits[0].id,
    ref: (isTag ? TAG_PREFIX : BRANCH_PREFIX) + branch,
    ref_protected: false,
    checkout_sha: commits[0].id,
    message: null,
    ...userAttrs(ctx.user),
    project_id: ctx.project.id,
    project,
    commits,
    total_commits_count: commits.length,
    push_options: {},
    repository: {
      name: a.name,
      url: a.url,
      description: a.description,
      homepage: a.homepage,
      git_http_url: a.git_http_url,
      git_ssh_url: a.git_ssh_url,
      visibility_level: a.visibility_level,
    },
  };
}
