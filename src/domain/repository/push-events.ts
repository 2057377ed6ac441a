// After every accepted change of refs (a git push, or a commit/branch/tag made through the API): the
// default branch adopted when it is missing, then push, tag_push and repository_update events in the
// outbox, with GitLab's system-hook payloads, in one transaction with the project's activity time.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { Repository } from '../../git/repository.ts';
import { BRANCH_PREFIX, TAG_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import { nowIso } from '../../lib/time.ts';
import { projectHookAttrs } from '../events/hook-attrs.ts';
import { recordSystemEvent } from '../events/system-events.ts';
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
  settings: object;
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
async function commitsCount(repo: Repository, c: RefChange, defaultBranch: string): Promise<number> {
  if (c.after === ZERO_SHA) return 0;
  let args: string[];
  if (c.before !== ZERO_SHA) args = ['rev-list', '--count', `${c.before}..${c.after}`];
  else if (c.ref === BRANCH_PREFIX + defaultBranch || !(await repo.branch(defaultBranch))) args = ['rev-list', '--count', c.after];
  else args = ['rev-list', '--count', c.after, '--not', BRANCH_PREFIX + defaultBranch];
  const { stdout } = await repo.run(args, { okCodes: [0, 128] });
  return Number(stdout.toString().trim()) || 0;
}

/**
 * Builds the payloads (git reads first) and writes them with the activity time in one transaction.
 * `claim` runs first in that transaction (a push journal deleting its record): when it answers false,
 * nothing is written and the result is false.
 */
export async function recordPushEvents(
  ctx: PushContext,
  changes: RefChange[],
  opts: { claim?(trx: Kysely<Database>): Promise<boolean> } = {},
): Promise<boolean> {
  if (!changes.length) return false;
  const project = projectAttrs(ctx);
  const repository = repositoryHookAttrs(ctx);
  const user = userAttrs(ctx.user);
  const branchChanges = changes.filter((c) => c.ref.startsWith(BRANCH_PREFIX));
  const limit = Number((ctx.settings as Record<string, unknown>).push_event_hooks_limit ?? 3);
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
        commits: [],
        total_commits_count: await commitsCount(ctx.repo, c, ctx.project.default_branch ?? 'main'),
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
      commits: [],
      total_commits_count: 0,
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
  opts: { claim?(trx: Kysely<Database>): Promise<boolean> } = {},
): Promise<{ project: ProjectRow; recorded: boolean }> {
  const settings = await deps.settings.get();
  const project = await adoptDefaultBranch(deps.db, target, changes, settings);
  const ctx = { db: deps.db, externalUrl: deps.externalUrl, settings, project, namespace: target.namespace, user: target.user, repo: target.repo };
  const recorded = await recordPushEvents(ctx, changes, opts);
  // the listeners report their own failures: a refresh never undoes an accepted push
  if (recorded) for (const fn of listeners.get(deps.db) ?? []) await fn({ ...target, project }, changes);
  return { project, recorded };
}
