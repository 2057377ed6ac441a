// Jobs (GitLab Ci::Build and Ci::RegisterJobService / UpdateBuildStateService /
// AppendBuildTraceService): the queue runners take jobs from, the job token a running job holds, state
// changes from the runner, the log, and the API's cancel, retry, play and erase.
// See docs/design-notes.md, CI.
import { sql } from 'kysely';
import type { CiBuildRow, CiPipelineRow, CiRunnerRow, NamespaceRow, ProjectRow, UserRow } from '../../../db/schema.ts';
import { randomToken, safeEqual } from '../../../lib/secrets.ts';
import { inSubtree, isInt32 } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import { settingsOf } from '../../core/project-settings.ts';
import { featureOpen } from '../../access/visibility.ts';
import { loadRefRules, protectionDefaults, type RefRules } from '../../repository/branch-protection.ts';
import type { RunnerInfo } from '../runners/runners.service.ts';
import type { CiDeps } from '../deps.ts';
import { jobOptions } from '../job-options.ts';
import { type JobRelated, loadJobRelated } from '../job-views.ts';
import { JobWaiters } from './job-waiters.ts';
import { CANCELABLE_STATUSES, COMPLETED_STATUSES, FAILURE_REASONS } from './job-statuses.ts';
import { runnerPayload } from './runner-payload.ts';
import { HookRows, recordBuildEvent } from '../hook-data.ts';
import { selectBytes } from '../../../db/bytes.ts';
import { readVersions, stamp, type Versions } from '../../../db/versions.ts';
import { VersionedCache } from '../../../lib/versioned-cache.ts';
import { defineSweep } from '../../../jobs/registry.ts';
import { ciConfigPathVariable } from '../config/source.ts';

export const JOB_TOKEN_PREFIX = 'glcbt-';
/** Gitlab::Ci::Trace::UPDATE_FREQUENCY_DEFAULT (seconds) */
export const TRACE_UPDATE_INTERVAL = 60;
/** Ci::Build trace limit (GitLab's ci_jobs_trace_size_limit default, 100 MB) */
export const TRACE_SIZE_LIMIT = 100 * 1024 * 1024;
/** a pending job nobody took for this long is dropped (StuckCiJobsWorker: 1 day) */
const STUCK_PENDING_MS = 24 * 3600_000;
/** how stale a runner's contacted_at may get before a job's update writes it (Ci::Runner: 40 minutes) */
const RUNNER_CONTACT_EVERY_MS = 40 * 60_000;
/** candidate jobs read per round of the queue */
const QUEUE_BATCH = 100;
/** the tables a claim's view of a project comes from (ClaimSettings) */
const CLAIM_TABLES = ['projects', 'namespaces', 'protected_branches', 'protected_tags', 'protected_ref_access_levels', 'application_settings'] as const;
type ClaimSettings = { project: ProjectRow; namespace: NamespaceRow; rules: RefRules };
/** how long this process leaves alone a job version it already tried to take (it is no longer pending) */
const ATTEMPTED_MS = 10_000;

export type ReadAbility = 'read' | 'update' | 'erase';

export interface JobRequestInput {
  systemId: string | null;
  sessionUrl: string | null;
  /** job_age: only jobs queued at least this many seconds ago */
  jobAge?: number | null;
}

export interface ClaimedJob {
  job: CiBuildRow;
  token: string;
  payload: Record<string, unknown>;
}

/** A runner's state update was refused because the job no longer runs: 403 with Job-Status. */
export class JobNotRunning extends Error {
  constructor(readonly status: string) {
    super('Job is not running');
  }
}

const dbNow = () => nowIso();

export class JobsService {
  readonly waiters: JobWaiters;
  /**
   * The job versions (`id.lock_version`) this process's claims tried to take, and when: a claim skips them, so
   * runners asking at the same moment spread over the queue instead of all racing for its first job (each lost
   * race is a conditional UPDATE that changed nothing). Another process's claims still race; the UPDATE decides.
   */
  private readonly attempted = new Map<string, number>();
  /**
   * The projects claims read (the project, its namespace, its ref rules) by the versions of the tables they come
   * from: a queue of one project's jobs reads them once per change, not once per claim.
   */
  private readonly claimSettings = new VersionedCache<ClaimSettings | null>(2000, 60_000);
  /** the users jobs run as (the payload's GITLAB_USER_*), by id, until the users' table version moves */
  private readonly jobUsers = new VersionedCache<UserRow>(2000, 60_000);
  /** runners' last contact as this process last read or wrote it (runnerContact) */
  private readonly contacts = new Map<number, { at: number; ip: string | null }>();
  /** jobs past their timeout or whose runner went silent are found by the clock */
  readonly timeouts = defineSweep({ name: 'job timeouts', everyMs: 10_000, run: () => this.failStale() });

  constructor(protected readonly deps: CiDeps) {
    this.waiters = new JobWaiters(deps.db, () => this.anyPending());
  }

  private get k() {
    return this.deps.db.kysely;
  }

  // ---- job tokens -----------------------------------------------------------------------------

  /** The job a job token belongs to, while that job runs (Authenticator.jobTokens). */
  async resolveToken(token: string): Promise<{ user: UserRow; jobId: number } | null> {
    if (typeof token !== 'string' || !token.startsWith(JOB_TOKEN_PREFIX)) return null;
    const job = await this.k.selectFrom('ci_builds').select(['id', 'status', 'user_id']).where('token_digest', '=', this.deps.digest(token)).executeTakeFirst();
    if (!job || job.status !== 'running' || job.user_id === null) return null;
    const user = await this.k.selectFrom('users').selectAll().where('id', '=', job.user_id).executeTakeFirst();
    return user ? { user, jobId: job.id } : null;
  }

  /** Wakes the runners waiting in POST /jobs/request (called after jobs became pending). */
  jobsQueued(): void {
    this.waiters.wakeAll();
  }

  /** Ends every long poll (the app closes). */
  close(): void {
    this.waiters.close();
  }

  private async anyPending(): Promise<boolean> {
    const row = await this.k.selectFrom('ci_builds').select('id').where('status', '=', 'pending').where('type', '=', 'build').limit(1).executeTakeFirst();
    return !!row;
  }

  /** Moves the pipeline on after a job changed; a failure there must not undo the job's change. */
  private async process(pipelineId: number, held?: HookRows): Promise<CiPipelineRow | undefined> {
    try {
      return await this.deps.ci.pipelines.process(pipelineId, held);
    } catch (e) {
      this.deps.log.warn({ err: e, pipelineId }, 'pipeline processing failed');
      return undefined;
    }
  }

  /**
   * After a job was played or retried (Ci::ResetSkippedJobsService): the jobs skipped because of it go
   * back to created, then the pipeline moves on.
   */
  private async replayed(job: CiBuildRow): Promise<void> {
    try {
      await this.deps.ci.pipelines.resetSkippedAfter(job);
    } catch (e) {
      this.deps.log.warn({ err: e, pipelineId: job.pipeline_id }, 'pipeline processing failed');
    }
  }

  // ---- the queue ------------------------------------------------------------------------------

  /**
   * POST /jobs/request: a job for the runner now, or after waiting up to `waitMs` for one to become
   * pending (null when none came, the client went away or the app closes).
   */
  async request(runner: CiRunnerRow, input: JobRequestInput, waitMs: number, signal?: AbortSignal, first?: Versions): Promise<ClaimedJob | null> {
    const deadline = Date.now() + waitMs;
    for (let given = first; ; given = undefined) {
      const versions = given ?? (await readVersions(this.deps.db));
      const since = versions.ci_builds;
      const claimed = await this.claim(runner, input, versions);
      if (claimed) return claimed;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return null;
      const woken = await this.waiters.wait(since, left, signal);
      if (!woken) return null;
    }
  }

  /** Ci::RegisterJobService: the oldest pending job this runner may take, claimed atomically. */
  async claim(runner: CiRunnerRow, input: JobRequestInput, versions?: Versions): Promise<ClaimedJob | null> {
    if (runner.active !== 1) return null;
    const runnerTags = new Set(JSON.parse(runner.tag_list) as string[]);
    const scope = await this.runnerScope(runner);
    if (scope === null) return null;
    const instanceDefaults = protectionDefaults(await this.deps.settings.get());
    // a project's settings and ref rules, as of `versions` (read anew without them: a claim of a test or the CLI)
    const settingsStamp = versions ? stamp(versions, CLAIM_TABLES) : null;
    const claimSettingsOf = async (projectId: number) => {
      const key = String(projectId);
      if (settingsStamp !== null) {
        const hit = this.claimSettings.get(key, settingsStamp);
        if (hit !== undefined) return hit;
      }
      const project = await this.k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
      const namespace = project ? await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirst() : undefined;
      const found = project && namespace ? { project, namespace, rules: await loadRefRules(this.k, project, namespace, instanceDefaults) } : null;
      if (settingsStamp !== null) this.claimSettings.set(key, settingsStamp, found);
      return found;
    };
    const settingsCache = new Map<number, ClaimSettings | null>();
    let after = 0;
    for (let round = 0; round < 20; round++) {
      let q = this.k
        .selectFrom('ci_builds')
        .selectAll('ci_builds')
        .where('ci_builds.status', '=', 'pending')
        .where('ci_builds.type', '=', 'build')
        .where('ci_builds.id', '>', after);
      if (input.jobAge) q = q.where('ci_builds.queued_at', '<=', new Date(Date.now() - input.jobAge * 1000).toISOString());
      if (scope.projectIds) {
        if (!scope.projectIds.length) return null;
        q = q.where('ci_builds.project_id', 'in', scope.projectIds);
      }
      if (scope.groupPaths) {
        if (!scope.groupPaths.length) return null;
        const groupPaths = scope.groupPaths;
        q = q
          .innerJoin('projects', 'projects.id', 'ci_builds.project_id')
          .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
          // each group and everything under it: a range of the traversal_ids index, never a LIKE
          .where((eb) => eb.or(groupPaths.map((prefix) => inSubtree('namespaces.traversal_ids', prefix))));
      }
      const rows = await q.orderBy('ci_builds.id').limit(QUEUE_BATCH).execute();
      if (!rows.length) return null;
      for (const job of rows) {
        after = job.id;
        const tags = JSON.parse(job.tag_list) as string[];
        if (tags.length ? !tags.every((t) => runnerTags.has(t)) : runner.run_untagged !== 1) continue;
        let p = settingsCache.get(job.project_id);
        if (p === undefined) {
          p = await claimSettingsOf(job.project_id);
          settingsCache.set(job.project_id, p);
        }
        if (!p || p.project.archived === 1) continue;
        const s = settingsOf(p.project);
        if (s.builds_access_level === 'disabled') continue;
        if (runner.runner_type === 'instance_type' && s.shared_runners_enabled === false) continue;
        if (runner.runner_type === 'group_type' && s.group_runners_enabled === false) continue;
        const protectedRef = job.tag === 1 ? p.rules.tag(job.ref) !== null : p.rules.isProtectedBranch(job.ref);
        if (runner.access_level === 'ref_protected' && !protectedRef) continue;
        if (!this.attempt(job)) continue;
        const claimed = await this.take(runner, job, p, input, protectedRef, versions).catch((e) => {
          this.attempted.delete(`${job.id}.${job.lock_version}`); // not tried after all
          throw e;
        });
        if (claimed) return claimed;
      }
      if (rows.length < QUEUE_BATCH) return null;
    }
    return null;
  }

  /** false when a claim of this process already tried this version of the job; else it is marked as tried */
  private attempt(job: CiBuildRow): boolean {
    const key = `${job.id}.${job.lock_version}`;
    const now = Date.now();
    const at = this.attempted.get(key);
    if (at !== undefined && now - at < ATTEMPTED_MS) return false;
    if (this.attempted.size >= 10_000) for (const [k, t] of this.attempted) if (now - t >= ATTEMPTED_MS) this.attempted.delete(k);
    this.attempted.set(key, now);
    return true;
  }

  /**
   * A job taken for a runner that went away before its answer was sent goes back to the queue (the
   * runner never learnt of it; it would otherwise run out its timeout as a running job).
   */
  async requeue(job: CiBuildRow): Promise<void> {
    const res = await this.k
      .updateTable('ci_builds')
      .set({
        status: 'pending',
        runner_id: null,
        runner_system_id: null,
        token_digest: null,
        started_at: null,
        updated_at: dbNow(),
        lock_version: sql<number>`lock_version + 1`,
      })
      .where('id', '=', job.id)
      .where('status', '=', 'running')
      .where('lock_version', '=', job.lock_version)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) {
      await this.process(job.pipeline_id);
      this.jobsQueued();
    }
  }

  /** Which projects (project runners) or groups (group runners) the runner serves; null: none. */
  private async runnerScope(runner: CiRunnerRow): Promise<{ projectIds?: number[]; groupPaths?: string[] } | null> {
    if (runner.runner_type === 'project_type') {
      const rows = await this.k.selectFrom('ci_runner_projects').select('project_id').where('runner_id', '=', runner.id).execute();
      return { projectIds: rows.map((r) => r.project_id) };
    }
    if (runner.runner_type === 'group_type') {
      const rows = await this.k
        .selectFrom('ci_runner_namespaces')
        .innerJoin('namespaces', 'namespaces.id', 'ci_runner_namespaces.namespace_id')
        .select('namespaces.traversal_ids')
        .where('ci_runner_namespaces.runner_id', '=', runner.id)
        .execute();
      return { groupPaths: rows.map((r) => r.traversal_ids) };
    }
    return runner.runner_type === 'instance_type' ? {} : null;
  }

  /** The conditional UPDATE that makes the runner the job's only taker, then the payload. */
  private async take(
    runner: CiRunnerRow,
    job: CiBuildRow,
    p: { project: ProjectRow; namespace: NamespaceRow },
    input: JobRequestInput,
    refProtected: boolean,
    versions: Versions | undefined,
  ): Promise<ClaimedJob | null> {
    const token = `${JOB_TOKEN_PREFIX}${randomToken(20)}`;
    const now = dbNow();
    const s = settingsOf(p.project);
    const o = jobOptions(job.options);
    const jobTimeout = o.timeout ?? (typeof s.build_timeout === 'number' ? s.build_timeout : 3600);
    const timeout = runner.maximum_timeout ? Math.min(jobTimeout, runner.maximum_timeout) : jobTimeout;
    const taken = await this.k
      .updateTable('ci_builds')
      .set({
        status: 'running',
        runner_id: runner.id,
        runner_system_id: input.systemId,
        token_digest: this.deps.digest(token),
        started_at: now,
        updated_at: now,
        timeout,
        lock_version: sql<number>`lock_version + 1`,
      })
      .where('id', '=', job.id)
      .where('status', '=', 'pending')
      .where('lock_version', '=', job.lock_version)
      .returningAll()
      .executeTakeFirst();
    if (!taken) return null;
    // the job hook (running) and the pipeline's move on read only the rows nobody here holds yet
    const rows = new HookRows(this.k, { project: p.project, namespace: p.namespace, runner, versions });
    const userStamp = versions && taken.user_id !== null ? stamp(versions, ['users']) : null;
    const knownUser = userStamp !== null ? this.jobUsers.get(String(taken.user_id), userStamp) : undefined;
    if (knownUser) rows.holdUser(knownUser);
    await recordBuildEvent(rows, this.deps, taken);
    const processed = await this.deps.ci.pipelines.jobStarted(job.pipeline_id, rows).catch((e) => {
      this.deps.log.warn({ err: e, pipelineId: job.pipeline_id }, 'pipeline processing failed');
      return undefined;
    });
    const repo = this.deps.repos.repository(p.project);
    const [pipeline, running, commit, dependencies, ciConfigPath, secretVariables] = await Promise.all([
      processed ?? this.k.selectFrom('ci_pipelines').selectAll().where('id', '=', job.pipeline_id).executeTakeFirstOrThrow(),
      runner.runner_type === 'instance_type'
        ? this.k
            .selectFrom('ci_builds')
            .innerJoin('ci_runners', 'ci_runners.id', 'ci_builds.runner_id')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('ci_builds.project_id', '=', job.project_id)
            .where('ci_builds.status', '=', 'running')
            .where('ci_runners.runner_type', '=', 'instance_type')
            .executeTakeFirst()
        : undefined,
      repo.exists() && /^[0-9a-f]{40,64}$/.test(taken.sha) ? repo.commit(taken.sha).catch(() => null) : null,
      this.deps.ci.artifacts.forDependencies(taken, token, rows.heldJobs(taken.pipeline_id)).catch((e) => {
        this.deps.log.warn({ err: e, jobId: taken.id }, 'job dependencies unavailable');
        return [];
      }),
      ciConfigPathVariable(this.deps, p.project),
      this.deps.ci.variables.forJob(p.project, p.namespace, { protectedRef: refProtected, environment: taken.environment }, versions),
      rows.load([taken.user_id]), // held already when a hook heard the job
    ]);
    const mergeRequest = pipeline.merge_request_id === null ? null : await this.mergeRequestOf(pipeline.merge_request_id);
    const user = rows.user(taken.user_id);
    if (user && userStamp !== null && !knownUser) this.jobUsers.set(String(user.id), userStamp, user);
    const queued = taken.queued_at ? Date.parse(taken.queued_at) : Date.parse(taken.created_at);
    const payload = runnerPayload({
      job: taken,
      token,
      runner,
      project: p.project,
      namespace: p.namespace,
      pipeline,
      user: user ?? null,
      commit,
      externalUrl: this.deps.config.externalUrl,
      projectSettings: settingsOf(p.project),
      ciConfigPath,
      secretVariables,
      mergeRequest,
      timeInQueue: Math.max(0, (Date.parse(now) - queued) / 1000),
      instanceRunnerJobs: Number(running?.n ?? 0),
      refProtected,
      sessionUrl: input.sessionUrl,
      dependencies,
    });
    return { job: taken, token, payload };
  }

  /**
   * a merge request pipeline's merge request and the paths of its target and source projects (CI_MERGE_REQUEST_PROJECT_*
   * and CI_MERGE_REQUEST_SOURCE_PROJECT_*, whichever of them the pipeline runs in); null when it is gone
   */
  private async mergeRequestOf(id: number) {
    const row = await this.k.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    const paths = await this.k
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select(['projects.id', 'projects.path', 'namespaces.full_path'])
      .where('projects.id', 'in', [row.project_id, row.source_project_id])
      .execute();
    const pathOf = (projectId: number) => {
      const p = paths.find((x) => x.id === projectId);
      return p ? `${p.full_path}/${p.path}` : '';
    };
    return { row, projectPath: pathOf(row.project_id), sourceProjectPath: pathOf(row.source_project_id) };
  }

  // ---- the runner's side of a running job -----------------------------------------------------

  /**
   * authenticate_job!: the job by id and its token; 403 when unknown or the token does not match,
   * JobNotRunning (403 with Job-Status) when it no longer runs.
   */
  async authenticateJob(id: number, token: string | undefined): Promise<CiBuildRow> {
    const job = isInt32(id) ? await this.k.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
    if (!job || !token || job.token_digest === null || !safeEqual(job.token_digest, this.deps.digest(token))) throw Errors.forbidden();
    if (job.erased_at) throw Errors.forbidden('Job has been erased!');
    if (job.status !== 'running') throw new JobNotRunning(job.status);
    return job;
  }

  /**
   * authenticate_job!(heartbeat_runner: true): a job's update or log is a contact of its runner,
   * written as lazily as the runner's own contacts (Ci::Runner#heartbeat: when older than 40 minutes).
   */
  async runnerContact(job: CiBuildRow, ip?: string): Promise<void> {
    if (job.runner_id === null) return;
    const now = Date.now();
    // a contact this process saw lately, from the same address, needs no read (a runner sends a trace every few seconds)
    const seen = this.contacts.get(job.runner_id);
    if (seen && seen.at >= now - RUNNER_CONTACT_EVERY_MS && (ip === undefined || ip === seen.ip)) return;
    const runner = await this.k.selectFrom('ci_runners').select(['contacted_at', 'ip_address']).where('id', '=', job.runner_id).executeTakeFirst();
    if (!runner) return;
    const stale = !runner.contacted_at || Date.parse(runner.contacted_at) < now - RUNNER_CONTACT_EVERY_MS;
    const ipChanged = ip !== undefined && ip !== runner.ip_address;
    if (this.contacts.size >= 10_000) this.contacts.clear();
    if (!stale && !ipChanged) {
      this.contacts.set(job.runner_id, { at: Date.parse(runner.contacted_at!), ip: runner.ip_address });
      return;
    }
    await this.k
      .updateTable('ci_runners')
      .set({ contacted_at: new Date(now).toISOString(), ...(ip !== undefined ? { ip_address: ip } : {}) })
      .where('id', '=', job.runner_id)
      .execute();
    this.contacts.set(job.runner_id, { at: now, ip: ip ?? runner.ip_address });
  }

  /** UpdateBuildStateService: running refreshes, success and failed finish the job. Answers the HTTP status. */
  async updateFromRunner(job: CiBuildRow, input: { state?: string; failure_reason?: string; exit_code?: number }): Promise<200 | 400> {
    const now = dbNow();
    switch (input.state) {
      case undefined:
      case 'running':
        await this.k.updateTable('ci_builds').set({ updated_at: now }).where('id', '=', job.id).execute();
        return 200;
      case 'success':
      case 'failed': {
        const reason =
          input.state === 'failed'
            ? (FAILURE_REASONS as readonly string[]).includes(input.failure_reason ?? '')
              ? input.failure_reason!
              : 'unknown_failure'
            : null;
        await this.finish(job, input.state, reason);
        return 200;
      }
      default:
        return 400;
    }
  }

  /** The job leaves running (or pending) for a final status; the pipeline moves on. */
  private async finish(job: CiBuildRow, status: 'success' | 'failed' | 'canceled', reason: string | null): Promise<boolean> {
    const now = dbNow();
    // read before the write (on PostgreSQL a read after this process's write is a query): the hooks are asked as of
    // them, and the project and its namespace come from the claims' cache when no write moved them
    const versions = await readVersions(this.deps.db);
    const done = await this.k
      .updateTable('ci_builds')
      .set({ status, failure_reason: reason, finished_at: now, updated_at: now, lock_version: sql<number>`lock_version + 1` })
      .where('id', '=', job.id)
      .where('status', '=', job.status)
      .where('lock_version', '=', job.lock_version)
      .returningAll()
      .executeTakeFirst();
    if (!done) return false;
    const held = this.claimSettings.get(String(job.project_id), stamp(versions, CLAIM_TABLES)) ?? undefined;
    const rows = new HookRows(this.k, { project: held?.project, namespace: held?.namespace, versions });
    await recordBuildEvent(rows, this.deps, done); // the job hook
    await this.process(job.pipeline_id, rows);
    return true;
  }

  /**
   * AppendBuildTraceService: `start` must be the log's current size (else 416 with that size); the
   * log past the size limit fails the job (403).
   */
  async appendTrace(job: CiBuildRow, start: number, data: Buffer): Promise<{ status: 202 | 403 | 416; size: number }> {
    const end = start + data.length;
    if (end > TRACE_SIZE_LIMIT) {
      await this.finish(job, 'failed', 'trace_size_exceeded');
      return { status: 403, size: job.trace_size };
    }
    return this.deps.db.kysely.transaction().execute(async (trx) => {
      const cur = await trx.selectFrom('ci_builds').select(['trace_size']).where('id', '=', job.id).executeTakeFirstOrThrow();
      if (cur.trace_size !== start) return { status: 416 as const, size: cur.trace_size };
      if (data.length) {
        const seq = await trx
          .selectFrom('ci_build_trace_chunks')
          .select((eb) => eb.fn.max<number>('seq').as('m'))
          .where('build_id', '=', job.id)
          .executeTakeFirst();
        await trx
          .insertInto('ci_build_trace_chunks')
          .values({ build_id: job.id, seq: (seq?.m ?? -1) + 1, data })
          .execute();
        const res = await trx.updateTable('ci_builds').set({ trace_size: end }).where('id', '=', job.id).where('trace_size', '=', start).executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) throw Errors.conflict();
      }
      return { status: 202 as const, size: end };
    });
  }

  /** The whole log. */
  async trace(jobId: number): Promise<Buffer> {
    const chunks = await selectBytes(
      this.deps.db,
      this.k.selectFrom('ci_build_trace_chunks').select('data').where('build_id', '=', jobId).orderBy('seq'),
      'data',
    );
    return Buffer.concat(chunks);
  }

  /**
   * A piece of the log from byte `from`, at most `max` bytes (the live log page's polls): only the chunks
   * that overlap the range are read. `size` is the log's size when read; `from` past it gives no bytes.
   */
  async traceSlice(jobId: number, from: number, max: number): Promise<{ data: Buffer; size: number }> {
    const sizes = await this.k
      .selectFrom('ci_build_trace_chunks')
      .select(['seq', sql<number>`length(data)`.as('n')])
      .where('build_id', '=', jobId)
      .orderBy('seq')
      .execute();
    let at = 0;
    let first = -1;
    let last = -1;
    let firstStart = 0;
    const end = from + max;
    for (const c of sizes) {
      const n = Number(c.n);
      if (at + n > from && at < end) {
        if (first < 0) {
          first = c.seq;
          firstStart = at;
        }
        last = c.seq;
      }
      at += n;
    }
    if (first < 0) return { data: Buffer.alloc(0), size: at };
    const chunks = await selectBytes(
      this.deps.db,
      this.k.selectFrom('ci_build_trace_chunks').select('data').where('build_id', '=', jobId).where('seq', '>=', first).where('seq', '<=', last).orderBy('seq'),
      'data',
    );
    const joined = Buffer.concat(chunks);
    return { data: joined.subarray(from - firstStart, Math.min(joined.length, end - firstStart)), size: at };
  }

  // ---- the API --------------------------------------------------------------------------------

  /**
   * The project and the right to its jobs (ProjectPolicy): read_build for Reporters, and for guests and
   * whoever sees the project when public_jobs is on (and the jobs feature open to them); update_build
   * (cancel, retry, play) for Developers; erase for Maintainers (or the job's user, checked by the caller).
   */
  async project(actor: Actor, idOrPath: string, ability: ReadAbility): Promise<ResolvedProject & { level: number }> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    const level = actor.isAdmin ? 50 : ctx.access.level;
    const s = settingsOf(ctx.project);
    const feature = s.builds_access_level;
    const repoFeature = s.repository_access_level;
    if (feature === 'disabled' || repoFeature === 'disabled') throw Errors.forbidden();
    const jobsOpen = featureOpen(actor, ctx.project, ctx.access, 'builds') && ctx.access.abilities.has('read_project');
    const read = level >= 20 || (s.public_jobs !== false && jobsOpen);
    // an archived project's jobs are read-only (ProjectPolicy: archived prevents update_build)
    const ok = ability === 'read' ? read : level >= 30 && ctx.project.archived === 0;
    if (!ok) throw Errors.forbidden();
    return { ...ctx, level };
  }

  /** The jobs of a project, newest first (builds only, as GitLab's `project.builds`). */
  list(project: ProjectRow, f: { scope?: string[]; includeRetried?: boolean }) {
    let q = this.k.selectFrom('ci_builds').selectAll().where('project_id', '=', project.id).where('type', '=', 'build');
    if (f.scope?.length) q = q.where('status', 'in', f.scope);
    if (f.includeRetried === false) q = q.where('retried', '=', 0);
    return q.orderBy('id', 'desc');
  }

  /** find_build! (builds) / find_job! (builds and bridges): 404 Not found otherwise. */
  async find(project: ProjectRow, jobId: number, types: string[] = ['build']): Promise<CiBuildRow> {
    const job = isInt32(jobId)
      ? await this.k
          .selectFrom('ci_builds')
          .selectAll()
          .where('project_id', '=', project.id)
          .where('id', '=', jobId)
          .where('type', 'in', types)
          .executeTakeFirst()
      : undefined;
    // ActiveRecord::RecordNotFound: GitLab's "404 Not found"
    if (!job) throw Errors.recordNotFound();
    return job;
  }

  /** What a page of jobs links to (users, pipelines, runners, artifacts, projects, commits), read once. */
  related(rows: CiBuildRow[]): Promise<JobRelated> {
    return loadJobRelated(this.deps, rows);
  }

  /** The project of a job (a job token's only project), or undefined for none. */
  async projectIdOf(jobId: number): Promise<number | undefined> {
    return (await this.k.selectFrom('ci_builds').select('project_id').where('id', '=', jobId).executeTakeFirst())?.project_id;
  }

  async reload(id: number): Promise<CiBuildRow> {
    return this.k.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  /** Ci::Build#cancel: an active job becomes canceled (a running one's runner learns it from Job-Status). */
  async cancel(job: CiBuildRow): Promise<CiBuildRow> {
    if (!(CANCELABLE_STATUSES as readonly string[]).includes(job.status)) return job;
    const now = dbNow();
    const res = await this.k
      .updateTable('ci_builds')
      .set({ status: 'canceled', finished_at: now, updated_at: now, lock_version: sql<number>`lock_version + 1` })
      .where('id', '=', job.id)
      .where('status', 'in', [...CANCELABLE_STATUSES])
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) await this.process(job.pipeline_id);
    return this.reload(job.id);
  }

  /** Ci::RetryJobService: a new job copying the old (which is marked retried), queued at once. */
  async retry(job: CiBuildRow, actor: Actor): Promise<CiBuildRow> {
    const retryable = job.retried === 0 && (job.status === 'success' || job.status === 'failed' || job.status === 'canceled');
    if (!retryable) throw Errors.forbidden('Job is not retryable');
    const now = dbNow();
    const fresh = await this.k.transaction().execute(async (trx) => {
      const res = await trx.updateTable('ci_builds').set({ retried: 1, updated_at: now }).where('id', '=', job.id).where('retried', '=', 0).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw Errors.forbidden('Job is not retryable');
      return trx
        .insertInto('ci_builds')
        .values({
          project_id: job.project_id,
          pipeline_id: job.pipeline_id,
          type: job.type,
          name: job.name,
          stage: job.stage,
          stage_idx: job.stage_idx,
          status: job.type === 'build' ? 'pending' : 'created',
          ref: job.ref,
          tag: job.tag,
          sha: job.sha,
          user_id: actor.user?.id ?? job.user_id,
          options: job.options,
          yaml_variables: job.yaml_variables,
          tag_list: job.tag_list,
          when: job.when,
          allow_failure: job.allow_failure,
          environment: job.environment,
          description: job.description,
          created_at: now,
          updated_at: now,
          queued_at: job.type === 'build' ? now : null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    await this.replayed(job);
    this.jobsQueued();
    return this.reload(fresh.id);
  }

  /**
   * Ci::PlayBuildService: a manual job is queued, as the user who played it, with the variables given
   * (job_variables_attributes: added to the job's own, not public).
   */
  async play(job: CiBuildRow, actor: Actor, variables: { key: string; value: string }[] = []): Promise<CiBuildRow> {
    if (job.status !== 'manual' && job.status !== 'scheduled') throw Errors.badRequest('Unplayable Job');
    const now = dbNow();
    const own = (JSON.parse(job.yaml_variables) as { key: string }[]).filter((v) => !variables.some((x) => x.key === v.key));
    const yamlVariables = JSON.stringify([...own, ...variables.map((v) => ({ key: v.key, value: v.value, public: false }))]);
    const res = await this.k
      .updateTable('ci_builds')
      .set({
        status: job.type === 'build' ? 'pending' : 'created',
        user_id: actor.user?.id ?? job.user_id,
        yaml_variables: yamlVariables,
        queued_at: now,
        updated_at: now,
        lock_version: sql<number>`lock_version + 1`,
      })
      .where('id', '=', job.id)
      .where('status', '=', job.status)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw Errors.badRequest('Unplayable Job');
    await this.replayed(job);
    this.jobsQueued();
    return this.reload(job.id);
  }

  /** Ci::BuildEraseService: the log and the artifacts go; erased_at is set. */
  async erase(job: CiBuildRow): Promise<CiBuildRow> {
    const artifacts = await this.k.selectFrom('ci_job_artifacts').select(['id', 'file_type']).where('job_id', '=', job.id).execute();
    const erasable = (COMPLETED_STATUSES as readonly string[]).includes(job.status) && (artifacts.length > 0 || job.trace_size > 0);
    if (!erasable || job.erased_at) throw Errors.forbidden('Job is not erasable!');
    await this.deps.ci.artifacts.eraseJob(job);
    const now = dbNow();
    await this.k.transaction().execute(async (trx) => {
      await trx.deleteFrom('ci_build_trace_chunks').where('build_id', '=', job.id).execute();
      await trx.updateTable('ci_builds').set({ trace_size: 0, erased_at: now, artifacts_expire_at: null, updated_at: now }).where('id', '=', job.id).execute();
    });
    return this.reload(job.id);
  }

  /**
   * One round of the timeout check (the worker's): running jobs past their timeout fail with
   * job_execution_timeout; pending jobs nobody took for a day with stuck_or_timeout_failure. Answers
   * how many jobs it failed.
   */
  async failStale(now = Date.now()): Promise<number> {
    const running = await this.k.selectFrom('ci_builds').selectAll().where('status', '=', 'running').where('type', '=', 'build').execute();
    let n = 0;
    for (const job of running) {
      const started = job.started_at ? Date.parse(job.started_at) : NaN;
      const timeout = (job.timeout ?? 3600) * 1000;
      if (!Number.isNaN(started) && started + timeout < now && (await this.finish(job, 'failed', 'job_execution_timeout'))) n++;
    }
    const stuckBefore = new Date(now - STUCK_PENDING_MS).toISOString();
    const stuck = await this.k
      .selectFrom('ci_builds')
      .selectAll()
      .where('status', '=', 'pending')
      .where('type', '=', 'build')
      .where('queued_at', '<', stuckBefore)
      .execute();
    for (const job of stuck) if (await this.finish(job, 'failed', 'stuck_or_timeout_failure')) n++;
    return n;
  }
}

export type { RunnerInfo };
