// Pipeline trigger tokens (GitLab's Ci::Trigger, Ci::PipelineTriggers::{Create,Update}Service,
// Ci::PipelineTriggerService): Maintainers manage a project's tokens; a token (glptt-…), or the job token
// of a running job, creates a pipeline for a ref without any other credential.
import type { CiPipelineRow, CiTriggerRow, ProjectRow } from '../../../db/schema.ts';
import { isInt32 } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import crypto from 'node:crypto';
import { nowIso } from '../../../lib/time.ts';
import { type Actor, userActor } from '../../access/actor.ts';
import type { ProjectAccess } from '../../access/policy.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import type { CiDeps } from '../deps.ts';
import { CREATE_MESSAGES, pipelineAllowed } from '../pipelines/pipelines.service.ts';

export const TRIGGER_TOKEN_PREFIX = 'glptt-';
/** Ci::PipelineTriggerService::PAYLOAD_VARIABLE_KEY: the request (less the token) as a file variable */
export const TRIGGER_PAYLOAD_KEY = 'TRIGGER_PAYLOAD';

export const TRIGGER_MESSAGES = {
  update: 'The current user is not authorized to manage the pipeline trigger token',
  variables: 'variables needs to be a map of key-valued strings',
} as const;

/** A trigger as the caller sees it: its token in full for those who may administer it, else its first characters. */
export interface TriggerView {
  row: CiTriggerRow;
  token: string;
}

export interface TriggerPipelineInput {
  ref: string;
  token: string;
  variables: Record<string, string>;
  /** everything the request carried but the token: TRIGGER_PAYLOAD */
  payload: Record<string, unknown>;
}

/** Ci::Trigger#short_token: the first four characters after the prefix. */
export function shortToken(token: string): string {
  return token.startsWith(TRIGGER_TOKEN_PREFIX) ? token.slice(TRIGGER_TOKEN_PREFIX.length, TRIGGER_TOKEN_PREFIX.length + 4) : token.slice(0, 4);
}

export class TriggersService {
  constructor(private readonly deps: CiDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  /** admin_build (manage_trigger): Maintainers and administrators; 404 for a project the caller may not see. */
  async project(actor: Actor, idOrPath: string): Promise<ResolvedProject> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    if (!this.mayManage(actor, ctx.access)) throw Errors.forbidden();
    return ctx;
  }

  /** The project for PUT, which GitLab checks per trigger (the owner's rule) rather than per project. */
  visible(actor: Actor, idOrPath: string): Promise<ResolvedProject> {
    return this.deps.resolve.project(actor, idOrPath);
  }

  mayManage(actor: Actor, access: ProjectAccess): boolean {
    return actor.isAdmin || access.level >= 40;
  }

  /** TriggerPolicy admin_trigger: admin_build and the trigger's owner, or the project's Owner. */
  mayAdminister(actor: Actor, access: ProjectAccess, trigger: CiTriggerRow): boolean {
    if (!this.mayManage(actor, access)) return false;
    return actor.isAdmin || access.level >= 50 || (actor.user !== null && trigger.owner_id === actor.user.id);
  }

  view(actor: Actor, access: ProjectAccess, row: CiTriggerRow): TriggerView {
    const token = this.deps.box.open(row.token_sealed);
    return { row, token: this.mayAdminister(actor, access, row) ? token : shortToken(token) };
  }

  list(project: ProjectRow) {
    return this.k.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).orderBy('id');
  }

  /** user_project.triggers.find: ActiveRecord's 404 Not found. */
  async find(project: ProjectRow, id: number): Promise<CiTriggerRow> {
    if (!isInt32(id)) throw Errors.recordNotFound();
    const row = await this.k.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).where('id', '=', id).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  async create(actor: Actor, project: ProjectRow, description: string): Promise<CiTriggerRow> {
    const token = TRIGGER_TOKEN_PREFIX + crypto.randomBytes(20).toString('hex');
    const now = nowIso();
    return this.k
      .insertInto('ci_triggers')
      .values({
        project_id: project.id,
        owner_id: actor.user?.id ?? null,
        description,
        token_digest: this.deps.digest(token),
        token_sealed: this.deps.box.seal(token),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(actor: Actor, access: ProjectAccess, trigger: CiTriggerRow, description: string | undefined): Promise<CiTriggerRow> {
    if (!this.mayAdminister(actor, access, trigger)) throw Errors.forbidden(TRIGGER_MESSAGES.update);
    if (description === undefined) return trigger;
    return this.k.updateTable('ci_triggers').set({ description, updated_at: nowIso() }).where('id', '=', trigger.id).returningAll().executeTakeFirstOrThrow();
  }

  async destroy(trigger: CiTriggerRow): Promise<void> {
    await this.k.deleteFrom('ci_triggers').where('id', '=', trigger.id).execute();
  }

  /**
   * POST /projects/:id/trigger/pipeline (Ci::PipelineTriggerService): the project by id or path whoever
   * asks; a trigger token of that project creates a `trigger` pipeline as the trigger's owner, the job
   * token of a running job a `pipeline` pipeline as the job's user when the project's job token scope lets
   * the job's project in. Anything else is 404, so that no project's presence leaks. A pipeline that
   * cannot be created is 400 with the reasons under `base`.
   */
  async triggerPipeline(idOrPath: string, input: TriggerPipelineInput): Promise<{ pipeline: CiPipelineRow; project: ProjectRow }> {
    let found = await this.deps.resolve.findProjectRow(idOrPath);
    if (found && 'moved' in found) found = await this.deps.resolve.findProjectRow(found.moved);
    if (!found || 'moved' in found) throw Errors.notFound();
    const { project, namespace } = found;
    const variables = [
      ...Object.entries(input.variables).map(([key, value]) => ({ key, value })),
      { key: TRIGGER_PAYLOAD_KEY, value: JSON.stringify(input.payload), variable_type: 'file' },
    ];

    const trigger = await this.k.selectFrom('ci_triggers').selectAll().where('token_digest', '=', this.deps.digest(input.token)).executeTakeFirst();
    let actor: Actor;
    let source: string;
    if (trigger) {
      if (trigger.project_id !== project.id) throw Errors.notFound();
      if (trigger.expires_at && Date.parse(trigger.expires_at) <= Date.now()) throw Errors.notFound();
      const owner = trigger.owner_id === null ? undefined : await this.k.selectFrom('users').selectAll().where('id', '=', trigger.owner_id).executeTakeFirst();
      if (!owner) throw Errors.refused({ base: ['Insufficient permissions to create a new pipeline'] });
      actor = userActor(owner, { isAdmin: false, credential: 'none' });
      source = 'trigger';
    } else {
      const job = await this.deps.ci.jobs.resolveToken(input.token);
      if (!job) throw Errors.notFound();
      // the job's user, through its job token: the policy applies the project's job token scope
      actor = { ...userActor(job.user, { isAdmin: false }), kind: 'job', credential: 'job_token', scopes: ['api'], jobId: job.jobId };
      source = 'pipeline';
      const access = await this.deps.policy.project(actor, project, namespace);
      if (!access.abilities.has('read_project')) throw Errors.notFound();
    }

    // Ci::CreatePipelineService's abilities: create_pipeline, then the right to write the ref
    const access = await this.deps.policy.project(actor, project, namespace);
    if (!pipelineAllowed(actor, project, access, 'create')) throw Errors.refused({ base: ['Insufficient permissions to create a new pipeline'] });
    if (!(await this.deps.ci.pipelines.mayRunOn(actor, { project, namespace, access }, input.ref))) {
      throw Errors.refused({ base: [`Insufficient permissions for protected ref '${input.ref}'`] });
    }
    const result = await this.deps.ci.pipelines.build(project, actor, {
      ref: input.ref,
      source,
      variables,
      saveOnErrors: false,
      triggerId: trigger?.id,
    });
    if ('failure' in result) throw Errors.refused({ base: result.errors ?? [CREATE_MESSAGES[result.failure]] });
    if (trigger) await this.k.updateTable('ci_triggers').set({ last_used: result.pipeline.created_at }).where('id', '=', trigger.id).execute();
    return { pipeline: result.pipeline, project };
  }
}
