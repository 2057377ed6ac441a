// Webhook deliveries: a real git push reaches the project's hooks and its groups' hooks (GitLab's
// headers named X-Service-*, token, custom headers, URL variables), push payloads list their commits,
// the hook logs, the test endpoint, auto-disabling, and note events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildTestApp } from '../helpers/build-app.ts';
import { startTestServer, cloneUrl } from '../helpers/server.ts';
import { AUTHOR, runGit, tmpDir, WorkTree, workTree } from '../helpers/git.ts';
import { startSink } from '../helpers/sink.ts';
import { seedPipeline } from '../helpers/ci.ts';
import { recordSystemEvent } from '../../src/domain/core/system-events.ts';
import { ZERO_SHA } from '../../src/git/refs.ts';

const git = (dir: string, args: string[]) => execFileSync('git', args, { cwd: dir }).toString('utf8').trim();

test('a real git push: project and ancestor-group hooks get Push Hook and Tag Push Hook with commits', async (t) => {
  const { app, c, seed, base } = await startTestServer(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const projectSink = await startSink(t);
  const groupSink = await startSink(t);
  const otherSink = await startSink(t);
  const owner = await seed.user();
  const top = await seed.group();
  const sub = await seed.group({ parent: top });
  const other = await seed.group();
  await seed.member({ group: top }, owner, 50);
  await seed.member({ group: other }, owner, 50);
  const { project } = await seed.repoProject({ namespace: sub });
  const { token, headers } = await seed.token(owner, { scopes: ['api', 'write_repository'] });
  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url, headers, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const hook = await post(`/api/v4/projects/${project.id}/hooks`, {
    url: `${projectSink.url}/{where}`,
    url_variables: [{ key: 'where', value: 'receive' }],
    token: 'project-secret',
    tag_push_events: true,
    custom_headers: [{ key: 'X-Team', value: 'blue' }],
  });
  await post(`/api/v4/groups/${top.id}/hooks`, { url: groupSink.url, push_events_branch_filter: 'feature' });
  await post(`/api/v4/groups/${other.id}/hooks`, { url: otherSink.url, tag_push_events: true });
  await c.worker.drain();

  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(base, `${sub.full_path}/${project.path}`, 'any', token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'main']);
  const first = w.write('a.txt', 'a\n').write('b.txt', 'b\n').commit('First\n\nwith a body');
  w.git(['mv', 'b.txt', 'c.txt']);
  const second = w.write('a.txt', 'a2\n').write('gone.txt', 'x').commit('Second');
  w.rm('gone.txt');
  const third = w.commit('Third');
  w.checkout('feature', true);
  const feat = w.write('f.txt', 'f\n').commit('Feature');
  w.git(['tag', '-a', 'v1.0.0', '-m', 'release', first], { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email });
  await runGit(w.dir, ['push', '-q', 'origin', 'main', 'feature', 'v1.0.0']);
  await c.worker.drain();

  const kinds = (s: typeof projectSink) => s.received.map((r) => `${r.headers['x-service-event']} ${r.json.ref}`).sort();
  assert.deepEqual(kinds(projectSink), ['Push Hook refs/heads/feature', 'Push Hook refs/heads/main', 'Tag Push Hook refs/tags/v1.0.0']);
  assert.deepEqual(kinds(groupSink), ['Push Hook refs/heads/feature']);
  assert.deepEqual(kinds(otherSink), []);

  const push = projectSink.received.find((r) => r.json.ref === 'refs/heads/main')!;
  assert.equal(push.url, '/receive');
  assert.equal(push.headers['x-service-token'], 'project-secret');
  assert.equal(push.headers['x-team'], 'blue');
  assert.equal(push.headers['user-agent'], `Hearth/${c.config.version}`);
  assert.equal(push.headers['x-service-instance'], c.config.externalUrl);
  assert.match(String(push.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
  assert.match(String(push.headers['x-service-event-uuid']), /^[0-9a-f-]{36}$/);
  const web = `${c.config.externalUrl}/${sub.full_path}/${project.path}`;
  const at = (sha: string) => git(w.dir, ['show', '-s', '--format=%cI', sha]);
  const commit = (id: string, message: string, changes: Record<string, string[]>) => ({
    id,
    message,
    title: message.split('\n')[0],
    timestamp: at(id),
    url: `${web}/-/commit/${id}`,
    author: { name: AUTHOR.name, email: AUTHOR.email },
    added: [],
    modified: [],
    removed: [],
    ...changes,
  });
  assert.deepEqual(push.json.commits, [
    commit(first, 'First\n\nwith a body\n', { added: ['a.txt', 'b.txt'] }),
    commit(second, 'Second\n', { added: ['c.txt', 'gone.txt'], modified: ['a.txt'], removed: ['b.txt'] }),
    commit(third, 'Third\n', { removed: ['gone.txt'] }),
  ]);
  assert.deepEqual([push.json.object_kind, push.json.before, push.json.after, push.json.total_commits_count], ['push', ZERO_SHA, third, 3]);
  const featurePush = groupSink.received[0].json;
  assert.deepEqual(
    featurePush.commits.map((x: any) => x.id),
    [feat],
  );
  assert.equal(featurePush.total_commits_count, 1);
  assert.equal(groupSink.received[0].headers['x-service-token'], undefined);
  const tag = projectSink.received.find((r) => r.json.ref === 'refs/tags/v1.0.0')!.json;
  assert.deepEqual([tag.object_kind, tag.checkout_sha, tag.total_commits_count], ['tag_push', first, 1]);
  assert.deepEqual(tag.commits, [commit(first, 'First\n\nwith a body\n', { added: ['a.txt', 'b.txt'] })]);

  // the hook logs: every attempt, secrets redacted
  const events = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/hooks/${hook.id}/events`, headers });
  assert.equal(events.statusCode, 200, events.body);
  const log = events.json();
  assert.equal(log.length, 3);
  assert.deepEqual(log.map((e: any) => e.trigger).sort(), ['push_hooks', 'push_hooks', 'tag_push_hooks']);
  assert.equal(log[0].request_headers['x-service-token'], '[REDACTED]');
  assert.equal(log[0].request_headers['x-team'], '[REDACTED]');
  assert.equal(log[0].url, `${projectSink.url}/{where}`);
  assert.equal(log[0].response_status, '200');
  const filtered = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/hooks/${hook.id}/events?status=server_failure`, headers });
  assert.deepEqual(filtered.json(), []);
  const ok = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/hooks/${hook.id}/events?status=successful,404`, headers });
  assert.equal(ok.json().length, 3);
  // every web delivery is recorded, delivered once
  const rows = await c.db.kysely.selectFrom('hook_deliveries').select(['state', 'attempts']).where('hook_type', '=', 'web').execute();
  assert.equal(rows.length, 4);
  assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1));
});

test('a push of 25 commits lists the latest 20, newest last; total_commits_count counts all', async (t) => {
  const { app, c, seed, base } = await startTestServer(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const owner = await seed.user();
  const ns = await seed.namespaceOf(owner);
  const { project } = await seed.repoProject({ namespace: ns, owner });
  const { token, headers } = await seed.token(owner, { scopes: ['api', 'write_repository'] });
  const res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers, payload: { url: sink.url } });
  assert.equal(res.statusCode, 201, res.body);
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(base, `${ns.full_path}/${project.path}`, 'any', token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'main']);
  const shas = [];
  for (let i = 1; i <= 25; i++) shas.push(w.write('n.txt', `${i}\n`).commit(`Commit ${i}`));
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);
  await c.worker.drain();
  assert.equal(sink.received.length, 1);
  const p = sink.received[0].json;
  assert.equal(p.total_commits_count, 25);
  assert.deepEqual(
    p.commits.map((x: any) => x.id),
    shas.slice(5),
  );
  assert.deepEqual(p.commits[0].added, []);
  assert.deepEqual(p.commits[0].modified, ['n.txt']);
  assert.equal(p.commits[19].title, 'Commit 25');
});

test('auto-disabling: 4 failures disable for a minute, 40 for good; a successful test or an update re-enables', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const { project, dir } = await seed.repoProject();
  const w = workTree(t, dir);
  w.write('r.md', 'x').commit('One');
  w.write('r.md', 'y').commit('Two');
  w.push('main');
  const empty = await seed.project();
  const base = `/api/v4/projects/${project.id}/hooks`;
  const hook = (await app.inject({ method: 'POST', url: base, headers: root, payload: { url: sink.url } })).json();
  const testHook = () => app.inject({ method: 'POST', url: `${base}/${hook.id}/test/push_events`, headers: root });
  const state = async () => (await app.inject({ method: 'GET', url: `${base}/${hook.id}`, headers: root })).json();

  sink.respond.push(500, 500, 500, 500);
  for (let i = 0; i < 3; i++) {
    const r = await testHook();
    assert.deepEqual([r.statusCode, r.json()], [422, { message: 'sink says 500' }]);
  }
  assert.deepEqual([(await state()).alert_status, (await state()).disabled_until], ['executable', null]);
  await testHook();
  const disabled = await state();
  assert.equal(disabled.alert_status, 'temporarily_disabled');
  const wait = Date.parse(disabled.disabled_until) - Date.now();
  assert.ok(wait > 50_000 && wait <= 60_000, String(wait));
  // the sample push: the latest commits of the default branch, newest first
  const sample = sink.received[0];
  assert.equal(sample.headers['x-service-event'], 'Push Hook');
  assert.deepEqual(
    sample.json.commits.map((x: any) => x.title),
    ['Two', 'One'],
  );

  // a disabled hook hears no events
  await c.db.kysely
    .transaction()
    .execute((trx) => recordSystemEvent(trx, { event_name: 'push', object_kind: 'push', project_id: project.id, ref: 'refs/heads/main' } as any));
  await c.worker.drain();
  assert.equal(sink.received.length, 4);
  assert.equal((await c.db.kysely.selectFrom('hook_deliveries').select('id').where('hook_type', '=', 'web').execute()).length, 4);

  // a successful test re-enables it
  const r = await testHook();
  assert.deepEqual([r.statusCode, r.json()], [201, { message: '201 Created' }]);
  assert.deepEqual([(await state()).alert_status, (await state()).disabled_until], ['executable', null]);

  // the 40th failure disables it for good; an update re-enables it
  await c.db.kysely
    .updateTable('web_hooks')
    .set({ recent_failures: 39, disabled_until: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', hook.id)
    .execute();
  sink.respond.push(502);
  assert.equal((await testHook()).statusCode, 422);
  const dead = await state();
  assert.equal(dead.alert_status, 'disabled');
  const row = await c.db.kysely.selectFrom('web_hooks').select('recent_failures').where('id', '=', hook.id).executeTakeFirstOrThrow();
  assert.equal(row.recent_failures, 40);
  const upd = await app.inject({ method: 'PUT', url: `${base}/${hook.id}`, headers: root, payload: { name: 'back' } });
  assert.deepEqual([upd.json().alert_status, upd.json().disabled_until], ['executable', null]);

  // test data GitLab asks for
  const emptyHook = (await app.inject({ method: 'POST', url: `/api/v4/projects/${empty.id}/hooks`, headers: root, payload: { url: sink.url } })).json();
  const none = await app.inject({ method: 'POST', url: `/api/v4/projects/${empty.id}/hooks/${emptyHook.id}/test/push_events`, headers: root });
  assert.deepEqual([none.statusCode, none.json()], [422, { message: 'Ensure the project has at least one commit.' }]);
  for (const [trigger, message] of [
    ['merge_requests_events', 'Ensure the project has merge requests.'],
    ['note_events', 'Ensure the project has notes.'],
    ['pipeline_events', 'Ensure the project has CI pipelines.'],
    ['job_events', 'Ensure the project has CI jobs.'],
    ['wiki_page_events', 'Ensure the wiki is enabled and has pages.'],
  ]) {
    const res = await app.inject({ method: 'POST', url: `${base}/${hook.id}/test/${trigger}`, headers: root });
    assert.deepEqual([res.statusCode, res.json()], [422, { message }], trigger);
  }
});

test('note events: a comment on a merge request reaches hooks with note_events as a Note Hook', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const quiet = await startSink(t);
  const { project, dir } = await seed.repoProject();
  const w = workTree(t, dir);
  w.write('r.md', 'x').commit('One');
  w.push('main');
  w.checkout('topic', true);
  w.write('t.md', 't').commit('Topic');
  w.push('topic');
  const base = `/api/v4/projects/${project.id}/hooks`;
  const hook = (await app.inject({ method: 'POST', url: base, headers: root, payload: { url: sink.url, push_events: false, note_events: true } })).json();
  await app.inject({ method: 'POST', url: base, headers: root, payload: { url: quiet.url, push_events: false, merge_requests_events: true } });
  const mr = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: root,
    payload: { source_branch: 'topic', target_branch: 'main', title: 'Topic' },
  });
  assert.equal(mr.statusCode, 201, mr.body);
  await c.worker.drain();
  const note = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.json().iid}/notes`,
    headers: root,
    payload: { body: 'Looks good' },
  });
  assert.equal(note.statusCode, 201, note.body);
  await c.worker.drain();
  assert.equal(sink.received.length, 1);
  const got = sink.received[0];
  assert.equal(got.headers['x-service-event'], 'Note Hook');
  assert.deepEqual(
    [
      got.json.object_kind,
      got.json.event_type,
      got.json.project_id,
      got.json.object_attributes.note,
      got.json.object_attributes.noteable_type,
      got.json.merge_request.iid,
    ],
    ['note', 'note', project.id, 'Looks good', 'MergeRequest', mr.json().iid],
  );
  assert.equal(got.json.object_attributes.url, `${got.json.project.web_url}/-/merge_requests/${mr.json().iid}#note_${note.json().id}`);
  // the merge request hook went only to the other hook
  assert.deepEqual(
    quiet.received.map((r) => r.headers['x-service-event']),
    ['Merge Request Hook'],
  );
  // the test endpoint now has a note to send
  const res = await app.inject({ method: 'POST', url: `${base}/${hook.id}/test/note_events`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [201, { message: '201 Created' }]);
});

test('pipeline and job hooks: the test endpoint sends Pipeline Hook and Job Hook payloads', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const { project, dir } = await seed.repoProject();
  const w = workTree(t, dir);
  const sha = w.write('r.md', 'x').commit('One');
  w.push('main');
  const { pipeline, jobs } = await seedPipeline(c, project, { ref: 'main', sha, status: 'success', user_id: 1 }, [
    { name: 'build', status: 'success' },
    { name: 'test', status: 'failed' },
  ]);
  const base = `/api/v4/projects/${project.id}/hooks`;
  const hook = (await app.inject({ method: 'POST', url: base, headers: root, payload: { url: sink.url, pipeline_events: true, job_events: true } })).json();
  for (const trigger of ['pipeline_events', 'job_events']) {
    const res = await app.inject({ method: 'POST', url: `${base}/${hook.id}/test/${trigger}`, headers: root });
    assert.deepEqual([res.statusCode, res.json()], [201, { message: '201 Created' }], trigger);
  }
  const [p, j] = sink.received;
  assert.equal(p.headers['x-service-event'], 'Pipeline Hook');
  assert.deepEqual(
    [
      p.json.object_kind,
      p.json.object_attributes.id,
      p.json.object_attributes.ref,
      p.json.object_attributes.sha,
      p.json.object_attributes.status,
      p.json.commit.id,
      p.json.user.id,
    ],
    ['pipeline', pipeline.id, 'main', sha, 'success', sha, 1],
  );
  assert.deepEqual(p.json.builds.map((b: any) => [b.id, b.name, b.status]).sort(), jobs.map((b) => [b.id, b.name, b.status]).sort());
  assert.equal(j.headers['x-service-event'], 'Job Hook');
  const newest = jobs.reduce((a, b) => (a.id > b.id ? a : b));
  assert.deepEqual(
    [j.json.object_kind, j.json.build_id, j.json.build_name, j.json.build_status, j.json.pipeline_id, j.json.project_id, j.json.sha],
    ['build', newest.id, newest.name, newest.status, pipeline.id, project.id, sha],
  );
});

/** an app that may deliver to local receivers, a receiver, and a project whose pushed CI file has one job */
async function ciHookWorld(t: import('node:test').TestContext) {
  const { app, c, seed, root } = await buildTestApp(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const { project, dir } = await seed.repoProject();
  const w = workTree(t, dir);
  w.write('.service-ci.yml', 'build:\n  script: echo hi\n').commit('CI');
  w.push('main');
  return { app, c, root, sink, project };
}

test('pipeline and job hooks: a new pipeline sends Pipeline Hook and Job Hook as its statuses change', async (t) => {
  const { app, c, root, sink, project } = await ciHookWorld(t);
  const quiet = await startSink(t);
  const base = `/api/v4/projects/${project.id}/hooks`;
  await app.inject({ method: 'POST', url: base, headers: root, payload: { url: sink.url, push_events: false, pipeline_events: true, job_events: true } });
  await app.inject({ method: 'POST', url: base, headers: root, payload: { url: quiet.url, push_events: false } });
  const created = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/pipeline?ref=main`, headers: root });
  assert.equal(created.statusCode, 201, created.body);
  await c.worker.drain();
  const seen = sink.received.map(
    (r) => `${r.headers['x-service-event']} ${r.json.object_kind === 'pipeline' ? r.json.object_attributes.status : r.json.build_status}`,
  );
  assert.ok(seen.includes('Pipeline Hook pending'), seen.join(', '));
  assert.ok(seen.includes('Job Hook pending'), seen.join(', '));
  const job = sink.received.find((r) => r.json.object_kind === 'build')!.json;
  assert.deepEqual([job.build_name, job.pipeline_id, job.project_id], ['build', created.json().id, project.id]);
  assert.deepEqual(quiet.received, []);
});

test('job and pipeline events are recorded only while a hook of the project or a group above it hears them', async (t) => {
  const { app, c, root, sink, project } = await ciHookWorld(t);
  await c.worker.drain();
  const recorded = async () => {
    const rows = await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').execute();
    await c.db.kysely.deleteFrom('jobs').where('kind', '=', 'system_event').execute();
    const kinds = rows.map((r) => (JSON.parse(r.payload) as { object_kind?: string }).object_kind);
    return [...new Set(kinds.filter((k) => k === 'build' || k === 'pipeline'))].sort();
  };
  const run = async () => {
    const created = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/pipeline?ref=main`, headers: root });
    assert.equal(created.statusCode, 201, created.body);
    return recorded();
  };
  await recorded();
  assert.deepEqual(await run(), []); // no hook: GitLab's has_active_hooks?(:job_hooks) is false
  const groupHook = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${project.namespace_id}/hooks`,
    headers: root,
    payload: { url: sink.url, push_events: false, job_events: true },
  });
  assert.equal(groupHook.statusCode, 201, groupHook.body);
  assert.deepEqual(await run(), ['build']); // the group's hook hears jobs, nobody pipelines
  const projectHook = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/hooks`,
    headers: root,
    payload: { url: sink.url, push_events: false },
  });
  await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/hooks/${projectHook.json().id}`, headers: root, payload: { pipeline_events: true } });
  assert.deepEqual(await run(), ['build', 'pipeline']);
  await app.inject({ method: 'DELETE', url: `/api/v4/groups/${project.namespace_id}/hooks/${groupHook.json().id}`, headers: root });
  assert.deepEqual(await run(), ['pipeline']);
});
