// Pipelines (GitLab Ci::CreatePipelineService, Ci::ProcessPipelineService): the CI file of a ref read
// from the repository, the jobs it creates, and how a pipeline moves on as its jobs finish.
// See docs/design-notes.md, CI.
import { type Kysely, sql } from 'kysely';
import type { CiBuildRow, CiPipelineRow, Database, MergeRequestRow, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import { nextIid } from '../../../db/internal-ids.ts';
import { BRANCH_PREFIX, TAG_PREFIX, ZERO_SHA } from '../../../git/refs.ts';
import type { Repository } from '../../../git/repository.ts';
import { isInt32 } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import { type Actor, userActor } from '../../access/actor.ts';
import type { ProjectAccess } from '../../access/policy.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import { settingsOf } from '../../core/project-settings.ts';
import { onRefsChanged } from '../../repository/push-events.ts';
import { type EvalContext, evaluateJob, evaluateWorkflow } from '../config/evaluate.ts';
import { type ParsedCi, parseCiLimited } from '../config/parse-pool.ts';
import { ciLint, type LintOptions } from '../config/lint.ts';
import { mergeRequestVariables } from '../merge-request-variables.ts';
import { loadRefRules, protectionDefaults } from '../../repository/branch-protection.ts';
import { ciConfigPathVariable, includeReader, readCiFileContent, readPipelineConfig } from '../config/source.ts';
import { parseDuration } from '../../../lib/duration.ts';
import type { CiDeps } from '../deps.ts';
import type { JobOptions, JobVariable } from '../job-options.ts';
import { CANCELABLE, COMPLETED, compositeStatus } from './status.ts';
import { HookRows, heard, recordBuildEvent, recordPipelineEvent } from '../hook-data.ts';
import { defineSweep } from '../../../jobs/registry.ts';
import type { Versions } from '../../../db/versions.ts';

type FinishedListener = (pipeline: CiPipelineRow, versions?: Versions) => Promise<void>;

/** the statuses of a pipeline whose job can start, which a running job turns into running (compositeStatus) */
const STARTING = ['created', 'pending', 'preparing', 'waiting_for_resource', 'scheduled', 'manual'];

export interface CreatePipelineInput {
  ref: string;
  /** push | web | api | trigger | parent_pipeline | external */
  source: string;
  /** the commit; resolved from ref when absent */
  sha?: string;
  beforeSha?: string | null;
  variables?: { key: string; value: string; variable_type?: string }[];
  /** whether ref is a tag (looked up when absent: a branch of that name first) */
  tag?: boolean;
  /** child pipelines: the parent and its trigger job, and the CI files to read instead of the project's */
  parent?: { pipeline: CiPipelineRow; job: CiBuildRow; include: string[] };
  /** false (the API): an invalid file creates no pipeline, its errors come back (default true) */
  saveOnErrors?: boolean;
  /**
   * a merge request pipeline (source merge_request_event, detached): its merge request, and the paths of its
   * target and source projects; `ref` is then refs/merge-requests/<iid>/head and `sha` the head
   */
  mergeRequest?: { row: MergeRequestRow; projectPath: string; sourceProjectPath: string };
  /** source schedule: the schedule that runs it; source trigger: the trigger whose token was used */
  scheduleId?: number;
  triggerId?: number;
}

/** Why no pipeline was created (the API's 400 bodies). */
export type CreateFailure = 'reference_not_found' | 'missing_config' | 'filtered_by_workflow' | 'no_jobs' | 'config_error';

export const CREATE_MESSAGES: Record<CreateFailure, string> = {
  reference_not_found: 'Reference not found',
  missing_config: 'Missing CI config file',
  filtered_by_workflow: 'Pipeline filtered out by workflow rules.',
  no_jobs: 'Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.',
  config_error: 'Invalid configuration',
};

/** A function computed once, on first call. */
function memo<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= fn();
    return p;
  };
}

const SKIP_CI = /\[(ci[ _-]skip|skip[ _-]ci)\]/i;

interface NewJob {
  type: string;
  name: string;
  stage: string;
  stage_idx: number;
  options: JobOptions;
  yaml_variables: JobVariable[];
  tag_list: string[];
  when: string;
  allow_failure: boolean;
  environment: string | null;
  timeout: number | null;
}

function slug(ref: string): string {
  return ref
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
}

/** What a caller may do with a project's pipelines. */
export type PipelineAbility = 'read' | 'create' | 'update' | 'destroy';

/** The caller's right to a project's pipelines (read_pipeline honours builds_access_level), for a project it sees. */
export function pipelineAllowed(actor: Actor, project: ProjectRow, access: ProjectAccess, ability: PipelineAbility): boolean {
  const level = actor.isAdmin ? 50 : access.level;
  const feature = settingsOf(project).builds_access_level;
  const open = feature === 'enabled' && project.visibility !== 'private' && access.abilities.has('read_project');
  if (feature === 'disabled' && !actor.isAdmin) return false;
  const allowed: Record<PipelineAbility, boolean> = {
    read: level >= 20 || open,
    create: level >= 30 && project.archived === 0,
    update: level >= 30 && project.archived === 0,
    destroy: level >= 50,
  };
  return allowed[ability];
}

export class PipelinesService {
  /** delayed jobs whose time came are found by the clock */
  readonly scheduled = defineSweep({ name: 'delayed jobs', everyMs: 5_000, run: () => this.processScheduled() });

  private readonly finishedListeners: FinishedListener[] = [];

  /**
   * Who hears of a pipeline that finished (merge requests' auto-merge): after its status is committed, with the
   * table versions the operation read before its writes when it read them.
   */
  onFinished(listener: FinishedListener): void {
    this.finishedListeners.push(listener);
  }

  constructor(protected readonly deps: CiDeps) {
    onRefsChanged(deps.db, async (target, changes) => {
      // a project whose CI is off gets no pipelines (Project#builds_enabled?)
      if (settingsOf(target.project).builds_access_level === 'disabled') return;
      for (const c of changes) {
        if (c.after === ZERO_SHA) continue;
        const tag = c.ref.startsWith(TAG_PREFIX);
        if (!tag && !c.ref.startsWith(BRANCH_PREFIX)) continue;
        try {
          const sha = (await target.repo.info(`${c.after}^{commit}`))?.sha;
          if (!sha) continue;
          const commit = await target.repo.commit(sha);
          if (commit && SKIP_CI.test(commit.message)) continue;
          // the pusher, without admin mode (a push carries no session)
          const actor = userActor(target.user, { isAdmin: false, credential: 'none' });
          await this.create(target.project, actor, {
            ref: c.ref.slice(tag ? TAG_PREFIX.length : BRANCH_PREFIX.length),
            tag,
            sha,
            beforeSha: c.before,
            source: 'push',
          });
        } catch (e) {
          deps.log.error({ err: e, project: target.project.id, ref: c.ref }, 'creating the pipeline of a push failed');
        }
      }
    });
  }

  private get k() {
    return this.deps.db.kysely;
  }

  // ---- access (the API and the web pages ask the same questions) ---------------------------------

  /**
   * The project and the caller's right to its pipelines (read_pipeline honours builds_access_level):
   * 404 for a project the caller may not see, 403 without the ability.
   */
  async project(actor: Actor, idOrPath: string | number, ability: PipelineAbility): Promise<ResolvedProject> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    if (!pipelineAllowed(actor, ctx.project, ctx.access, ability)) throw Errors.forbidden();
    return ctx;
  }

  /** all_pipelines.find: ActiveRecord's RecordNotFound (404 Not found) for another project's or none. */
  async find(project: ProjectRow, id: number): Promise<CiPipelineRow> {
    if (!isInt32(id)) throw Errors.recordNotFound();
    const row = await this.k.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).where('id', '=', id).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  /** A project's pipelines for its list page, newest first (child pipelines show under their parents). */
  list(project: ProjectRow, f: { status?: string; ref?: string; sha?: string } = {}) {
    let q = this.k.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).where('source', '!=', 'parent_pipeline');
    if (f.status) q = q.where('status', '=', f.status);
    if (f.ref) q = q.where('ref', '=', f.ref);
    if (f.sha) q = q.where('sha', '=', f.sha);
    return q.orderBy('id', 'desc');
  }

  /** The current jobs (builds and bridges, not the retried) of a pipeline, by stage. */
  jobsOf(pipeline: Pick<CiPipelineRow, 'id'>): Promise<CiBuildRow[]> {
    return this.k
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', pipeline.id)
      .where('retried', '=', 0)
      .orderBy('stage_idx')
      .orderBy('id')
      .execute();
  }

  /** read_build on a pipeline's jobs: non-members see them only when the project's jobs are public. */
  mayReadJobs(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
    return actor.isAdmin || access.level >= 20 || settingsOf(project).public_jobs !== false;
  }

  /**
   * Ci::CreatePipelineService's ref check: Developers may create a pipeline for a ref they may push to
   * (a protected branch needs that right); administrators for any ref.
   */
  async mayRunOn(actor: Actor, ctx: Pick<ResolvedProject, 'project' | 'namespace' | 'access'>, ref: string): Promise<boolean> {
    if (actor.isAdmin) return true;
    return this.deps.repository.canPushTo(ctx, actor, ref);
  }

  /**
   * Creates a pipeline for `ref` from its `.service-ci.yml` (a failed pipeline with yaml_errors when the
   * file is invalid; null when the ref has no CI file or no job applies, as GitLab creates none).
   */
  async create(project: ProjectRow, actor: Actor, input: CreatePipelineInput): Promise<CiPipelineRow | null> {
    const r = await this.build(project, actor, input);
    return 'pipeline' in r ? r.pipeline : null;
  }

  /** create, saying why no pipeline was created. */
  async build(
    project: ProjectRow,
    actor: Actor,
    input: CreatePipelineInput,
  ): Promise<{ pipeline: CiPipelineRow } | { failure: CreateFailure; errors?: string[] }> {
    const repo = this.deps.repos.repository(project);
    let tag = input.tag;
    let sha = input.sha ?? null;
    if (tag === undefined || sha === null) {
      const branch = tag === true ? undefined : await repo.branch(input.ref);
      const t = branch ? undefined : await repo.tag(input.ref);
      if (tag === undefined) tag = !branch && !!t;
      if (sha === null) {
        const ref = branch ? BRANCH_PREFIX + input.ref : t ? TAG_PREFIX + input.ref : null;
        sha = ref ? ((await repo.info(`${ref}^{commit}`))?.sha ?? null) : null;
      }
      if (!branch && !t) return { failure: 'reference_not_found' };
    }
    if (!sha) return { failure: 'reference_not_found' };
    const commit = await repo.commit(sha);
    if (!commit) return { failure: 'reference_not_found' };

    const limits = { timeoutMs: this.deps.config.ciConfigTimeoutMs };
    let parsed: ParsedCi;
    if (input.parent) {
      const content = input.parent.include.map((p) => `  - local: ${JSON.stringify(p)}`).join('\n');
      parsed = await parseCiLimited(`include:\n${content}\n`, includeReader(this.deps, actor, project, repo, sha), limits);
    } else {
      const source = await readPipelineConfig(this.deps, actor, project, repo, sha, limits);
      if (!source) return { failure: 'missing_config' };
      parsed = source.parsed;
    }

    const ns = await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const pipelineVars = (input.variables ?? []).map((v) => ({ key: v.key, value: v.value, variable_type: v.variable_type ?? 'env_var' }));
    const base = {
      project,
      actor,
      ref: input.ref,
      tag,
      sha,
      beforeSha: input.beforeSha ?? ZERO_SHA,
      source: input.source,
      committedAt: commit.committer ? new Date(commit.committer.time * 1000).toISOString() : null,
      variables: pipelineVars,
      parent: input.parent,
      mergeRequestId: input.mergeRequest?.row.id ?? null,
      scheduleId: input.scheduleId ?? null,
      triggerId: input.triggerId ?? null,
    };
    if (!parsed.config) {
      if (input.saveOnErrors === false) return { failure: 'config_error', errors: parsed.errors };
      return { pipeline: await this.insert({ ...base, status: 'failed', yamlErrors: parsed.errors.join(', '), jobs: [] }) };
    }
    const cfg = parsed.config;
    const mr = input.mergeRequest;
    // a merge request pipeline's rules and CI_COMMIT_REF_NAME see the source branch
    const ruleRef = mr ? mr.row.source_branch : input.ref;
    const predefined = this.predefined(project, ns, {
      ref: ruleRef,
      tag,
      sha,
      beforeSha: base.beforeSha,
      source: input.source,
      message: commit.message,
      actor,
      configPath: await ciConfigPathVariable(this.deps, project),
      mergeRequest: mr,
    });
    // what rules read: the file's variables, then the CI/CD variables of the instance, groups and project that a
    // job of this ref could have (unscoped), then the pipeline's own
    const refRules = await loadRefRules(this.k, project, ns, protectionDefaults(await this.deps.settings.get()));
    const protectedRef = tag ? refRules.tag(input.ref) !== null : refRules.isProtectedBranch(input.ref);
    const secrets = await this.deps.ci.variables.forJob(project, ns, { protectedRef, environment: null });
    const ctxVars = {
      ...predefined,
      ...cfg.variables,
      ...Object.fromEntries(secrets.map((v) => [v.key, v.value])),
      ...Object.fromEntries(pipelineVars.map((v) => [v.key, v.value])),
    };
    const ctx: EvalContext = {
      ref: ruleRef,
      tag,
      source: input.source,
      variables: ctxVars,
      files: memo(async () => {
        // Gitlab::Ci::Build::Rules::Rule::Clause::Exists looks at 10,000 files at most
        const { stdout } = await repo.run(['ls-tree', '-r', '--name-only', '-z', sha], { okCodes: [0, 128] });
        return stdout.toString('utf8').split('\0').filter(Boolean).slice(0, 10_000);
      }),
      changed: memo(async () => {
        // only a push that moved an existing ref has a diff; anything else counts as changed
        const before = input.beforeSha;
        if (input.source !== 'push' || !before || before === ZERO_SHA) return null;
        const r = await repo.run(['diff', '--name-only', '-z', '--no-renames', before, sha], { okCodes: [0, 128] });
        if (r.code !== 0) return null;
        return r.stdout.toString('utf8').split('\0').filter(Boolean);
      }),
    };
    const workflow = await evaluateWorkflow(cfg.workflowRules, ctx);
    if (!workflow.run) return { failure: 'filtered_by_workflow' };
    ctx.variables = { ...ctx.variables, ...workflow.variables };
    const globalVars = { ...cfg.variables, ...workflow.variables };

    const jobs: NewJob[] = [];
    for (const spec of cfg.jobs) {
      // a job's own variables are readable in its rules; pipeline variables still win
      const pipelineOwn = Object.fromEntries(pipelineVars.map((v) => [v.key, v.value]));
      const outcome = await evaluateJob(spec, { ...ctx, variables: { ...ctx.variables, ...spec.variables, ...pipelineOwn } });
      if (!outcome) continue;
      const inherited = Object.entries(globalVars).filter(([k]) =>
        Array.isArray(spec.inheritVariables) ? spec.inheritVariables.includes(k) : spec.inheritVariables,
      );
      const vars = { ...Object.fromEntries(inherited), ...spec.variables, ...(outcome.variables ?? {}) };
      const options: JobOptions = { ...spec.options };
      if (outcome.startIn) options.start_in = outcome.startIn;
      const allowFailure = outcome.allowFailure ?? spec.allowFailure ?? (outcome.when === 'manual' && !spec.rules);
      jobs.push({
        type: spec.type,
        name: spec.name,
        stage: spec.stage,
        stage_idx: spec.stageIdx,
        options,
        yaml_variables: Object.entries(vars).map(([key, value]) => ({ key, value, public: true })),
        tag_list: spec.tags,
        when: outcome.when,
        allow_failure: allowFailure,
        environment: spec.environment,
        timeout: options.timeout ?? null,
      });
    }
    if (!jobs.length) return { failure: 'no_jobs' };
    // needs of jobs left out by rules (Chain::Seed): optional ones are dropped, others an error
    const names = new Set(jobs.map((j) => j.name));
    const errors: string[] = [];
    for (const j of jobs) {
      if (!j.options.needs) continue;
      for (const n of j.options.needs) {
        if (!names.has(n.job) && !n.optional)
          errors.push(
            `'${j.name}' job needs '${n.job}' job, but '${n.job}' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional.`,
          );
      }
      j.options.needs = j.options.needs.filter((n) => names.has(n.job));
      if (j.options.dependencies) j.options.dependencies = j.options.dependencies.filter((d) => names.has(d));
    }
    if (errors.length && input.saveOnErrors === false) return { failure: 'config_error', errors };
    if (errors.length) return { pipeline: await this.insert({ ...base, status: 'failed', yamlErrors: errors.join(', '), jobs: [] }) };
    const pipeline = await this.insert({ ...base, status: 'created', yamlErrors: null, jobs });
    await this.process(pipeline.id);
    return { pipeline: await this.k.selectFrom('ci_pipelines').selectAll().where('id', '=', pipeline.id).executeTakeFirstOrThrow() };
  }

  /** The CI lint of `content` as a pipeline of the project at `sha` would read it. */
  lint(ctx: { project: ProjectRow; namespace: NamespaceRow }, actor: Actor, content: string, sha: string | null, opts: LintOptions) {
    return ciLint(this.deps, ctx, actor, content, sha, opts);
  }

  /** The text of the project's CI file at `sha` ('' when there is none). */
  ciFileContent(project: ProjectRow, repo: Repository, sha: string): Promise<string> {
    return readCiFileContent(this.deps, project, repo, sha);
  }

  /** The predefined variables rules can read (a subset of GitLab's). */
  predefined(
    project: ProjectRow,
    ns: NamespaceRow,
    p: {
      ref: string;
      tag: boolean;
      sha: string;
      beforeSha: string;
      source: string;
      message: string;
      actor: Actor;
      configPath: string;
      mergeRequest?: CreatePipelineInput['mergeRequest'];
    },
  ): Record<string, string> {
    const path = `${ns.full_path}/${project.path}`;
    const url = this.deps.config.externalUrl;
    const v: Record<string, string> = {
      CI: 'true',
      GITLAB_CI: 'true',
      CI_SERVER_URL: url,
      CI_PROJECT_ID: String(project.id),
      CI_PROJECT_NAME: project.path,
      CI_PROJECT_TITLE: project.name,
      CI_PROJECT_PATH: path,
      CI_PROJECT_PATH_SLUG: slug(path),
      CI_PROJECT_NAMESPACE: ns.full_path,
      CI_PROJECT_ROOT_NAMESPACE: ns.full_path.split('/')[0],
      CI_PROJECT_URL: `${url}/${path}`,
      CI_PROJECT_VISIBILITY: project.visibility,
      CI_DEFAULT_BRANCH: project.default_branch ?? 'main',
      CI_CONFIG_PATH: p.configPath,
      CI_COMMIT_SHA: p.sha,
      CI_COMMIT_SHORT_SHA: p.sha.slice(0, 8),
      CI_COMMIT_BEFORE_SHA: p.beforeSha,
      CI_COMMIT_REF_NAME: p.ref,
      CI_COMMIT_REF_SLUG: slug(p.ref),
      CI_COMMIT_MESSAGE: p.message,
      CI_COMMIT_TITLE: p.message.split('\n')[0],
      CI_PIPELINE_SOURCE: p.source,
    };
    if (p.tag) v.CI_COMMIT_TAG = p.ref;
    else if (p.mergeRequest) Object.assign(v, mergeRequestVariables(p.mergeRequest.row, { externalUrl: url, ...p.mergeRequest }));
    else v.CI_COMMIT_BRANCH = p.ref;
    if (p.actor.user) {
      v.GITLAB_USER_ID = String(p.actor.user.id);
      v.GITLAB_USER_LOGIN = p.actor.user.username;
      v.GITLAB_USER_NAME = p.actor.user.name;
      v.GITLAB_USER_EMAIL = p.actor.user.email;
    }
    return v;
  }

  private async insert(p: {
    project: ProjectRow;
    actor: Actor;
    ref: string;
    tag: boolean;
    sha: string;
    beforeSha: string;
    source: string;
    committedAt: string | null;
    variables: { key: string; value: string; variable_type: string }[];
    parent?: CreatePipelineInput['parent'];
    mergeRequestId: number | null;
    scheduleId: number | null;
    triggerId: number | null;
    status: string;
    yamlErrors: string | null;
    jobs: NewJob[];
  }): Promise<CiPipelineRow> {
    const now = nowIso();
    const userId = p.actor.user?.id ?? null;
    return this.k.transaction().execute(async (trx) => {
      const iid = await nextIid(trx, 'ci_pipelines', 'Project', p.project.id);
      const pipeline = await trx
        .insertInto('ci_pipelines')
        .values({
          iid,
          project_id: p.project.id,
          ref: p.ref,
          tag: p.tag ? 1 : 0,
          sha: p.sha,
          before_sha: p.beforeSha,
          source: p.source,
          status: p.status,
          yaml_errors: p.yamlErrors,
          failure_reason: p.yamlErrors !== null ? 'config_error' : null,
          user_id: userId,
          parent_pipeline_id: p.parent?.pipeline.id ?? null,
          parent_job_id: p.parent?.job.id ?? null,
          merge_request_id: p.mergeRequestId,
          pipeline_schedule_id: p.scheduleId,
          trigger_id: p.triggerId,
          variables: JSON.stringify(p.variables),
          created_at: now,
          updated_at: now,
          finished_at: p.status === 'failed' ? now : null,
          committed_at: p.committedAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      for (const j of p.jobs) {
        await trx
          .insertInto('ci_builds')
          .values({
            project_id: p.project.id,
            pipeline_id: pipeline.id,
            type: j.type,
            name: j.name,
            stage: j.stage,
            stage_idx: j.stage_idx,
            status: 'created',
            ref: p.ref,
            tag: p.tag ? 1 : 0,
            sha: p.sha,
            user_id: userId,
            options: JSON.stringify(j.options),
            yaml_variables: JSON.stringify(j.yaml_variables),
            tag_list: JSON.stringify(j.tag_list),
            when: j.when,
            allow_failure: j.allow_failure ? 1 : 0,
            environment: j.environment,
            timeout: j.timeout,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      return pipeline;
    });
  }

  /**
   * Moves a pipeline on after one of its jobs changed state: created jobs whose stage (or needs) is
   * done become pending / manual / skipped, trigger jobs create their child pipeline, and the pipeline's
   * status (and its parent's trigger job) follows its jobs. Idempotent; jobs call it after every change.
   */
  async process(pipelineId: number, held?: HookRows): Promise<CiPipelineRow | undefined> {
    const result = await this.k.transaction().execute((trx) => this.processIn(trx, pipelineId, held));
    if (!result) return undefined;
    if (result.queued) this.deps.ci.jobs.jobsQueued();
    for (const delay of result.delays) {
      setTimeout(() => void this.process(pipelineId).catch((e) => this.deps.log.error({ err: e }, 'processing a pipeline failed')), delay).unref();
    }
    for (const bridge of result.bridges) await this.triggerChild(result.pipeline, bridge);
    if (result.bridges.length) await this.process(pipelineId);
    if (result.finished && result.pipeline.parent_job_id) await this.childFinished(result.pipeline);
    if (result.finished) {
      for (const l of this.finishedListeners) {
        await l(result.pipeline, held?.versions).catch((e) =>
          this.deps.log.error({ err: e, pipeline: pipelineId }, 'a listener of a finished pipeline failed'),
        );
      }
    }
    return result.bridges.length ? undefined : result.pipeline;
  }

  /**
   * A runner took one of the pipeline's jobs (pending → running). That changes nothing else processing would: no
   * stage completes, no job is queued, the coverage stays; the pipeline's status becomes running (a running job
   * makes any composite running). So when no hook hears the pipeline's events this is one read and at most one
   * write, conditional on the status read, instead of the processing transaction. A pipeline in another state
   * (finished, canceling, a configuration error), one whose status moved meanwhile, or one whose events a hook
   * hears (its event is recorded in the processing's transaction) is processed in full.
   */
  async jobStarted(pipelineId: number, held: HookRows): Promise<CiPipelineRow | undefined> {
    const pipeline = await this.k.selectFrom('ci_pipelines').selectAll().where('id', '=', pipelineId).executeTakeFirst();
    if (!pipeline) return undefined;
    const plain = pipeline.finished_at === null && pipeline.failure_reason !== 'config_error';
    if (plain && pipeline.status === 'running' && pipeline.started_at !== null) return pipeline;
    if (plain && STARTING.includes(pipeline.status) && !(await heard(held, this.deps, pipeline.project_id, 'pipeline_events'))) {
      const now = nowIso();
      const patch: Partial<CiPipelineRow> = { status: 'running', updated_at: now };
      if (pipeline.started_at === null) {
        patch.started_at = now;
        patch.queued_duration = Math.max(0, Math.round((Date.parse(now) - Date.parse(pipeline.created_at)) / 1000));
      }
      let q = this.k.updateTable('ci_pipelines').set(patch).where('id', '=', pipelineId).where('status', '=', pipeline.status);
      if (pipeline.started_at === null) q = q.where('started_at', 'is', null);
      const r = await q.executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) return { ...pipeline, ...patch };
    }
    return this.process(pipelineId, held);
  }

  /** `held`: rows the caller holds (the project, runner, users), so the hooks do not read them again */
  private async processIn(trx: Kysely<Database>, pipelineId: number, held?: HookRows) {
    let q = trx.selectFrom('ci_pipelines').selectAll().where('id', '=', pipelineId);
    if (this.deps.db.dialect === 'postgres') q = q.forUpdate();
    const pipeline = await q.executeTakeFirst();
    if (!pipeline) return null;
    const rows = held ? held.in(trx, pipeline) : new HookRows(trx, { pipeline });
    const jobs = await trx
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', pipelineId)
      .where('retried', '=', 0)
      .orderBy('stage_idx')
      .orderBy('id')
      .execute();
    held?.holdJobs(pipelineId, jobs);
    const now = nowIso();
    let queued = false;
    const bridges: CiBuildRow[] = [];
    const delays: number[] = [];
    const byName = new Map(jobs.map((j) => [j.name, j]));
    const set = async (j: CiBuildRow, status: string, extra: Partial<CiBuildRow> = {}) => {
      await trx
        .updateTable('ci_builds')
        .set({ status, updated_at: now, ...extra, lock_version: sql`lock_version + 1` } as never)
        .where('id', '=', j.id)
        .execute();
      Object.assign(j, { status, updated_at: now, ...extra });
      await recordBuildEvent(rows, this.deps, j); // the job hook
    };
    for (let changed = true; changed; ) {
      changed = false;
      for (const j of jobs) {
        if (j.type === 'generic') continue;
        if (j.status === 'scheduled') {
          const opts = JSON.parse(j.options) as JobOptions;
          const due = Date.parse(j.queued_at ?? j.updated_at) + (parseDuration(opts.start_in) ?? 0) * 1000;
          if (Date.now() >= due) {
            await set(j, 'pending', { queued_at: now });
            queued = true;
            changed = true;
          } else delays.push(due - Date.now() + 50);
          continue;
        }
        if (j.status !== 'created') continue;
        const opts = JSON.parse(j.options) as JobOptions;
        const prereqs = opts.needs
          ? opts.needs.map((n) => byName.get(n.job)).filter((x): x is CiBuildRow => !!x)
          : jobs.filter((o) => o.stage_idx < j.stage_idx);
        const prior = compositeStatus(prereqs, !!opts.needs) ?? 'success';
        if (!COMPLETED.includes(prior)) continue;
        // Ci::ProcessBuildService#valid_statuses_for_build: a DAG job runs only after its needs passed
        const valid =
          j.when === 'on_failure' ? ['failed'] : j.when === 'always' ? ['success', 'failed', 'skipped'] : opts.needs ? ['success'] : ['success', 'skipped'];
        changed = true;
        if (!valid.includes(prior)) {
          await set(j, 'skipped');
          continue;
        }
        if (j.when === 'manual') await set(j, 'manual');
        else if (j.when === 'delayed') {
          await set(j, 'scheduled', { queued_at: now });
          delays.push((parseDuration(opts.start_in) ?? 0) * 1000 + 50);
        } else if (j.type === 'bridge') {
          // claimed here; the child pipeline is created after this transaction
          await set(j, 'running', { started_at: now, queued_at: now });
          bridges.push(j);
        } else {
          await set(j, 'pending', { queued_at: now });
          queued = true;
        }
      }
    }
    const status = compositeStatus(jobs) ?? 'skipped';
    const finished = COMPLETED.includes(status);
    const patch: Partial<CiPipelineRow> = {};
    if (status !== pipeline.status) patch.status = status;
    if (pipeline.failure_reason === 'config_error') return { pipeline, queued: false, bridges: [], delays: [], finished: false };
    const started = pipeline.started_at ?? (['running', 'success', 'failed', 'canceled'].includes(status) && jobs.some((j) => j.started_at) ? now : null);
    if (started && !pipeline.started_at) {
      patch.started_at = started;
      patch.queued_duration = Math.max(0, Math.round((Date.parse(started) - Date.parse(pipeline.created_at)) / 1000));
    }
    if (finished && !pipeline.finished_at) {
      patch.finished_at = now;
      patch.duration = started ? Math.max(0, Math.round((Date.parse(now) - Date.parse(started)) / 1000)) : null;
    } else if (!finished && pipeline.finished_at) {
      patch.finished_at = null;
      patch.duration = null;
    }
    const coverages = jobs.map((j) => j.coverage).filter((c): c is number => c !== null);
    const coverage = coverages.length ? (coverages.reduce((a, b) => a + b, 0) / coverages.length).toFixed(2) : null;
    if (coverage !== pipeline.coverage) patch.coverage = coverage;
    if (Object.keys(patch).length) {
      patch.updated_at = now;
      await trx.updateTable('ci_pipelines').set(patch).where('id', '=', pipeline.id).execute();
      if (patch.status !== undefined) await recordPipelineEvent(rows, this.deps, { ...pipeline, ...patch }, jobs); // the pipeline hook
    }
    return { pipeline: { ...pipeline, ...patch }, queued, bridges, delays, finished: finished && patch.status !== undefined };
  }

  /** A trigger job reached: its child pipeline (source parent_pipeline); the job follows it. */
  private async triggerChild(parent: CiPipelineRow, bridge: CiBuildRow): Promise<void> {
    const project = await this.k.selectFrom('projects').selectAll().where('id', '=', parent.project_id).executeTakeFirst();
    if (!project) return;
    const opts = JSON.parse(bridge.options) as JobOptions;
    const include = (opts.trigger?.include ?? []).map((i) => i.local);
    const user = bridge.user_id ? await this.k.selectFrom('users').selectAll().where('id', '=', bridge.user_id).executeTakeFirst() : undefined;
    const actor = {
      kind: user ? 'user' : 'anonymous',
      user: user ?? null,
      isAdmin: false,
      scopes: null,
      credential: 'none',
      tokenId: null,
      sudoFrom: null,
      impersonated: false,
      jobId: null,
    } as Actor;
    const yamlVars = opts.trigger?.forward?.yaml_variables === false ? [] : (JSON.parse(bridge.yaml_variables) as JobVariable[]);
    const pipelineVars = opts.trigger?.forward?.pipeline_variables ? (JSON.parse(parent.variables) as { key: string; value: string }[]) : [];
    const now = nowIso();
    let child: CiPipelineRow | null = null;
    try {
      const r = await this.build(project, actor, {
        ref: parent.ref,
        tag: parent.tag === 1,
        sha: parent.sha,
        beforeSha: parent.before_sha,
        source: 'parent_pipeline',
        variables: [...pipelineVars, ...yamlVars.map((v) => ({ key: v.key, value: v.value }))],
        parent: { pipeline: parent, job: bridge, include },
      });
      child = 'pipeline' in r ? r.pipeline : null;
    } catch (e) {
      this.deps.log.error({ err: e, bridge: bridge.id }, 'creating a child pipeline failed');
    }
    // CreateDownstreamPipelineService: a child that was not created successfully (none, or one failed
    // on its configuration) fails the trigger job, whatever its strategy
    if (!child || child.failure_reason === 'config_error') {
      await this.k
        .updateTable('ci_builds')
        .set({ status: 'failed', failure_reason: 'downstream_pipeline_creation_failed', finished_at: now, updated_at: now })
        .where('id', '=', bridge.id)
        .execute();
      return;
    }
    if (opts.trigger?.strategy === 'depend') await this.mirrorChild(child);
    else await this.k.updateTable('ci_builds').set({ status: 'success', finished_at: now, updated_at: now }).where('id', '=', bridge.id).execute();
  }

  /** strategy: depend — the trigger job takes the child's status once the child finished. */
  private async mirrorChild(child: CiPipelineRow): Promise<boolean> {
    if (!child.parent_job_id || !COMPLETED.includes(child.status)) return false;
    const bridge = await this.k.selectFrom('ci_builds').selectAll().where('id', '=', child.parent_job_id).executeTakeFirst();
    if (!bridge || bridge.status !== 'running') return false;
    const opts = JSON.parse(bridge.options) as JobOptions;
    if (opts.trigger?.strategy !== 'depend') return false;
    const now = nowIso();
    await this.k
      .updateTable('ci_builds')
      .set({
        status: child.status,
        failure_reason: child.status === 'failed' ? 'downstream_pipeline_failed' : null,
        finished_at: now,
        updated_at: now,
      })
      .where('id', '=', bridge.id)
      .where('status', '=', 'running')
      .execute();
    return true;
  }

  private async childFinished(child: CiPipelineRow): Promise<void> {
    if (child.parent_pipeline_id && (await this.mirrorChild(child))) await this.process(child.parent_pipeline_id);
  }

  // ---- actions ---------------------------------------------------------------------------------

  /** Ci::RetryPipelineService: failed and canceled jobs get a new job, skipped ones run again. */
  async retry(pipeline: CiPipelineRow, actor: Actor): Promise<void> {
    const now = nowIso();
    await this.k.transaction().execute(async (trx) => {
      const jobs = await trx
        .selectFrom('ci_builds')
        .selectAll()
        .where('pipeline_id', '=', pipeline.id)
        .where('retried', '=', 0)
        .where('type', '!=', 'generic')
        .execute();
      for (const j of jobs) {
        if (j.status === 'failed' || j.status === 'canceled') {
          await trx.updateTable('ci_builds').set({ retried: 1, updated_at: now }).where('id', '=', j.id).execute();
          const { id: _id, ...rest } = j;
          await trx
            .insertInto('ci_builds')
            .values({
              ...rest,
              status: 'created',
              retried: 0,
              user_id: actor.user?.id ?? j.user_id,
              runner_id: null,
              runner_system_id: null,
              token_digest: null,
              failure_reason: null,
              coverage: null,
              trace_size: 0,
              lock_version: 0,
              created_at: now,
              updated_at: now,
              queued_at: null,
              started_at: null,
              finished_at: null,
              erased_at: null,
              artifacts_expire_at: null,
            })
            .execute();
        } else if (j.status === 'skipped') {
          await trx.updateTable('ci_builds').set({ status: 'created', updated_at: now }).where('id', '=', j.id).execute();
        }
      }
      await trx.updateTable('ci_pipelines').set({ finished_at: null, duration: null, updated_at: now }).where('id', '=', pipeline.id).execute();
    });
    await this.process(pipeline.id);
  }

  /**
   * Delayed jobs whose start_in passed while no process timer was alive (a restart): their pipelines
   * processed again. For a worker round; returns how many pipelines were looked at.
   */
  async processScheduled(): Promise<number> {
    const rows = await this.k.selectFrom('ci_builds').select('pipeline_id').distinct().where('status', '=', 'scheduled').execute();
    for (const r of rows) await this.process(r.pipeline_id);
    return rows.length;
  }

  /**
   * Ci::ResetSkippedJobsService, after a manual job was played (or retried): the skipped jobs after it
   * (later stages, or needing it, transitively) go back to created, then the pipeline is processed.
   */
  async resetSkippedAfter(job: Pick<CiBuildRow, 'pipeline_id' | 'name' | 'stage_idx'>): Promise<void> {
    const jobs = await this.k.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', job.pipeline_id).where('retried', '=', 0).execute();
    const reset = new Set<number>();
    const after = new Set([job.name]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const j of jobs) {
        if (j.status !== 'skipped' || reset.has(j.id)) continue;
        const needs = (JSON.parse(j.options) as JobOptions).needs;
        const subsequent = needs ? needs.some((n) => after.has(n.job)) : j.stage_idx > job.stage_idx;
        if (!subsequent) continue;
        reset.add(j.id);
        after.add(j.name);
        grew = true;
      }
    }
    if (reset.size) {
      await this.k
        .updateTable('ci_builds')
        .set({ status: 'created', updated_at: nowIso() })
        .where('id', 'in', [...reset])
        .where('status', '=', 'skipped')
        .execute();
    }
    await this.process(job.pipeline_id);
  }

  /** Ci::CancelPipelineService: every cancelable job (and those of child pipelines) canceled. */
  async cancel(pipeline: CiPipelineRow): Promise<void> {
    const now = nowIso();
    const children = await this.k.selectFrom('ci_pipelines').selectAll().where('parent_pipeline_id', '=', pipeline.id).execute();
    for (const c of children) await this.cancel(c);
    await this.k
      .updateTable('ci_builds')
      .set({ status: 'canceled', token_digest: null, finished_at: now, updated_at: now })
      .where('pipeline_id', '=', pipeline.id)
      .where('retried', '=', 0)
      .where('type', '!=', 'generic')
      .where('status', 'in', CANCELABLE)
      .execute();
    await this.process(pipeline.id);
  }

  /** Deletes a pipeline with its jobs and its child pipelines. */
  async destroy(pipeline: CiPipelineRow): Promise<void> {
    const children = await this.k.selectFrom('ci_pipelines').selectAll().where('parent_pipeline_id', '=', pipeline.id).execute();
    for (const c of children) await this.destroy(c);
    // rows first (one transaction), then the artifacts' blobs: a reader never finds a row without its bytes
    const keys = await this.k.transaction().execute(async (trx) => {
      const ids = (await trx.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipeline.id).execute()).map((r) => r.id);
      let storeKeys: string[] = [];
      if (ids.length) {
        storeKeys = (await trx.selectFrom('ci_job_artifacts').select('store_key').where('job_id', 'in', ids).execute()).map((r) => r.store_key);
        await trx.deleteFrom('ci_build_trace_chunks').where('build_id', 'in', ids).execute();
        await trx.deleteFrom('ci_job_artifacts').where('job_id', 'in', ids).execute();
      }
      await trx.deleteFrom('ci_builds').where('pipeline_id', '=', pipeline.id).execute();
      await trx.deleteFrom('ci_pipelines').where('id', '=', pipeline.id).execute();
      return storeKeys;
    });
    for (const key of keys) {
      try {
        await this.deps.store.delete(key);
      } catch (e) {
        this.deps.log.warn({ err: e, key }, 'removing the artifact of a deleted pipeline failed');
      }
    }
  }

  /** The repository of a project (for routes that read the CI file). */
  repository(project: ProjectRow): Repository {
    return this.deps.repos.repository(project);
  }
}
