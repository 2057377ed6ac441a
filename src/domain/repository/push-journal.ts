// The push journal: an event exists for every ref change of a push that is visible, even when the
// process is killed between git moving the refs and the events being written.
//
// 1. Before receive-pack starts, a `pending_pushes` row names the project, the pusher and the process.
// 2. While git holds the ref locks and before the refs move ("prepared", the reference-transaction
//    hook), the updates are written to that row; only then does the hook let git go on. A ref never
//    moves unless its update is in the journal and the process that runs the push is alive (the hook
//    aborts when its socket to the server is closed).
// 3. When receive-pack is done, the events of the committed updates are written in the transaction that
//    deletes the row (a row that is gone was taken over: nothing is written twice).
// 4. Replay (`recover`, at start and every 30 s): a row whose process is gone (same host, pid gone) or
//    whose lease ended (any node; running pushes renew theirs) is taken over (its owner changes, so the
//    old push, should it still run, can neither move a ref nor write events), and the events of the
//    journaled updates that are visible in the repository now are written, once, with its deletion.
//    Quarantine folders (`objects/incoming-*`, `objects/tmp_objdir-incoming-*`) left by killed pushes are
//    removed from repositories that have no running push.
// 5. Merges are journaled the same way (`beginMerge`): the row is written in the transaction that locks
//    the merge request, and carries what to write when the merge ends (the merge and squash commits,
//    set before the target branch moves). Whoever deletes the row settles the merge request in that
//    transaction (the settler MergeService registers): merged, with its state event and its merge hook
//    and activity event, when the target moved; open again when it did not. A merge request left locked
//    without a row (imported so, or by an earlier version) is opened again by the replay.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, PendingPushRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { Repository } from '../../git/repository.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import type { RefUpdate } from '../../git/hooks.ts';
import { BRANCH_PREFIX, TAG_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { afterRefChanges, type RefChange } from './push-events.ts';

/** a running push renews its lease every RENEW_MS; a lease that ended lets any node replay the push */
const LEASE_MS = 120_000;
const RENEW_MS = 30_000;
const SWEEP_MS = 30_000;
/** a ref lock this recent may belong to a git that is about to move the ref: replay waits */
const LOCK_FRESH_MS = 60_000;
const QUARANTINE = /^(?:tmp_objdir-)?incoming-[A-Za-z0-9_]+$/;
/** push logs of earlier versions (a post-receive hook wrote them), never read after a crash */
const OLD_PUSH_LOG = /^hearth-push-[0-9a-f]+$/;

/**
 * Test-only faults (HEARTH_TEST_FAULT): the push (the `merge` ones: a merge) stops for good at that
 * point, for a kill -9 there.
 */
export type PushFault = 'pause-before-ref-update' | 'pause-before-push-events' | 'pause-before-merge-ref-update' | 'pause-after-merge-ref-update';

/** What a merge's journal row carries (the `merge` column, JSON). */
export interface JournaledMerge {
  mergeRequestId: number;
  /** merge_user_id before the lock, restored when the merge does not happen */
  previousMergeUserId: number | null;
  /** set before the target branch moves */
  mergeCommitSha?: string | null;
  squashCommitSha?: string | null;
}

/** How a journaled merge ended, settled in the transaction that deletes its row. */
export interface MergeOutcome {
  merge: JournaledMerge;
  /** the merging user (the row's user) */
  userId: number;
  /** the target branch moved to the merge */
  merged: boolean;
  /** what the merge threw in this process (none on a replay) */
  error?: unknown;
}

export type MergeSettler = (trx: Kysely<Database>, outcome: MergeOutcome) => Promise<void>;

/** a locked merge request without a journal row this long is no merge in flight (rows are written with the lock) */
const ORPHAN_LOCK_MS = LEASE_MS;

export interface RecoveryReport {
  /** journal rows taken over */
  replayed: number;
  /** of those, rows whose updates were visible and got their events now */
  recorded: number;
  /** rows left for a later sweep (a ref still locked) */
  deferred: number;
  /** quarantine folders and old push logs removed */
  cleaned: number;
  /** merge requests locked without a journal row, opened again */
  unlocked: number;
  ms: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const relevant = (u: RefUpdate) => u.ref.startsWith(BRANCH_PREFIX) || u.ref.startsWith(TAG_PREFIX);

/** One ref's update, merged from git's reports (a nested packed-refs transaction reports no old value). */
function merge(into: Map<string, RefChange>, updates: RefUpdate[]): void {
  for (const u of updates.filter(relevant)) {
    const had = into.get(u.ref);
    if (had && had.before !== ZERO_SHA && u.before === ZERO_SHA && had.after === u.after) continue;
    into.set(u.ref, { before: u.before, after: u.after, ref: u.ref });
  }
}

export class PushJournal {
  private readonly host = os.hostname();
  private readonly nonce = crypto.randomBytes(6).toString('hex');
  private seq = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> | null = null;
  private settleMerge: MergeSettler | null = null;

  constructor(
    private readonly db: Db,
    private readonly repos: RepositoryStore,
    private readonly settings: SettingsService,
    private readonly externalUrl: string,
    private readonly log: Logger,
    private readonly fault: PushFault | null = null,
  ) {}

  /** Who settles the merge request of a journaled merge (MergeService, wired by the container). */
  settleMergesWith(fn: MergeSettler): void {
    this.settleMerge = fn;
  }

  /** The settlement of a merge row (none for a push), in the transaction that deletes the row. */
  private async settle(trx: Kysely<Database>, row: { merge: string | null; user_id: number }, merged: boolean, error?: unknown): Promise<void> {
    if (!row.merge) return;
    if (!this.settleMerge) throw new Error('a journaled merge ended with no one to settle it');
    await this.settleMerge(trx, { merge: JSON.parse(row.merge) as JournaledMerge, userId: row.user_id, merged, error });
  }

  /** "<host>:<pid>:<process nonce>:<tag>" */
  private ownerName(tag: string): string {
    return `${this.host}:${process.pid}:${this.nonce}:${tag}`;
  }

  /** Journals a push before receive-pack starts. */
  async begin(project: ProjectRow, user: UserRow): Promise<JournaledPush> {
    const owner = this.ownerName(`p${++this.seq}`);
    const now = Date.now();
    const row = await this.db.kysely
      .insertInto('pending_pushes')
      .values({ project_id: project.id, user_id: user.id, owner, lease_until: iso(now + LEASE_MS), changes: '', created_at: iso(now) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return new JournaledPush(this, this.db, row.id, owner, project, user, this.fault, null);
  }

  /**
   * Journals a merge: the row is written in the transaction where `lock` locks the merge request, so a
   * merge request is locked exactly while a row names it. Null (nothing written) when `lock` answers false.
   */
  async beginMerge(
    project: ProjectRow,
    user: UserRow,
    merge: JournaledMerge,
    lock: (trx: Kysely<Database>) => Promise<boolean>,
  ): Promise<JournaledPush | null> {
    const owner = this.ownerName(`m${++this.seq}`);
    const now = Date.now();
    const id = await this.db.kysely.transaction().execute(async (trx) => {
      if (!(await lock(trx))) return null;
      const row = await trx
        .insertInto('pending_pushes')
        .values({
          project_id: project.id,
          user_id: user.id,
          owner,
          lease_until: iso(now + LEASE_MS),
          changes: '',
          created_at: iso(now),
          merge_request_id: merge.mergeRequestId,
          merge: JSON.stringify(merge),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
    return id === null ? null : new JournaledPush(this, this.db, id, owner, project, user, this.fault, merge);
  }

  /**
   * Events of visible changes, written with the row's deletion (`recorded` false: the row was taken
   * over), and the project as the changes left it (a default branch adopted).
   */
  async record(args: {
    id: number;
    owner: string;
    project: ProjectRow;
    namespace: NamespaceRow;
    user: UserRow;
    repo: Repository;
    changes: RefChange[];
    /** a merge's row (its `merge` column as written) and, in this process, what the merge threw */
    merge?: { merge: string; error?: unknown };
  }): Promise<{ recorded: boolean; project: ProjectRow }> {
    const claim = async (trx: Kysely<Database>) => {
      const r = await trx.deleteFrom('pending_pushes').where('id', '=', args.id).where('owner', '=', args.owner).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    };
    const settle = (trx: Kysely<Database>) =>
      args.merge ? this.settle(trx, { merge: args.merge.merge, user_id: args.user.id }, args.changes.length > 0, args.merge.error) : Promise.resolve();
    if (!args.changes.length) {
      const recorded = await this.db.kysely.transaction().execute(async (trx) => {
        if (!(await claim(trx))) return false;
        await settle(trx);
        return true;
      });
      return { recorded, project: args.project };
    }
    args.repo.touchRefs();
    const deps = { db: this.db, settings: this.settings, externalUrl: this.externalUrl };
    return afterRefChanges(deps, args, args.changes, { claim, then: settle });
  }

  /** A row's process is gone: it ran on this host and its pid is not alive (or is ours, from an earlier life). */
  private deadHere(owner: string): boolean {
    const [host, pid, nonce] = owner.split(':');
    if (host !== this.host || nonce === this.nonce) return false;
    const n = Number(pid);
    if (!Number.isInteger(n) || n <= 0) return false;
    if (n === process.pid) return true;
    try {
      process.kill(n, 0);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }

  /**
   * Replays the journal rows of pushes whose process is gone or whose lease ended, and removes the
   * quarantine folders of killed pushes: in the repositories of those rows, or (`scanAll`, at start) in
   * every repository without a running push.
   */
  async recover(opts: { scanAll?: boolean } = {}): Promise<RecoveryReport> {
    const t0 = performance.now();
    const startedAt = Date.now();
    const report: RecoveryReport = { replayed: 0, recorded: 0, deferred: 0, cleaned: 0, unlocked: 0, ms: 0 };
    const rows = await this.db.kysely.selectFrom('pending_pushes').selectAll().orderBy('id').execute();
    const now = iso(startedAt);
    const running = new Set<number>();
    const stale: PendingPushRow[] = [];
    for (const r of rows) {
      if (r.lease_until < now || this.deadHere(r.owner)) stale.push(r);
      else running.add(r.project_id);
    }
    const replayedProjects = new Set<number>();
    for (const row of stale) {
      try {
        const outcome = await this.replay(row);
        if (outcome === 'skipped') continue;
        report.replayed++;
        if (outcome === 'recorded') report.recorded++;
        if (outcome === 'deferred') {
          report.deferred++;
          running.add(row.project_id);
        } else replayedProjects.add(row.project_id);
      } catch (e) {
        this.log.error({ err: e, pendingPush: row.id, projectId: row.project_id }, 'replaying a journaled push failed');
      }
    }
    let projects: Pick<ProjectRow, 'id' | 'repository_storage'>[];
    if (opts.scanAll) projects = await this.db.kysely.selectFrom('projects').select(['id', 'repository_storage']).execute();
    else if (replayedProjects.size)
      projects = await this.db.kysely
        .selectFrom('projects')
        .select(['id', 'repository_storage'])
        .where('id', 'in', [...replayedProjects])
        .execute();
    else projects = [];
    for (const p of projects) {
      if (running.has(p.id)) continue;
      try {
        report.cleaned += this.cleanLeftovers(this.repos.pathOf(p), startedAt);
      } catch (e) {
        this.log.warn({ err: e, projectId: p.id }, 'removing what a killed push left failed');
      }
    }
    try {
      report.unlocked = await this.unlockOrphans();
    } catch (e) {
      this.log.error({ err: e }, 'opening merge requests locked without a merge failed');
    }
    report.ms = Math.round(performance.now() - t0);
    if (report.replayed || report.cleaned || report.unlocked) this.log.warn({ ...report }, 'replayed the journal of interrupted pushes');
    return report;
  }

  private async replay(row: PendingPushRow): Promise<'skipped' | 'recorded' | 'nothing' | 'deferred'> {
    const owner = this.ownerName(`r${++this.seq}`);
    const taken = await this.db.kysely
      .updateTable('pending_pushes')
      .set({ owner, lease_until: iso(Date.now() + LEASE_MS) })
      .where('id', '=', row.id)
      .where('owner', '=', row.owner)
      .returningAll()
      .executeTakeFirst();
    if (!taken) return 'skipped';
    // nothing visible happened: the row goes, and a merge's merge request is open again
    const drop = async () => {
      await this.db.kysely.transaction().execute(async (trx) => {
        const r = await trx.deleteFrom('pending_pushes').where('id', '=', row.id).where('owner', '=', owner).executeTakeFirst();
        if (Number(r.numDeletedRows) === 1) await this.settle(trx, taken, false);
      });
      return 'nothing' as const;
    };
    const project = await this.db.kysely.selectFrom('projects').selectAll().where('id', '=', taken.project_id).executeTakeFirst();
    if (!project) return drop();
    const repo = this.repos.repository(project);
    if (!repo.exists()) return drop();
    const changes = parseChanges(taken.changes).filter((c) => c.before !== c.after);
    if (!changes.length) return drop();
    // a git that holds a journaled ref's lock may still move it: look again later
    if (changes.some((c) => lockedRecently(repo.gitDir, c.ref))) {
      await this.db.kysely
        .updateTable('pending_pushes')
        .set({ lease_until: iso(Date.now() + 5_000) })
        .where('id', '=', row.id)
        .where('owner', '=', owner)
        .execute();
      return 'deferred';
    }
    const current = await refValues(
      repo,
      changes.map((c) => c.ref),
    );
    const visible = changes.filter((c) => (c.after === ZERO_SHA ? !current.has(c.ref) : current.get(c.ref) === c.after));
    if (!visible.length) return drop();
    const user = await this.db.kysely.selectFrom('users').selectAll().where('id', '=', taken.user_id).executeTakeFirst();
    const namespace = await this.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirst();
    if (!user || !namespace) {
      this.log.warn({ pendingPush: row.id, projectId: project.id, userId: taken.user_id }, 'the pusher of an interrupted push is gone; no events');
      return drop();
    }
    const done = await this.record({
      id: row.id,
      owner,
      project,
      namespace,
      user,
      repo,
      changes: visible,
      merge: taken.merge ? { merge: taken.merge } : undefined,
    });
    return done.recorded ? 'recorded' : 'skipped';
  }

  /**
   * Merge requests locked with no journal row naming them for longer than a lease (a merge writes its
   * row with the lock, so none is being merged): imported locked, or left by an earlier version. Open
   * again, as GitLab's unlock_mr. Returns how many.
   */
  private async unlockOrphans(): Promise<number> {
    const cutoff = iso(Date.now() - ORPHAN_LOCK_MS);
    const r = await this.db.kysely
      .updateTable('merge_requests')
      .set({ state: 'opened', updated_at: iso(Date.now()) })
      .where('state', '=', 'locked')
      .where('updated_at', '<', cutoff)
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('pending_pushes').select('pending_pushes.id').whereRef('pending_pushes.merge_request_id', '=', 'merge_requests.id'))),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Removes quarantine folders older than `before` and old push logs; the count removed. */
  private cleanLeftovers(gitDir: string, before: number): number {
    let n = 0;
    const remove = (dir: string, re: RegExp) => {
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        if (!re.test(name)) continue;
        const full = path.join(dir, name);
        try {
          if (fs.statSync(full).mtimeMs >= before) continue;
          fs.rmSync(full, { recursive: true, force: true });
          n++;
        } catch {}
      }
    };
    remove(path.join(gitDir, 'objects'), QUARANTINE);
    remove(gitDir, OLD_PUSH_LOG);
    return n;
  }

  /** `serve`: replays what an earlier life left, then sweeps every 30 s (rows of nodes that died). */
  startSweeping(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.recover()
        .catch((e) => this.log.error({ err: e }, 'push journal sweep failed'))
        .finally(() => (this.sweeping = null));
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await this.sweeping;
  }
}

/** A push in flight: the updates git committed, and the lease of its journal row (which has those it prepared). */
export class JournaledPush {
  private readonly committed = new Map<string, RefChange>();
  private readonly renewer: NodeJS.Timeout;
  private ended = false;

  constructor(
    private readonly journal: PushJournal,
    private readonly db: Db,
    readonly id: number,
    private readonly owner: string,
    private readonly project: ProjectRow,
    private readonly user: UserRow,
    private readonly fault: PushFault | null,
    /** a merge's row (beginMerge) */
    private readonly merge: JournaledMerge | null,
  ) {
    this.renewer = setInterval(() => {
      void this.db.kysely
        .updateTable('pending_pushes')
        .set({ lease_until: iso(Date.now() + LEASE_MS) })
        .where('id', '=', this.id)
        .where('owner', '=', this.owner)
        .execute()
        .catch(() => {});
    }, RENEW_MS);
    this.renewer.unref();
  }

  /** git is about to move these refs: true once they are in the journal (and the row is still ours). */
  async prepare(updates: RefUpdate[]): Promise<boolean> {
    if (this.ended) return false;
    const lines = updates
      .filter(relevant)
      .map((u) => `${u.before} ${u.after} ${u.ref}\n`)
      .join('');
    // appended: a push of many refs (one transaction per ref) writes each update once
    const r = await this.db.kysely
      .updateTable('pending_pushes')
      .set({
        changes: sql<string>`changes || ${lines}`,
        lease_until: iso(Date.now() + LEASE_MS),
        ...(this.merge ? { merge: JSON.stringify(this.merge) } : {}),
      })
      .where('id', '=', this.id)
      .where('owner', '=', this.owner)
      .executeTakeFirst();
    if (this.fault === 'pause-before-ref-update') await pauseForever('pause-before-ref-update');
    if (this.fault === 'pause-before-merge-ref-update' && this.merge) await pauseForever('pause-before-merge-ref-update');
    return Number(r.numUpdatedRows) === 1;
  }

  /** A merge's commits, journaled with the target's update (prepare) before the branch moves. */
  mergeCommits(shas: { mergeCommitSha: string | null; squashCommitSha: string | null }): void {
    if (!this.merge) throw new Error('not a journaled merge');
    this.merge.mergeCommitSha = shas.mergeCommitSha;
    this.merge.squashCommitSha = shas.squashCommitSha;
  }

  committedUpdates(updates: RefUpdate[]): void {
    merge(this.committed, updates);
  }

  /**
   * receive-pack (or an API write) is done: the events of the committed updates, with the row's
   * deletion (and a merge's merge request settled). `recorded` false when the row was taken over by a
   * replay (which writes the events instead). `error`: what the write threw.
   */
  async complete(ctx: { namespace: NamespaceRow; repo: Repository }, error?: unknown): Promise<{ recorded: boolean; project: ProjectRow }> {
    this.ended = true;
    clearInterval(this.renewer);
    if (this.fault === 'pause-before-push-events' && this.committed.size) await pauseForever('pause-before-push-events');
    if (this.fault === 'pause-after-merge-ref-update' && this.merge && this.committed.size) await pauseForever('pause-after-merge-ref-update');
    const changes = [...this.committed.values()].filter((c) => c.before !== c.after);
    return this.journal.record({
      id: this.id,
      owner: this.owner,
      project: this.project,
      namespace: ctx.namespace,
      user: this.user,
      repo: ctx.repo,
      changes,
      merge: this.merge ? { merge: JSON.stringify(this.merge), error } : undefined,
    });
  }
}

/** Test-only: announce on stderr and never go on (the test kills the process there). */
function pauseForever(fault: PushFault): Promise<never> {
  process.stderr.write(`hearth test fault: ${fault}: paused\n`);
  return new Promise<never>(() => {});
}

/** The journal's "<before> <after> <ref>" lines, merged per ref in the order git reported them. */
function parseChanges(text: string): RefChange[] {
  const updates = text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [before, after, ref] = line.split(' ');
      return { before, after, ref };
    });
  const byRef = new Map<string, RefChange>();
  merge(byRef, updates);
  return [...byRef.values()];
}

function lockedRecently(gitDir: string, ref: string): boolean {
  try {
    return Date.now() - fs.statSync(path.join(gitDir, `${ref}.lock`)).mtimeMs < LOCK_FRESH_MS;
  } catch {
    return false;
  }
}

/** The current value of each ref that exists (exact names). */
async function refValues(repo: Repository, refs: string[]): Promise<Map<string, string>> {
  const { stdout } = await repo.run(['for-each-ref', '--format=%(objectname) %(refname)', ...new Set(refs)]);
  const wanted = new Set(refs);
  const out = new Map<string, string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const i = line.indexOf(' ');
    if (i > 0 && wanted.has(line.slice(i + 1))) out.set(line.slice(i + 1), line.slice(0, i));
  }
  return out;
}
