// Components that follow a project of this server (`platform_project_id`): every accepted change of
// refs in that project (a git push over HTTP, an API commit or file write, a merged merge request, a
// replayed push) that moves a component's branch queues a rescan of the component — a durable job in
// the outbox (`jobs`, kind translation_follow, one queued job per component at a time) — and this
// process runs it at once; `runQueued` (the worker's round) takes what another process left or what
// failed and waits for its retry. The rescan is the component's pull (ComponentRepository.pull: pending
// edits committed first, upstream merged or rebased, change 21, the rows and statistics of what
// changed), with no actor: the system follows the forge, whoever pushed.
//
// No polling and no webhook: the listener hangs on push-events.ts `onRefsChanged`, which runs after
// the push's own events are written. A push while the component's rescan runs queues another one
// (the running job no longer counts as queued), so the last push is always seen. A process that dies
// between a push's transaction and the queueing loses that job: each process's first worker round,
// and one every 5 minutes, compares the followed branches with what the components last fetched and
// queues those behind (`sweep`, refs only) — a safety net, not the way rescans are found.
import { Type } from 'typebox';
import type { ComponentRow } from '../../../db/schema.ts';
import { BRANCH_PREFIX, ZERO_SHA } from '../../../git/refs.ts';
import { Background } from '../../../jobs/background.ts';
import { defineJob, exponentialBackoff, FinalFailure, jobKind } from '../../../jobs/registry.ts';
import { nowIso } from '../../../lib/time.ts';
import { ANONYMOUS, type Actor } from '../../access/actor.ts';
import { onRefsChanged, type RefChange } from '../../repository/push-events.ts';
import { MERGE_FAILURE_ACTIONS } from '../changes/actions.ts';
import type { TranslationDeps } from '../deps.ts';

export const FOLLOW_JOB = 'translation_follow';
const FollowJob = jobKind(FOLLOW_JOB, Type.Object({ component_id: Type.Number() }));
/** how long a claimed rescan is another worker's (a fetch may take minutes) */
const LEASE_MS = 10 * 60_000;
/** failed rescans are tried again after 5 s, 10 s, 20 s … up to 10 minutes, 8 runs in all, then given up (the next push queues one again) */
const RETRY = exponentialBackoff(8, 5_000, 10 * 60_000);
/** how often a process compares the followed branches with what the components last fetched (a safety net) */
const SWEEP_MS = 5 * 60_000;

/**
 * Who rescans when the pull of ComponentRepository is not there: the system, reading the forge
 * project as an administrator would (the component was created by someone who could read it).
 */
const SYSTEM: Actor = Object.freeze({ ...ANONYMOUS, isAdmin: true }) as Actor;

interface PullCapable {
  pull?(actor: Actor | null, component: ComponentRow): Promise<{ result: boolean; detail?: string }>;
}

export class ForgeFollow {
  private readonly background = new Background(
    () => this.runQueued(),
    (e) => this.deps.log.error({ err: e }, 'rescanning following components failed'),
  );
  readonly job = defineJob({
    kind: FollowJob,
    what: 'rescanning a following component',
    leaseMs: LEASE_MS,
    concurrency: 10,
    backoff: RETRY,
    sweep: { everyMs: SWEEP_MS, run: () => this.sweep().catch((e) => this.deps.log.error({ err: e }, 'sweeping following components failed')) },
    run: async (p) => {
      const { error, final } = await this.rescan(p.component_id);
      if (error !== null) throw final ? new FinalFailure(error) : new Error(error);
    },
  });

  constructor(private readonly deps: TranslationDeps) {
    onRefsChanged(deps.db, async (target, changes) => {
      try {
        await this.queueFor(target.project.id, changes);
      } catch (e) {
        deps.log.error({ err: e, project: target.project.id }, 'queueing the rescan of following components failed');
      }
    });
  }

  /** Queues a rescan of the components following `projectId` whose branch one of `changes` moved; how many. */
  async queueFor(projectId: number, changes: RefChange[]): Promise<number> {
    const branches = [...new Set(changes.filter((c) => c.ref.startsWith(BRANCH_PREFIX) && c.after !== ZERO_SHA).map((c) => c.ref.slice(BRANCH_PREFIX.length)))];
    if (!branches.length) return 0;
    const components = await this.deps.db.kysely
      .selectFrom('components')
      .select('id')
      .where('platform_project_id', '=', projectId)
      .where('branch', 'in', branches)
      .execute();
    for (const c of components) await this.queue(c.id);
    if (components.length) this.background.kick();
    return components.length;
  }

  /** A queued rescan of one component (none added when one is already waiting). */
  async queue(componentId: number): Promise<void> {
    const k = this.deps.db.kysely;
    // a retry waiting for its time is due now: there is something new to read
    await k.transaction().execute((trx) => FollowJob.queueOnce(trx, { component_id: componentId }));
  }

  /**
   * The safety net of the listener (a process that died between a push and its queueing): every
   * component following a project whose branch is not where the component last fetched it from
   * (`refs/remotes/origin/<branch>` of its mirror) is queued. Reads refs only; how many it queued.
   */
  async sweep(): Promise<number> {
    const k = this.deps.db.kysely;
    const rows = await k
      .selectFrom('components')
      .innerJoin('projects', 'projects.id', 'components.platform_project_id')
      .selectAll('projects')
      .select(['components.id as component_id', 'components.branch as component_branch'])
      .execute();
    let queued = 0;
    for (const { component_id, component_branch, ...project } of rows) {
      const row = { id: component_id, branch: component_branch };
      try {
        const forge = this.deps.repos.repository(project);
        if (!forge.exists()) continue;
        const upstream = (await forge.branch(row.branch))?.commit;
        if (!upstream) continue;
        const fetched = await this.deps.vcs.mirror(row.id).resolveCommit(`refs/remotes/origin/${row.branch}`);
        if (fetched === upstream) continue;
        await this.queue(row.id);
        queued++;
      } catch (e) {
        this.deps.log.error({ err: e, component: row.id }, 'comparing a following component with its forge branch failed');
      }
    }
    return queued;
  }

  /** The worker's round: rescans the queued components (due ones, or whose lease ran out); how many it took. */
  runQueued(limit?: number): Promise<number> {
    return this.deps.jobs.round(FOLLOW_JOB, limit);
  }

  /**
   * One component's pull: the reason when it did not work (null: done, or the component is gone), and
   * whether trying again is pointless — a merge failure the pull recorded (22/23/28, the repository's
   * merge_failure) waits for someone to resolve it; a fetch that failed is tried again.
   */
  private async rescan(componentId: number): Promise<{ error: string | null; final: boolean }> {
    const k = this.deps.db.kysely;
    const component = await k.selectFrom('components').selectAll().where('id', '=', componentId).executeTakeFirst();
    if (!component || component.platform_project_id === null) return { error: null, final: false };
    const repository = this.deps.writes.repository as unknown as PullCapable;
    if (typeof repository.pull === 'function') {
      const started = nowIso();
      const r = await repository.pull(null, component);
      if (r.result) return { error: null, final: false };
      const failure = await k
        .selectFrom('translation_changes')
        .select('id')
        .where('component_id', '=', component.id)
        .where('action', 'in', [...MERGE_FAILURE_ACTIONS])
        .where('timestamp', '>=', started)
        .executeTakeFirst();
      return { error: r.detail ?? 'The pull failed.', final: failure !== undefined };
    }
    await this.deps.components.refresh(SYSTEM, component, 'pull');
    return { error: null, final: false };
  }

  /** Resolves when the rescans this process started are done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }
}
