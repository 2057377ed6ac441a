// Deliveries: a real git push to a running server reaches a local sink with the right headers, token
// and payload; filters; retries under one Idempotency-Key; the network rules at delivery time; several
// workers without double delivery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { startTestServer, cloneUrl } from '../helpers/server.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { startSink, type Sink } from '../helpers/sink.ts';
import { HookDeliveries } from '../../src/domain/hooks/deliveries.ts';
import { recordSystemEvent } from '../../src/domain/core/system-events.ts';
import { ZERO_SHA } from '../../src/git/refs.ts';
import { dbQueryDuration } from '../../src/metrics/registry.ts';

async function createHook(app: TestApp['app'], root: Record<string, string>, payload: Record<string, unknown>): Promise<number> {
  const res = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

const byEvent = (s: Sink) => s.received.map((r) => [r.json.event_name, r.json.ref ?? null]);

/** waits until no delivery is pending any more (sent, or failed for good): nothing is sent after that */
async function settled(c: TestApp['c']): Promise<void> {
  const deadline = Date.now() + 60_000; // bounds a hang only
  while ((await c.db.kysely.selectFrom('hook_deliveries').select('id').where('state', '=', 'pending').execute()).length) {
    assert.ok(Date.now() < deadline, 'a delivery is still pending');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a real git push: push, tag_push and repository_update deliveries with headers, token and payload', async (t) => {
  const { app, c, seed, base, root } = await startTestServer(t);
  const sink = await startSink(t);
  const all = await startSink(t);
  const other = await startSink(t);
  await createHook(app, root, { url: `${sink.url}/push`, token: 'push-secret', push_events: true, tag_push_events: true, repository_update_events: true });
  await createHook(app, root, { url: all.url, push_events: true, branch_filter_strategy: 'regex', push_events_branch_filter: '^feat' });
  await createHook(app, root, { url: other.url, push_events: true, push_events_branch_filter: 'release/*', repository_update_events: false });

  const owner = await seed.user();
  const ns = await seed.namespaceOf(owner);
  const { project } = await seed.repoProject({ owner, namespace: ns });
  await seed.member({ project }, owner, 50);
  const { token } = await seed.token(owner, { scopes: ['write_repository'] });
  await c.worker.drain();
  sink.received.length = all.received.length = other.received.length = 0; // project_create went to every hook

  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(base, `${ns.full_path}/${project.path}`, 'any', token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'main']);
  const first = w.write('a.txt', 'a\n').commit('First');
  w.checkout('feature', true);
  const feat = w.write('f.txt', 'f\n').commit('Feature');
  w.git(['tag', 'v1.0.0', first]);
  await runGit(w.dir, ['push', '-q', 'origin', 'main', 'feature', 'v1.0.0']);
  await c.worker.drain();

  assert.deepEqual(byEvent(sink).sort(), [
    ['push', 'refs/heads/feature'],
    ['push', 'refs/heads/main'],
    ['repository_update', null],
    ['tag_push', 'refs/tags/v1.0.0'],
  ]);
  const push = sink.received.find((r) => r.json.ref === 'refs/heads/main')!;
  assert.equal(push.url, '/push');
  assert.equal(push.headers['x-service-token'], 'push-secret');
  assert.equal(push.headers['x-service-event'], 'System Hook');
  assert.equal(push.headers['content-type'], 'application/json');
  assert.equal(push.headers['user-agent'], `Hearth/${c.config.version}`);
  assert.equal(push.headers['x-service-instance'], c.config.externalUrl);
  assert.match(String(push.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
  assert.deepEqual(
    {
      event_name: push.json.event_name,
      before: push.json.before,
      after: push.json.after,
      ref: push.json.ref,
      user_id: push.json.user_id,
      project_id: push.json.project_id,
      commits: push.json.commits.map((x: { id: string }) => x.id),
      total_commits_count: push.json.total_commits_count,
    },
    {
      event_name: 'push',
      before: ZERO_SHA,
      after: first,
      ref: 'refs/heads/main',
      user_id: owner.id,
      project_id: project.id,
      commits: [first],
      total_commits_count: 1,
    },
  );
  // the payload is exactly the outbox event
  const outbox = await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').execute();
  assert.ok(outbox.some((j) => j.payload === push.body));
  const update = sink.received.find((r) => r.json.event_name === 'repository_update')!;
  assert.deepEqual(update.json.changes.map((x: any) => x.ref).sort(), ['refs/heads/feature', 'refs/heads/main', 'refs/tags/v1.0.0']);
  // one event, one UUID for every hook; a key per hook
  const featureHere = sink.received.find((r) => r.json.ref === 'refs/heads/feature')!;
  const featureThere = all.received.find((r) => r.json.ref === 'refs/heads/feature')!; // deliveries run side by side: no order
  assert.equal(featureHere.headers['x-service-event-uuid'], featureThere.headers['x-service-event-uuid']);
  assert.notEqual(featureHere.headers['idempotency-key'], featureThere.headers['idempotency-key']);

  // regex "^feat": only the feature branch, and repository_update (default on); no tag pushes
  assert.deepEqual(byEvent(all).sort(), [
    ['push', 'refs/heads/feature'],
    ['repository_update', null],
  ]);
  assert.equal(all.received[0].headers['x-service-token'], undefined);
  // wildcard "release/*" matches neither branch; repository_update off
  assert.deepEqual(byEvent(other), []);
  assert.equal(feat.length, 40);

  // every delivery is recorded as delivered, with one attempt
  const states = await c.db.kysely.selectFrom('hook_deliveries').select(['state', 'attempts']).execute();
  assert.ok(states.length >= 6);
  assert.ok(states.every((s) => s.state === 'delivered' && s.attempts === 1));
});

test('branch filters: wildcard, regex (unanchored), all branches; tags are never filtered', async (t) => {
  // the jobs' rounds every minute at most: the count does not depend on how long the deliveries take
  const { app, c, root } = await buildTestApp(t, { workerPollMs: 60_000 });
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const sinks = await Promise.all([0, 1, 2, 3].map(() => startSink(t)));
  await createHook(app, root, {
    url: sinks[0].url,
    push_events: true,
    tag_push_events: true,
    push_events_branch_filter: 'release/*',
    repository_update_events: false,
  });
  await createHook(app, root, {
    url: sinks[1].url,
    push_events: true,
    branch_filter_strategy: 'regex',
    push_events_branch_filter: 'fix',
    repository_update_events: false,
  });
  await createHook(app, root, { url: sinks[2].url, push_events: true, branch_filter_strategy: 'all_branches', repository_update_events: false });
  await createHook(app, root, { url: sinks[3].url, push_events: true, push_events_branch_filter: 'main', repository_update_events: false });
  for (const ref of ['refs/heads/main', 'refs/heads/release/1.0', 'refs/heads/hotfix-2', 'refs/heads/releases', 'refs/tags/v1']) {
    await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: ref.startsWith('refs/tags/') ? 'tag_push' : 'push', ref }));
  }
  await c.worker.drain();
  const refs = (s: Sink) => s.received.map((r) => r.json.ref).sort();
  assert.deepEqual(refs(sinks[0]), ['refs/heads/release/1.0', 'refs/tags/v1']);
  assert.deepEqual(refs(sinks[1]), ['refs/heads/hotfix-2']);
  assert.deepEqual(refs(sinks[2]), ['refs/heads/hotfix-2', 'refs/heads/main', 'refs/heads/release/1.0', 'refs/heads/releases']);
  assert.deepEqual(refs(sinks[3]), ['refs/heads/main']);
});

test('system events reach every hook whatever its flags; merge requests only with merge_requests_events', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const on = await startSink(t);
  const off = await startSink(t);
  await createHook(app, root, { url: on.url, merge_requests_events: true });
  await createHook(app, root, { url: off.url, repository_update_events: false });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'a-long-password-1' },
  });
  assert.equal(created.statusCode, 201);
  await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { object_kind: 'merge_request' } as any));
  await c.worker.drain();
  assert.deepEqual(on.received.map((r) => r.json.event_name ?? r.json.object_kind).sort(), ['merge_request', 'user_create']); // sent side by side
  assert.deepEqual(
    off.received.map((r) => r.json.event_name),
    ['user_create'],
  );
});

test('a flow of deliveries costs their own statements: the worker neither claims for every finished delivery nor runs the other jobs\u2019 rounds each time', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const sinks = await Promise.all([0, 1, 2, 3].map(() => startSink(t)));
  for (const sink of sinks) await createHook(app, root, { url: sink.url });
  const EVENTS = 100;
  await c.db.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < EVENTS; i++) await recordSystemEvent(trx, { event_name: 'project_create', project_id: i + 1 });
  });
  const statements = async () => (await dbQueryDuration.get()).values.filter((v) => v.metricName?.endsWith('_count')).reduce((n, v) => n + v.value, 0);
  const before = await statements();
  c.worker.start();
  for (const sink of sinks) await sink.waitFor(EVENTS);
  await c.worker.stop();
  const perDelivery = ((await statements()) - before) / (EVENTS * sinks.length);
  // a delivery: its hook, its attempt and its state (3-4 statements and a commit), and a share of the
  // fan-out and claims (about 6 on a quiet machine; on a loaded one fewer deliveries finish together, so
  // the claims' share grows: 7.2 was seen in CI); a claim and a dozen job rounds for each finished one
  // made it about 20, which this bound still fails
  assert.ok(perDelivery < 10, `${perDelivery.toFixed(1)} statements per delivery`);
  for (const sink of sinks)
    assert.deepEqual(
      sink.received.map((r) => r.json.project_id).sort((a, b) => a - b),
      Array.from({ length: EVENTS }, (_, i) => i + 1),
    );
});

test('a failing receiver is retried under the same Idempotency-Key until it succeeds; 4xx is final', async (t) => {
  const { app, c, root } = await buildTestApp(t, { hookRetrySchedule: [0.05, 0.05, 0.05] });
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const sink = await startSink(t);
  const id = await createHook(app, root, { url: sink.url });
  sink.respond.push(500, 503);
  await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: 'project_create', project_id: 7 }));
  c.worker.start();
  const got = await sink.waitFor(3);
  assert.deepEqual(
    got.map((r) => r.json.project_id),
    [7, 7, 7],
  );
  assert.equal(new Set(got.map((r) => r.headers['idempotency-key'])).size, 1);
  assert.equal(new Set(got.map((r) => r.headers['x-service-webhook-uuid'])).size, 3); // one per request
  await settled(c); // no request after the delivery ended
  assert.equal(sink.received.length, 3);
  const events = (await app.inject({ method: 'GET', url: `/api/v4/hooks/${id}/events`, headers: root })).json();
  assert.deepEqual(
    events.map((e: any) => [e.attempt, e.response_status, e.delivery_state]),
    [
      [3, '200', 'delivered'],
      [2, '503', 'delivered'],
      [1, '500', 'delivered'],
    ],
  );

  sink.respond.push(404);
  await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: 'project_create', project_id: 8 }));
  await sink.waitFor(4);
  await settled(c);
  assert.equal(sink.received.length, 4);
  const last = await c.db.kysely.selectFrom('hook_deliveries').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.deepEqual([last.state, last.attempts, last.last_status], ['failed', 1, '404']);
});

test('retries end after the schedule; connection errors and timeouts count as failures to retry', async (t) => {
  const { app, c, root } = await buildTestApp(t, { hookRetrySchedule: [0.02, 0.02], hookTimeoutMs: 200 });
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const slow = await startSink(t, { silent: true }); // times out however slow the machine
  const closed = await startSink(null);
  await closed.close();
  await createHook(app, root, { url: slow.url });
  await createHook(app, root, { url: closed.url });
  await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: 'group_create' }));
  const deadline = Date.now() + 60_000; // bounds a hang only
  for (;;) {
    await c.worker.drain();
    const rows = await c.db.kysely.selectFrom('hook_deliveries').selectAll().orderBy('hook_id').execute();
    if (rows.every((r) => r.state === 'failed')) {
      assert.deepEqual(
        rows.map((r) => [r.attempts, r.last_status]),
        [
          [3, 'internal error'],
          [3, 'internal error'],
        ],
      );
      break;
    }
    assert.ok(Date.now() < deadline, 'deliveries did not end');
    await new Promise((r) => setTimeout(r, 30));
  }
  const attempts = await c.db.kysely.selectFrom('hook_attempts').select(['error']).execute();
  assert.equal(attempts.length, 6);
  assert.ok(
    attempts.some((a) => a.error === 'Request timed out'),
    JSON.stringify(attempts),
  );
  assert.equal(slow.received.length, 3);
});

test('network rules at delivery time: a hook saved while local requests were allowed is refused later', async (t) => {
  const { app, c, root } = await buildTestApp(t, { hookRetrySchedule: [0.01] });
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const sink = await startSink(t);
  await createHook(app, root, { url: sink.url });
  await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { allow_local_requests_from_system_hooks: false } });
  await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: 'group_create' }));
  await c.worker.drain();
  assert.equal(sink.received.length, 0);
  const [d] = await c.db.kysely.selectFrom('hook_deliveries').selectAll().execute();
  assert.deepEqual([d.state, d.attempts, d.last_status], ['failed', 1, 'internal error']); // refused, not retried
  const [a] = await c.db.kysely.selectFrom('hook_attempts').selectAll().execute();
  assert.equal(a.error, 'Requests to localhost are not allowed');
});

test('several workers share the work: every delivery is sent exactly once', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const sink = await startSink(t);
  for (let i = 0; i < 3; i++) await createHook(app, root, { url: `${sink.url}/${i}` });
  await c.db.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < 150; i++) await recordSystemEvent(trx, { event_name: 'group_create', group_id: i });
  });
  const opts = { externalUrl: c.config.externalUrl, version: c.config.version, retrySchedule: [], timeoutMs: 5000 };
  const workers = [
    c.deliveries,
    new HookDeliveries(c.db, c.hooks, c.outbound, c.settings, opts),
    new HookDeliveries(c.db, c.hooks, c.outbound, c.settings, opts),
  ];
  const drain = async (w: HookDeliveries) => {
    for (;;) {
      const n = (await w.dispatch(20)) + (await w.deliverDue(16));
      if (!n) return;
    }
  };
  await Promise.all(workers.map(drain));
  assert.equal(sink.received.length, 450);
  assert.equal(new Set(sink.received.map((r) => r.headers['idempotency-key'])).size, 450);
  const jobs = await c.db.kysely.selectFrom('jobs').select('state').where('kind', '=', 'system_event').execute();
  assert.ok(jobs.every((j) => j.state === 'done'));
});
