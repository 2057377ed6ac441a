// The jobs registry on a real database: a kind's payload is checked when it is queued; a round claims the
// due jobs oldest first, runs them, queues a failure again after its backoff, and releases the job; a job
// whose process died MAX_CLAIMS times is given up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { buildTestApp } from '../helpers/build-app.ts';
import { INTERRUPTED, MAX_CLAIMS } from '../../src/jobs/job-row.ts';
import { defineJob, FinalFailure, InvalidPayload, Jobs, jobKind, linearBackoff } from '../../src/jobs/registry.ts';

const PAST = '2000-01-01T00:00:00.000Z';
const Echo = jobKind('registry_test', Type.Object({ n: Type.Integer() }));

async function setup(t: import('node:test').TestContext, fail: (n: number) => Error | null = () => null) {
  const ta = await buildTestApp(t);
  const k = ta.c.db.kysely;
  const ran: { n: number; claimedBefore: number }[] = [];
  const givenUp: number[] = [];
  const jobs = new Jobs(ta.c.db, ta.c.log);
  jobs.register(
    defineJob({
      kind: Echo,
      what: 'a test job',
      leaseMs: 60_000,
      concurrency: 2,
      backoff: linearBackoff(3, 60_000),
      giveUp: async (p) => {
        givenUp.push(p.n);
      },
      run: async (p, ctx) => {
        ran.push({ n: p.n, claimedBefore: ctx.claimedBefore });
        const e = fail(p.n);
        if (e) throw e;
      },
    }),
  );
  const rows = () =>
    k.selectFrom('jobs').select(['id', 'state', 'attempts', 'last_error', 'run_at', 'locked_by']).where('kind', '=', Echo.name).orderBy('id').execute();
  return { ta, k, jobs, ran, givenUp, rows };
}

test("queue: the payload is checked against the kind's schema; queueOnce keeps one waiting job", async (t) => {
  const { k, rows } = await setup(t);
  await k.transaction().execute((trx) => Echo.queue(trx, { n: 1 }));
  await assert.rejects(
    k.transaction().execute((trx) => Echo.queue(trx, { n: 'one' } as never)),
    (e) => e instanceof InvalidPayload && /registry_test/.test(e.message),
  );
  await assert.rejects(
    k.transaction().execute((trx) => Echo.queueOnce(trx, {} as never)),
    InvalidPayload,
  );
  await k.transaction().execute((trx) => Echo.queueOnce(trx, { n: 1 }));
  assert.deepEqual(
    (await rows()).map((r) => [r.state, r.attempts]),
    [['queued', 0]],
  );
});

test('a round claims up to `concurrency` due jobs oldest first, runs them and releases them done', async (t) => {
  const { k, jobs, ran, rows } = await setup(t);
  for (const n of [1, 2, 3]) await k.transaction().execute((trx) => Echo.queue(trx, { n }));
  assert.equal(await jobs.round(Echo.name), 2);
  assert.deepEqual(ran, [
    { n: 1, claimedBefore: 0 },
    { n: 2, claimedBefore: 0 },
  ]);
  assert.equal(await jobs.round(Echo.name), 1);
  assert.equal(await jobs.round(Echo.name), 0);
  assert.deepEqual(
    (await rows()).map((r) => [r.state, r.attempts, r.last_error, r.locked_by]),
    [
      ['done', 1, null, null],
      ['done', 1, null, null],
      ['done', 1, null, null],
    ],
  );
});

test('a failed run is queued again after its backoff, and fails for good at its last attempt or on a final failure', async (t) => {
  const { k, jobs, ran, rows } = await setup(t, (n) => (n === 2 ? new FinalFailure('no use') : new Error(`failed ${n}`)));
  await k.transaction().execute((trx) => Echo.queue(trx, { n: 1 }));
  await k.transaction().execute((trx) => Echo.queue(trx, { n: 2 }));
  const before = Date.now();
  assert.equal(await jobs.round(Echo.name), 2);
  let [retried, final] = await rows();
  assert.deepEqual([retried.state, retried.attempts, retried.last_error, retried.locked_by], ['queued', 1, 'failed 1', null]);
  const wait = Date.parse(retried.run_at) - before;
  assert.ok(wait >= 60_000 && wait < 70_000, `the first retry waits one step (${wait} ms)`);
  assert.deepEqual([final.state, final.attempts, final.last_error], ['failed', 1, 'no use']);
  assert.equal(await jobs.round(Echo.name), 0, 'not due yet');

  await k.updateTable('jobs').set({ run_at: PAST }).where('id', '=', retried.id).execute();
  assert.equal(await jobs.round(Echo.name), 1);
  [retried] = await rows();
  assert.equal(retried.state, 'queued');
  assert.ok(Date.parse(retried.run_at) - Date.now() > 110_000, 'the second retry waits two steps');

  await k.updateTable('jobs').set({ run_at: PAST }).where('id', '=', retried.id).execute();
  assert.equal(await jobs.round(Echo.name), 1);
  [retried] = await rows();
  assert.deepEqual([retried.state, retried.attempts, retried.last_error], ['failed', 3, 'failed 1']);
  assert.deepEqual(
    ran.map((r) => r.n),
    [1, 2, 1, 1],
  );
});

test('a job whose process died MAX_CLAIMS times is given up; below that it is claimed again', async (t) => {
  const { k, jobs, ran, givenUp, rows } = await setup(t);
  for (const [n, attempts] of [
    [1, MAX_CLAIMS - 1],
    [2, MAX_CLAIMS],
  ]) {
    await k
      .insertInto('jobs')
      .values({ ...Echo.row({ n }), state: 'running', attempts, locked_by: 'dead:1', locked_until: PAST })
      .execute();
  }
  assert.equal(await jobs.round(Echo.name), 1);
  assert.deepEqual(ran, [{ n: 1, claimedBefore: MAX_CLAIMS - 1 }]);
  assert.deepEqual(givenUp, [2]);
  assert.deepEqual(
    (await rows()).map((r) => [r.state, r.attempts, r.last_error]),
    [
      ['done', MAX_CLAIMS, null],
      ['failed', MAX_CLAIMS, INTERRUPTED],
    ],
  );
});

test('a row whose payload does not match the schema fails without running', async (t) => {
  const { k, jobs, ran, rows } = await setup(t);
  await k
    .insertInto('jobs')
    .values({ ...Echo.row({ n: 1 }), payload: '{"n":"x"}' })
    .execute();
  assert.equal(await jobs.round(Echo.name), 1);
  assert.deepEqual(ran, []);
  const [row] = await rows();
  assert.equal(row.state, 'failed');
  assert.match(row.last_error ?? '', /invalid payload/);
});
