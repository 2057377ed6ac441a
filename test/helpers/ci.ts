// CI fixtures: runners, pipelines and jobs as rows (each test shows its preconditions without going
// through the services under test), and the CI file of a repository project.
import type { Container } from '../../src/container.ts';
import type { CiBuildRow, CiPipelineRow, CiRunnerRow, ProjectRow } from '../../src/db/schema.ts';
import { nowIso } from '../../src/lib/time.ts';
import { randomToken, tokenDigest } from '../../src/lib/secrets.ts';
import type { JobOptions } from '../../src/domain/ci/job-options.ts';

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
