// claimJobs: every leased kind of job is claimed at most MAX_CLAIMS times when its lease runs out (its process
// died while running it); then it is not run again — the kind's giveUp settles what it was doing and the job
// fails for good. The claim itself counts the attempt, so a process that dies in the middle counts too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/build-app.ts';
import { claimJobs, INTERRUPTED, MAX_CLAIMS, queuedJob } from '../../src/jobs/job-row.ts';
import { IMPORT_JOB } from '../../src/domain/import-export/import/import.service.ts';
import { SYSTEM_EVENT_JOB } from '../../src/domain/core/system-events.ts';
import { MERGEABILITY_JOB } from '../../src/domain/merge-requests/merge.service.ts';
import { nowIso } from '../../src/lib/time.ts';

const PAST = '2000-01-01T00:00:00.000Z';
/** a job another process claimed `attempts` times and died with */
const interrupted = (kind: string, payload: unknown, attempts: number) => ({
  ...queuedJob(kind, payload),
  state: 'running',
  attempts,
  locked_by: 'dead:1',
  locked_until: PAST,
});

test('claimJobs: a claim counts at once; an expired lease is taken again below MAX_CLAIMS, given up at it; queued jobs are always due', async (t) => {
  const ta = await buildTestApp(t);
  const k = ta.c.db.kysely;
  assert.equal(MAX_CLAIMS, 3);
  const ids = [];
  for (const values of [
    queuedJob('test_kind', { n: 0 }),
    interrupted('test_kind', { n: 1 }, 2),
    interrupted('test_kind', { n: 2 }, 3),
    { ...queuedJob('test_kind', { n: 3 }), attempts: 5 }, // put back by its own service's retries
    { ...interrupted('test_kind', { n: 4 }, 1), locked_until: new Date(Date.now() + 60_000).toISOString() }, // a live lease
  ])
    ids.push((await k.insertInto('jobs').values(values).returning('id').executeTakeFirstOrThrow()).id);
  const givenUp: unknown[] = [];
  const claimed = await claimJobs(ta.c.db, 'test_kind', 'me', {
    leaseMs: 60_000,
    limit: 10,
    giveUp: async (job) => {
      const row = await k.selectFrom('jobs').select(['state', 'locked_by']).where('id', '=', job.id).executeTakeFirstOrThrow();
      givenUp.push({ ...job, row }); // held by this worker while it is settled
    },
  });
  assert.deepEqual(
    claimed.map((j) => [j.payload, j.attempts]),
    [
      ['{"n":0}', 0],
      ['{"n":1}', 2],
      ['{"n":3}', 5],
    ],
  );
  assert.deepEqual(givenUp, [{ id: ids[2], payload: '{"n":2}', attempts: 3, row: { state: 'running', locked_by: 'me' } }]);
  const rows = await k.selectFrom('jobs').select(['state', 'attempts', 'locked_by', 'last_error']).where('id', 'in', ids).orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => [r.state, r.attempts, r.locked_by, r.last_error]),
    [
      ['running', 1, 'me', null],
      ['running', 3, 'me', null],
      ['failed', 3, null, INTERRUPTED],
      ['running', 6, 'me', null],
      ['running', 1, 'dead:1', null],
    ],
  );

  // the job taken for the third time dies too: never claimed again
  await k.updateTable('jobs').set({ locked_until: PAST }).where('id', '=', ids[1]).execute();
  assert.deepEqual(await claimJobs(ta.c.db, 'test_kind', 'other', { leaseMs: 60_000, limit: 10 }), []);
  const third = await k.selectFrom('jobs').select(['state', 'attempts', 'last_error']).where('id', '=', ids[1]).executeTakeFirstOrThrow();
  assert.deepEqual(third, { state: 'failed', attempts: 3, last_error: INTERRUPTED });
});

test('a project import interrupted MAX_CLAIMS times: failed with import_error, not run again', async (t) => {
  const ta = await buildTestApp(t);
  const k = ta.c.db.kysely;
  const project = await ta.seed.project({ path: 'interrupted' });
  const now = nowIso();
  await k
    .insertInto('project_imports')
    .values({
      project_id: project.id,
      user_id: null,
      import_type: 'gitlab_project',
      source: 'file',
      source_params: null,
      status: 'started',
      correlation_id: 'c'.repeat(32),
      import_error: null,
      failed_relations: '[]',
      store_key: null,
      override_params: '{}',
      created_at: now,
      updated_at: now,
      started_at: now,
      finished_at: null,
    })
    .execute();
  await k
    .insertInto('jobs')
    .values(interrupted(IMPORT_JOB, { project_id: project.id }, 3))
    .execute();
  assert.equal(await ta.c.importExport.imports.runQueued(), 0);
  const res = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/import`, headers: ta.root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual([res.json().import_status, res.json().import_error], ['failed', 'The import was interrupted too many times']);
  const job = await k.selectFrom('jobs').select(['state', 'last_error']).where('kind', '=', IMPORT_JOB).executeTakeFirstOrThrow();
  assert.deepEqual(job, { state: 'failed', last_error: INTERRUPTED });
});

test('every leased kind: a system event and a mergeability check interrupted MAX_CLAIMS times fail without running', async (t) => {
  const ta = await buildTestApp(t);
  const k = ta.c.db.kysely;
  await ta.c.worker.drain();
  const before = await k.selectFrom('hook_deliveries').select('id').execute();
  await ta.app.inject({ method: 'POST', url: '/api/v4/hooks', headers: ta.root, payload: { url: 'http://127.0.0.1:9/never' } });
  await k
    .insertInto('jobs')
    .values(interrupted(SYSTEM_EVENT_JOB, { event_name: 'user_create', user_id: 1, name: 'x', username: 'x', email: 'x@x' }, 3))
    .execute();
  await k
    .insertInto('jobs')
    .values(interrupted(MERGEABILITY_JOB, { ids: [123456] }, 3))
    .execute();
  assert.equal(await ta.c.deliveries.dispatch(), 0);
  await ta.c.merges.runQueuedChecks();
  const jobs = await k.selectFrom('jobs').select(['kind', 'state', 'last_error']).where('locked_until', '=', PAST).execute();
  assert.deepEqual(jobs, []);
  const failed = await k.selectFrom('jobs').select(['kind', 'state', 'last_error']).where('last_error', '=', INTERRUPTED).orderBy('id').execute();
  assert.deepEqual(failed, [
    { kind: SYSTEM_EVENT_JOB, state: 'failed', last_error: INTERRUPTED },
    { kind: MERGEABILITY_JOB, state: 'failed', last_error: INTERRUPTED },
  ]);
  // the event was not fanned out
  assert.deepEqual(await k.selectFrom('hook_deliveries').select('id').execute(), before);
});
