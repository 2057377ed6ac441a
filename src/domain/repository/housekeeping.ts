// Repository housekeeping (POST /projects/:id/housekeeping, Repositories::HousekeepingService and the
// GarbageCollectWorker it queues): an outbox job of kind repository_housekeeping per request, run by
// the worker under the repository lock. `eager`: a full repack (git repack -a -d, redundant packs
// deleted), refs packed, unreachable loose objects older than two weeks pruned (git gc's default);
// `prune`: unreachable objects older than 30 minutes pruned (Gitaly's PruneUnreachableObjects). One
// job per project may be queued or running: another request meanwhile is GitLab's 409.
import crypto from 'node:crypto';
import { Type } from 'typebox';
import { Background } from '../../jobs/background.ts';
import { defineJob, jobKind, type PayloadOf } from '../../jobs/registry.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';

export const HOUSEKEEPING_JOB = 'repository_housekeeping';
export const HOUSEKEEPING_TASKS = ['eager', 'prune'] as const;
export type HousekeepingTask = (typeof HOUSEKEEPING_TASKS)[number];

const LEASE_MS = 10 * 60_000;
const HEARTBEAT_MS = 60_000;
/** HousekeepingService::LEASE_TIMEOUT (24 hours), in the words of LeaseTaken */
export const LEASE_TAKEN = 'Somebody already triggered housekeeping for this resource in the past 1440 minutes';

const Housekeeping = jobKind(
  HOUSEKEEPING_JOB,
  Type.Object({ project_id: Type.Number(), task: Type.Union([Type.Literal('eager'), Type.Literal('prune')]), jid: Type.String() }),
);
type HousekeepingPayload = PayloadOf<typeof Housekeeping>;

export class HousekeepingService {
  /** one job at a time per round, failed for good when git fails (the next request queues another) */
  private readonly background = new Background(
    () => this.runQueued(),
    (e) => this.deps.log.error({ err: e }, 'running repository housekeeping failed'),
  );
  readonly job = defineJob({
    kind: Housekeeping,
    what: 'repository housekeeping',
    leaseMs: LEASE_MS,
    renewMs: HEARTBEAT_MS,
    concurrency: 2,
    run: (p) => this.run(p),
  });

  constructor(private readonly deps: FeatureDeps) {}

  /**
   * POST /projects/:id/housekeeping: admin_project (403), then the job queued unless one is queued or
   * running for the project (409). Returns the job's id as Sidekiq names it (24 hex characters).
   */
  async request(actor: Actor, idOrPath: string, task: HousekeepingTask): Promise<string> {
    const { project, access } = await this.deps.resolve.project(actor, idOrPath);
    if (!access.abilities.has('admin_project') && !actor.isAdmin) throw Errors.forbidden();
    const jid = crypto.randomBytes(12).toString('hex');
    const taken = await this.deps.db.kysely.transaction().execute(async (trx) => {
      const running = await trx
        .selectFrom('jobs')
        .select(['id', 'payload'])
        .where('kind', '=', HOUSEKEEPING_JOB)
        .where('state', 'in', ['queued', 'running'])
        .execute();
      if (running.some((j) => (JSON.parse(j.payload) as HousekeepingPayload).project_id === project.id)) return true;
      const payload: HousekeepingPayload = { project_id: project.id, task, jid };
      await Housekeeping.queue(trx, payload);
      return false;
    });
    if (taken) throw Errors.conflict(LEASE_TAKEN);
    this.background.kick();
    return jid;
  }

  /** The worker's round: runs queued housekeeping jobs (and those whose lease ran out); answers how many it took. */
  runQueued(limit?: number): Promise<number> {
    return this.deps.jobs.round(HOUSEKEEPING_JOB, limit);
  }

  private async run(p: HousekeepingPayload): Promise<void> {
    const project = await this.deps.db.kysely.selectFrom('projects').selectAll().where('id', '=', p.project_id).executeTakeFirst();
    if (!project) return;
    const repo = this.deps.repos.repository(project);
    if (!repo.exists()) return;
    const started = Date.now();
    await this.deps.repository.withRepositoryLock(repo, async () => {
      if (p.task === 'prune') {
        await repo.run(['prune', '--expire=30.minutes.ago'], { timeoutMs: 3_600_000 });
        return;
      }
      await repo.run(['repack', '-a', '-d', '-q', '--write-bitmap-index'], { timeoutMs: 3_600_000 });
      await repo.run(['pack-refs', '--all', '--prune'], { timeoutMs: 600_000 });
      await repo.run(['prune', '--expire=2.weeks.ago'], { timeoutMs: 3_600_000 });
      repo.touchRefs();
    });
    this.deps.log.info({ project: p.project_id, task: p.task, jid: p.jid, ms: Date.now() - started, at: nowIso() }, 'repository housekeeping done');
  }

  /** Resolves when the housekeeping this process started is done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }
}
