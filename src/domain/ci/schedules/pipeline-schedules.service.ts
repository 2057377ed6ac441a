// Pipeline schedules (GitLab's Ci::PipelineSchedule, Ci::PipelineSchedules::{Create,Update,Play,TakeOwnership}Service,
// PipelineScheduleWorker, RunPipelineScheduleWorker): a ref, a cron line in a time zone and variables; the
// schedule round finds the schedules whose next_run_at came, moves each to its next time by a conditional
// update (two processes never both run one) and queues a run in the same transaction; the run creates the
// pipeline as the schedule's owner (source `schedule`), or none when the owner may no longer run pipelines
// on the ref. Play queues the same run for the one who asked, leaving next_run_at as it is.
import { Type } from 'typebox';
import type { CiPipelineScheduleRow, CiPipelineScheduleVariableRow, ProjectRow } from '../../../db/schema.ts';
import { isInt32, isUniqueViolation } from '../../../db/sql.ts';
import { Background } from '../../../jobs/background.ts';
import { defineJob, defineSweep, jobKind } from '../../../jobs/registry.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import { type Actor, userActor } from '../../access/actor.ts';
import type { ProjectAccess } from '../../access/policy.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import { settingsOf } from '../../core/project-settings.ts';
import type { CiDeps } from '../deps.ts';
import { CREATE_MESSAGES, pipelineAllowed } from '../pipelines/pipelines.service.ts';
import { nextRunAfter, validCron, validTimezone } from './cron.ts';

/** How often the round looks for due schedules. */
export const SCHEDULE_ROUND_MS = 15_000;

export const SCHEDULE_MESSAGES = {
  /** CronValidator and CronTimezoneValidator */
  cron: 'syntax is invalid',
  cronTimezone: 'syntax is invalid',
  blank: "can't be blank",
  create: 'The current user is not authorized to create the pipeline schedule',
  update: 'The current user is not authorized to update the pipeline schedule',
  variables: 'The current user is not authorized to set pipeline schedule variables',
  key: "can contain only letters, digits and '_'.",
  keyTooLong: 'is too long (maximum is 255 characters)',
} as const;

export const SCHEDULE_RUN_JOB = 'ci_pipeline_schedule_run';
const RunSchedule = jobKind(SCHEDULE_RUN_JOB, Type.Object({ schedule_id: Type.Integer(), user_id: Type.Integer() }));

export interface ScheduleInput {
  description?: string;
  ref?: string;
  cron?: string;
  cron_timezone?: string;
  active?: boolean;
}

export interface VariableInput {
  key: string;
  value?: string;
  variable_type?: string;
}

const VARIABLE_KEY = /^[a-zA-Z0-9_]+$/;

export class PipelineSchedulesService {
  /** due schedules, found by the clock */
  readonly due = defineSweep({ name: 'pipeline schedules', everyMs: SCHEDULE_ROUND_MS, run: () => this.runDue() });
  /** one run of a schedule (the round's or a play's) */
  readonly job = defineJob({
    kind: RunSchedule,
    what: 'a scheduled pipeline',
    leaseMs: 5 * 60_000,
    concurrency: 4,
    run: (p) => this.run(p.schedule_id, p.user_id),
  });
  private readonly background = new Background(
    () => this.deps.jobs.round(SCHEDULE_RUN_JOB),
    (e) => this.deps.log.error({ err: e }, 'running pipeline schedules failed'),
  );

  constructor(private readonly deps: CiDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  // ---- access ----------------------------------------------------------------------------------

  /** read_pipeline_schedule (Reporters; everyone who sees public jobs) or create_pipeline_schedule (Developers): 403. */
  async project(actor: Actor, idOrPath: string, ability: 'read' | 'create'): Promise<ResolvedProject> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    if (!pipelineAllowed(actor, ctx.project, ctx.access, ability)) throw Errors.forbidden();
    return ctx;
  }

  /** The schedule of the project, or 404 Pipeline Schedule Not Found. */
  async find(project: ProjectRow, id: number): Promise<CiPipelineScheduleRow> {
    const row = isInt32(id)
      ? await this.k.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', project.id).where('id', '=', id).executeTakeFirst()
      : undefined;
    if (!row) throw Errors.notFound('Pipeline Schedule');
    return row;
  }

  private owns(actor: Actor, s: CiPipelineScheduleRow): boolean {
    return actor.user !== null && s.owner_id === actor.user.id;
  }

  /** update_pipeline_schedule: its owner (who may still create pipelines) or a Maintainer. */
  mayUpdate(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): boolean {
    if (!pipelineAllowed(actor, ctx.project, ctx.access, 'create')) return false;
    return actor.isAdmin || ctx.access.level >= 40 || this.owns(actor, s);
  }

  /** admin_pipeline_schedule (delete, take ownership): Maintainers, and the owner of the schedule. */
  mayAdminister(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): boolean {
    return this.mayUpdate(actor, ctx, s);
  }

  /** play_pipeline_schedule: create_pipeline and the right to run pipelines on the schedule's ref. */
  async mayPlay(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): Promise<boolean> {
    if (!pipelineAllowed(actor, ctx.project, ctx.access, 'create')) return false;
    return this.deps.ci.pipelines.mayRunOn(actor, ctx, shortRef(s.ref).ref);
  }

  /** set_pipeline_variables: everyone who may create pipelines unless the project restricts pipeline variables. */
  maySetVariables(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
    if (actor.isAdmin) return true;
    const s = settingsOf(project);
    if (s.restrict_user_defined_variables !== true) return true;
    const min = { no_one_allowed: Infinity, developer: 30, maintainer: 40, owner: 50 }[String(s.ci_pipeline_variables_minimum_override_role)] ?? 30;
    return access.level >= min;
  }

  // ---- reads -----------------------------------------------------------------------------------

  /** Ci::PipelineSchedulesFinder: a project's schedules by id, `active`/`inactive` scopes. */
  list(project: ProjectRow, scope?: 'active' | 'inactive') {
    let q = this.k.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', project.id);
    if (scope) q = q.where('active', '=', scope === 'active' ? 1 : 0);
    return q.orderBy('id');
  }

  variables(scheduleId: number): Promise<CiPipelineScheduleVariableRow[]> {
    return this.k.selectFrom('ci_pipeline_schedule_variables').selectAll().where('pipeline_schedule_id', '=', scheduleId).orderBy('id').execute();
  }

  /** Ci::PipelineSchedule#last_pipeline. */
  lastPipeline(scheduleId: number) {
    return this.k.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', scheduleId).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /** The schedule's pipelines (PipelinesFinder with pipeline_schedules), oldest first unless `desc`. */
  pipelines(s: CiPipelineScheduleRow, sort: 'asc' | 'desc' = 'asc') {
    return this.k.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', s.id).orderBy('id', sort);
  }

  // ---- writes ----------------------------------------------------------------------------------

  /** The model's validations (Ci::PipelineSchedule), GitLab's attribute order. */
  private validate(s: { description: string; ref: string; cron: string; cron_timezone: string }): void {
    const errors: Record<string, string[]> = {};
    const add = (k: string, m: string) => void (errors[k] ??= []).push(m);
    if (!s.cron.trim()) add('cron', SCHEDULE_MESSAGES.blank);
    if (!validCron(s.cron)) add('cron', SCHEDULE_MESSAGES.cron);
    if (!s.cron_timezone) add('cron_timezone', SCHEDULE_MESSAGES.blank);
    if (!validTimezone(s.cron_timezone)) add('cron_timezone', SCHEDULE_MESSAGES.cronTimezone);
    if (!s.ref.trim()) add('ref', SCHEDULE_MESSAGES.blank);
    if (!s.description.trim()) add('description', SCHEDULE_MESSAGES.blank);
    if (Object.keys(errors).length) throw Errors.invalid(errors);
  }

  /** CronSchedulable#set_next_run_at: the cron line's next time after now. */
  private nextRun(cron: string, tz: string, from = new Date()): string | null {
    return nextRunAfter(cron, tz, from)?.toISOString() ?? null;
  }

  /** Ci::PipelineSchedules::CreateService: the caller owns it; a ref they may not run pipelines on is refused (400, base). */
  async create(actor: Actor, ctx: ResolvedProject, input: Required<Pick<ScheduleInput, 'description' | 'ref' | 'cron'>> & ScheduleInput) {
    const values = {
      description: input.description,
      ref: input.ref,
      cron: input.cron.trim(),
      cron_timezone: input.cron_timezone ?? 'UTC',
    };
    this.validate(values);
    if (!(await this.deps.ci.pipelines.mayRunOn(actor, ctx, shortRef(values.ref).ref))) throw Errors.invalid({ base: [SCHEDULE_MESSAGES.create] });
    const now = nowIso();
    return this.k
      .insertInto('ci_pipeline_schedules')
      .values({
        ...values,
        project_id: ctx.project.id,
        owner_id: actor.user?.id ?? null,
        active: input.active === false ? 0 : 1,
        next_run_at: this.nextRun(values.cron, values.cron_timezone),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Ci::PipelineSchedules::UpdateService: 403 without update_pipeline_schedule; the schedule is rescheduled. */
  async update(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow, input: ScheduleInput) {
    if (!this.mayUpdate(actor, ctx, s)) throw Errors.forbidden();
    const next = {
      description: input.description ?? s.description,
      ref: input.ref ?? s.ref,
      cron: input.cron !== undefined ? input.cron.trim() : s.cron,
      cron_timezone: input.cron_timezone ?? s.cron_timezone,
    };
    this.validate(next);
    if (!(await this.deps.ci.pipelines.mayRunOn(actor, ctx, shortRef(next.ref).ref))) throw Errors.invalid({ base: [SCHEDULE_MESSAGES.update] });
    return this.k
      .updateTable('ci_pipeline_schedules')
      .set({
        ...next,
        active: input.active === undefined ? s.active : input.active ? 1 : 0,
        next_run_at: this.nextRun(next.cron, next.cron_timezone),
        updated_at: nowIso(),
      })
      .where('id', '=', s.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** POST …/take_ownership: 403 without admin_pipeline_schedule; `changed` false when the caller owned it already. */
  async takeOwnership(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): Promise<{ row: CiPipelineScheduleRow; changed: boolean }> {
    if (!this.mayAdminister(actor, ctx, s)) throw Errors.forbidden();
    if (this.owns(actor, s)) return { row: s, changed: false };
    const row = await this.k
      .updateTable('ci_pipeline_schedules')
      .set({ owner_id: actor.user!.id, next_run_at: this.nextRun(s.cron, s.cron_timezone), updated_at: nowIso() })
      .where('id', '=', s.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, changed: true };
  }

  async destroy(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): Promise<void> {
    if (!this.mayAdminister(actor, ctx, s)) throw Errors.forbidden();
    await this.k.transaction().execute(async (trx) => {
      // has_many :pipelines, dependent: :nullify
      await trx.updateTable('ci_pipelines').set({ pipeline_schedule_id: null }).where('pipeline_schedule_id', '=', s.id).execute();
      await trx.deleteFrom('ci_pipeline_schedules').where('id', '=', s.id).execute();
    });
  }

  /** Ci::PipelineSchedules::PlayService: 403 without play_pipeline_schedule; a run queued for the caller. */
  async play(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): Promise<void> {
    if (!actor.user || !(await this.mayPlay(actor, ctx, s))) throw Errors.forbidden();
    await this.k.transaction().execute((trx) => RunSchedule.queue(trx, { schedule_id: s.id, user_id: actor.user!.id }));
    this.background.kick();
  }

  // ---- variables -------------------------------------------------------------------------------

  private checkVariable(v: { key: string; variable_type: string }, errors: Record<string, string[]>): void {
    const add = (k: string, m: string) => void (errors[k] ??= []).push(m);
    if (!v.key) add('key', SCHEDULE_MESSAGES.blank);
    if (v.key.length > 255) add('key', SCHEDULE_MESSAGES.keyTooLong);
    if (!VARIABLE_KEY.test(v.key)) add('key', SCHEDULE_MESSAGES.key);
  }

  /** 403 unless the caller may set pipeline variables and update the schedule. */
  private checkVariableWrite(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow): void {
    if (!this.maySetVariables(actor, ctx.project, ctx.access) || !this.mayUpdate(actor, ctx, s)) throw Errors.forbidden();
  }

  async createVariable(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow, input: VariableInput): Promise<CiPipelineScheduleVariableRow> {
    this.checkVariableWrite(actor, ctx, s);
    const v = { key: input.key, value: input.value ?? '', variable_type: input.variable_type ?? 'env_var' };
    const errors: Record<string, string[]> = {};
    this.checkVariable(v, errors);
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    const taken = () => Errors.invalid({ key: [`(${v.key}) has already been taken`] });
    const existing = await this.k
      .selectFrom('ci_pipeline_schedule_variables')
      .select('id')
      .where('pipeline_schedule_id', '=', s.id)
      .where('key', '=', v.key)
      .executeTakeFirst();
    if (existing) throw taken();
    const now = nowIso();
    try {
      return await this.k
        .insertInto('ci_pipeline_schedule_variables')
        .values({ ...v, pipeline_schedule_id: s.id, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
  }

  /** The schedule's variable `key`, or 404 Pipeline Schedule Variable Not Found. */
  async variable(s: CiPipelineScheduleRow, key: string): Promise<CiPipelineScheduleVariableRow> {
    const row = await this.k
      .selectFrom('ci_pipeline_schedule_variables')
      .selectAll()
      .where('pipeline_schedule_id', '=', s.id)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) throw Errors.notFound('Pipeline Schedule Variable');
    return row;
  }

  async updateVariable(
    actor: Actor,
    ctx: ResolvedProject,
    s: CiPipelineScheduleRow,
    key: string,
    input: Omit<VariableInput, 'key'>,
  ): Promise<CiPipelineScheduleVariableRow> {
    this.checkVariableWrite(actor, ctx, s);
    const row = await this.variable(s, key);
    const patch: { value?: string; variable_type?: string } = {};
    if (input.value !== undefined) patch.value = input.value;
    if (input.variable_type !== undefined) patch.variable_type = input.variable_type;
    if (!Object.keys(patch).length) return row;
    return this.k
      .updateTable('ci_pipeline_schedule_variables')
      .set({ ...patch, updated_at: nowIso() })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async deleteVariable(actor: Actor, ctx: ResolvedProject, s: CiPipelineScheduleRow, key: string): Promise<CiPipelineScheduleVariableRow> {
    if (!this.maySetVariables(actor, ctx.project, ctx.access) || !this.mayAdminister(actor, ctx, s)) throw Errors.forbidden();
    const row = await this.variable(s, key);
    await this.k.deleteFrom('ci_pipeline_schedule_variables').where('id', '=', row.id).execute();
    return row;
  }

  // ---- the round -------------------------------------------------------------------------------

  /**
   * PipelineScheduleWorker: every active schedule whose next_run_at is not after `now` moves to its next
   * time after `now` and gets a run queued, in one transaction, only if its next_run_at is still the one
   * read (another process that got there first wins). The runs are then drained. Returns how many
   * schedules this call claimed.
   */
  async runDue(now = new Date()): Promise<number> {
    const at = now.toISOString();
    const due = await this.k
      .selectFrom('ci_pipeline_schedules')
      .selectAll()
      .where('active', '=', 1)
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', at)
      .orderBy('next_run_at')
      .limit(500)
      .execute();
    let claimed = 0;
    for (const s of due) {
      const next = this.nextRun(s.cron, s.cron_timezone, now);
      const won = await this.k.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('ci_pipeline_schedules')
          .set({ next_run_at: next, updated_at: nowIso() })
          .where('id', '=', s.id)
          .where('next_run_at', '=', s.next_run_at)
          .where('active', '=', 1)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
        // RunPipelineScheduleWorker returns unless there is an owner
        if (s.owner_id !== null) await RunSchedule.queue(trx, { schedule_id: s.id, user_id: s.owner_id });
        return true;
      });
      if (won) claimed++;
    }
    if (claimed) while ((await this.deps.jobs.round(SCHEDULE_RUN_JOB)) > 0);
    return claimed;
  }

  /**
   * RunPipelineScheduleWorker#run_pipeline_schedule: the pipeline of the schedule's ref with its variables,
   * as `userId`, saved only when it can be created (save_on_errors: false); a user who may no longer create
   * pipelines on the ref (blocked, removed, a protected ref) gets none, and the reason goes to the log.
   */
  private async run(scheduleId: number, userId: number): Promise<void> {
    const s = await this.k.selectFrom('ci_pipeline_schedules').selectAll().where('id', '=', scheduleId).executeTakeFirst();
    if (!s) return;
    const project = await this.k.selectFrom('projects').selectAll().where('id', '=', s.project_id).executeTakeFirst();
    const user = await this.k.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    if (!project || !user) return;
    const log = this.deps.log.child({ schedule: s.id, project: project.id });
    if (user.state !== 'active') {
      log.info('a scheduled pipeline was not created: its user may not run pipelines');
      return;
    }
    const namespace = await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const actor = userActor(user, { isAdmin: false, credential: 'none' });
    const access = await this.deps.policy.project(actor, project, namespace);
    const { ref, tag } = shortRef(s.ref);
    if (!pipelineAllowed(actor, project, access, 'create') || !(await this.deps.ci.pipelines.mayRunOn(actor, { project, namespace, access }, ref))) {
      log.info('a scheduled pipeline was not created: its user may not run pipelines on the ref');
      return;
    }
    const variables = (await this.variables(s.id)).map((v) => ({ key: v.key, value: v.value, variable_type: v.variable_type }));
    const result = await this.deps.ci.pipelines.build(project, actor, { ref, tag, source: 'schedule', variables, saveOnErrors: false, scheduleId: s.id });
    if ('failure' in result) log.info({ errors: result.errors ?? [CREATE_MESSAGES[result.failure]] }, 'a scheduled pipeline was not created');
  }

  /** Resolves when the runs this process started are done (tests, shutdown). */
  idle(): Promise<void> {
    return this.background.idle();
  }
}

/** A schedule's ref as the pipeline takes it: `refs/heads/x` and `refs/tags/x` name a branch or a tag. */
export function shortRef(ref: string): { ref: string; tag: boolean | undefined } {
  if (ref.startsWith('refs/heads/')) return { ref: ref.slice('refs/heads/'.length), tag: false };
  if (ref.startsWith('refs/tags/')) return { ref: ref.slice('refs/tags/'.length), tag: true };
  return { ref, tag: undefined };
}
