// CI fixtures: runners, pipelines and jobs as rows (each test shows its preconditions without going
// through the services under test); a suite's shared app; a project of its own group with a member per role and
// its CI file committed, or pushed over HTTP; and a runner taking the pending jobs through the runner API.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../src/config.ts';
import type { Container } from '../../src/container.ts';
import type { CiBuildRow, CiPipelineRow, CiRunnerRow, NamespaceRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { nowIso } from '../../src/lib/time.ts';
import { randomToken, tokenDigest } from '../../src/lib/secrets.ts';
import type { JobOptions } from '../../src/domain/ci/job-options.ts';
import { buildTestApp, EXTERNAL_URL, type TestApp } from './build-app.ts';
import { cloneUrl } from './server.ts';
import { runGit, workTree, type WorkTree } from './git.ts';

/** A CI file of one job that runs on every push. */
export const ONE_JOB_CI = 'build:\n  script: [echo hi]\n';

/**
 * A CI file of merge request pipelines: `test` in merge request pipelines and on the default branch, `branch-only`
 * in every branch pipeline.
 */
export const MR_PIPELINE_CI = `test:
  script: make test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
branch-only:
  script: echo branch
`;

/**
 * One app for a describe block: built before its first test, closed after its last (the suite's shared fixture,
 * also in a shard). Call it in the describe's body; its fields are there once the suite runs.
 */
export function suiteApp(overrides: Partial<Config> = {}): TestApp {
  const ctx = {} as TestApp;
  let hooks: (() => unknown)[] = [];
  before(async () => {
    Object.assign(ctx, await buildTestApp({ after: (fn: () => unknown) => void hooks.push(fn) }, overrides));
  });
  after(async () => {
    for (const fn of hooks.reverse()) await fn();
    hooks = [];
  });
  return ctx;
}

export interface CiProject<R extends string> {
  g: NamespaceRow;
  project: ProjectRow;
  users: Record<R, UserRow>;
  /** each member's token headers */
  as: Record<R, Record<string, string>>;
  /** /api/v4/projects/:id */
  url: string;
  /** the project's web URL */
  web: string;
}

/**
 * A private project of its own group (`group`/`Name`, project `app`/`App` with a repository unless told) with one
 * group member per role at its level, each with a token, in the order given; then, through the API, the CI file
 * committed on main and the branches made, by the member named.
 */
export async function ciProject<R extends string>(
  ctx: TestApp,
  opts: {
    group: { path: string; name: string };
    project?: { path: string; name: string; repo: boolean };
    /** role → access level */
    members: Record<R, number>;
    username: (role: NoInfer<R>) => string;
    ci?: { file: string; content: string; by: NoInfer<R> };
    branches?: { branch: string; ref: string; by: NoInfer<R> }[];
  },
): Promise<CiProject<R>> {
  const { seed } = ctx;
  const g = await seed.group(opts.group);
  const p = opts.project ?? { path: 'app', name: 'App', repo: true };
  const project = p.repo
    ? (await seed.repoProject({ namespace: g, path: p.path, name: p.name })).project
    : await seed.project({ namespace: g, path: p.path, name: p.name });
  const users = {} as Record<R, UserRow>;
  const as = {} as Record<R, Record<string, string>>;
  for (const [role, level] of Object.entries(opts.members) as [R, number][]) {
    const u = await seed.user({ username: opts.username(role) });
    await seed.member({ group: g }, u, level);
    users[role] = u;
    as[role] = (await seed.token(u)).headers;
  }
  const url = `/api/v4/projects/${project.id}`;
  if (opts.ci) {
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: as[opts.ci.by],
      payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: opts.ci.file, content: opts.ci.content }] },
    });
    assert.equal(r.statusCode, 201, r.body);
  }
  for (const b of opts.branches ?? []) {
    const r = await ctx.app.inject({ method: 'POST', url: `${url}/repository/branches`, headers: as[b.by], payload: { branch: b.branch, ref: b.ref } });
    assert.equal(r.statusCode, 201, r.body);
  }
  return { g, project, users, as, url, web: `${EXTERNAL_URL}/${g.full_path}/${project.path}` };
}

/**
 * A working copy of a project's repository whose pushes go over HTTP to the test server as `user` with `secret`
 * (so they make push events and pipelines), with `ci` committed as .gitlab-ci.yml and pushed to main. Push with
 * `pushOver` (asynchronous: the server is this process).
 */
export async function pushedCi(
  t: { after(fn: () => unknown): void },
  at: { base: string; dir: string; fullPath: string; user: string; secret: string },
  ci: string,
): Promise<WorkTree> {
  const w = workTree(t, at.dir);
  w.git(['remote', 'set-url', 'origin', cloneUrl(at.base, at.fullPath, at.user, at.secret)]);
  w.write('.gitlab-ci.yml', ci).commit('ci');
  await pushOver(w, 'main');
  return w;
}

/** `git push origin HEAD:<branch>` over HTTP, without blocking the in-process server. */
export async function pushOver(w: WorkTree, branch: string): Promise<void> {
  await runGit(w.dir, ['push', '-q', 'origin', `HEAD:${branch}`]);
}

/** A job a runner took: its payload (POST /jobs/request's answer) and its pipeline. */
export interface TakenJob {
  payload: any;
  pipelineId: number;
}

/**
 * A runner at work through the runner API: takes every pending job it may (POST /jobs/request) and reports the
 * end `end` chooses (PUT /jobs/:id), or leaves the job running (null). Returns the jobs it left running.
 */
export async function runPendingJobs(
  ctx: Pick<TestApp, 'app' | 'c'>,
  runnerToken: string,
  end: (job: TakenJob) => 'success' | 'failed' | null,
): Promise<TakenJob[]> {
  const running: TakenJob[] = [];
  for (;;) {
    const r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: runnerToken } });
    if (r.statusCode !== 201) return running;
    const payload = JSON.parse(r.body);
    const row = await ctx.c.db.kysely.selectFrom('ci_builds').select('pipeline_id').where('id', '=', payload.id).executeTakeFirstOrThrow();
    const job = { payload, pipelineId: row.pipeline_id };
    const state = end(job);
    if (state === null) {
      running.push(job);
      continue;
    }
    const done = await ctx.app.inject({ method: 'PUT', url: `/api/v4/jobs/${payload.id}`, payload: { token: payload.token, state } });
    assert.equal(done.statusCode, 200, done.body);
  }
}

async function salt(c: Container): Promise<string> {
  const row = await c.db.kysely.selectFrom('instance_secrets').select('value').where('name', '=', 'token_salt').executeTakeFirstOrThrow();
  return row.value;
}

/** The stored digest of a CI secret (runner, registration or job token). */
export async function ciDigest(c: Container, token: string): Promise<string> {
  return tokenDigest(await salt(c), token);
}

export interface RunnerAttrs {
  runner_type: 'instance_type' | 'group_type' | 'project_type';
  projects: ProjectRow[];
  groups: number[];
  description: string;
  tag_list: string[];
  run_untagged: boolean;
  active: boolean;
  locked: boolean;
  access_level: 'not_protected' | 'ref_protected';
  contacted_at: string | null;
  created_at: string;
  maximum_timeout: number | null;
}

/** A runner row with its authentication token (glrt-…). */
export async function seedRunner(c: Container, attrs: Partial<RunnerAttrs> = {}): Promise<{ runner: CiRunnerRow; token: string }> {
  const token = `glrt-${randomToken(20)}`;
  const now = nowIso();
  const type = attrs.runner_type ?? (attrs.projects?.length ? 'project_type' : attrs.groups?.length ? 'group_type' : 'instance_type');
  const runner = await c.db.kysely
    .insertInto('ci_runners')
    .values({
      runner_type: type,
      token_digest: await ciDigest(c, token),
      description: attrs.description ?? 'test runner',
      tag_list: JSON.stringify(attrs.tag_list ?? []),
      run_untagged: attrs.run_untagged === false ? 0 : 1,
      active: attrs.active === false ? 0 : 1,
      locked: attrs.locked ? 1 : 0,
      access_level: attrs.access_level ?? 'not_protected',
      maximum_timeout: attrs.maximum_timeout ?? null,
      contacted_at: attrs.contacted_at ?? null,
      created_at: attrs.created_at ?? now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (const p of attrs.projects ?? []) {
    await c.db.kysely.insertInto('ci_runner_projects').values({ runner_id: runner.id, project_id: p.id, created_at: now }).execute();
  }
  for (const g of attrs.groups ?? []) {
    await c.db.kysely.insertInto('ci_runner_namespaces').values({ runner_id: runner.id, namespace_id: g }).execute();
  }
  return { runner, token };
}

export interface JobAttrs {
  name: string;
  stage: string;
  stage_idx: number;
  status: string;
  type: 'build' | 'bridge' | 'generic';
  options: JobOptions;
  tag_list: string[];
  when: string;
  allow_failure: boolean;
  runner_id: number | null;
  user_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  artifacts_expire_at: string | null;
}

let iidCounter = 0;

/**
 * A pipeline with its jobs as rows (no CI file involved). `sha` defaults to 40 zeros' worth of a fake
 * commit; pass the real one when the test clones or reads the repository.
 */
export async function seedPipeline(
  c: Container,
  project: ProjectRow,
  attrs: Partial<{
    ref: string;
    sha: string;
    tag: boolean;
    status: string;
    source: string;
    user_id: number;
    created_at: string;
    parent_pipeline_id: number;
  }> = {},
  jobs: Partial<JobAttrs>[] = [],
): Promise<{ pipeline: CiPipelineRow; jobs: CiBuildRow[] }> {
  const now = attrs.created_at ?? nowIso();
  const sha = attrs.sha ?? 'a'.repeat(40);
  const ref = attrs.ref ?? 'main';
  const pipeline = await c.db.kysely
    .insertInto('ci_pipelines')
    .values({
      iid: 1_000_000 + ++iidCounter,
      project_id: project.id,
      ref,
      tag: attrs.tag ? 1 : 0,
      sha,
      source: attrs.source ?? 'push',
      status: attrs.status ?? 'pending',
      user_id: attrs.user_id ?? null,
      parent_pipeline_id: attrs.parent_pipeline_id ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const rows: CiBuildRow[] = [];
  for (const j of jobs) {
    rows.push(
      await c.db.kysely
        .insertInto('ci_builds')
        .values({
          project_id: project.id,
          pipeline_id: pipeline.id,
          type: j.type ?? 'build',
          name: j.name ?? `job${rows.length + 1}`,
          stage: j.stage ?? 'test',
          stage_idx: j.stage_idx ?? 0,
          status: j.status ?? 'pending',
          ref,
          tag: attrs.tag ? 1 : 0,
          sha,
          user_id: j.user_id ?? attrs.user_id ?? null,
          runner_id: j.runner_id ?? null,
          options: JSON.stringify(j.options ?? { script: ['echo hello'] }),
          tag_list: JSON.stringify(j.tag_list ?? []),
          when: j.when ?? 'on_success',
          allow_failure: j.allow_failure ? 1 : 0,
          created_at: j.created_at ?? now,
          updated_at: now,
          queued_at: j.status === 'pending' || j.status === undefined ? now : null,
          started_at: j.started_at ?? null,
          finished_at: j.finished_at ?? null,
          artifacts_expire_at: j.artifacts_expire_at ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
  }
  return { pipeline, jobs: rows };
}
