// Components that follow a project of this server: a push to the component's branch (git push over
// smart HTTP, an API file write) queues a durable rescan (jobs, kind translation_follow) that this
// process runs at once — new strings appear, removed ones go, change 21 is recorded, statistics
// follow — with no polling; pushes elsewhere queue nothing; what another process queued is taken by
// the worker's round; a rescan that fails waits for its retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUTHOR, bareGit, runGit, tmpDir } from '../../helpers/git.ts';
import { cloneUrl, startTestServer, type TestServer } from '../../helpers/server.ts';
import { API, AS_ROOT, CS_PO, DE_PO, createComponent, createProject, getJson, repoWith } from '../../helpers/translation.ts';
import { FOLLOW_JOB } from '../../../src/domain/translation/components/follow.ts';
import { ANONYMOUS } from '../../../src/domain/access/actor.ts';

const SYSTEM = { ...ANONYMOUS, isAdmin: true };

type T = Parameters<typeof startTestServer>[0];

const PEAR_CS = `
msgid "Pear"
msgstr "Hruška"
`;
const PEAR_DE = `
msgid "Pear"
msgstr ""
`;

/** A forge project with po/cs.po and po/de.po, a user who may push to it, and a component following it. */
async function setup(t: T) {
  const s = await startTestServer(t);
  const fixture = await repoWith(t, s, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO });
  const { project } = await s.c.resolve.project(SYSTEM, fixture.fullPath);
  const username = `pia${Math.random().toString(36).slice(2, 6)}`;
  // runGit commits as AUTHOR: the pusher is that committer
  const pusher = await s.seed.user({ name: AUTHOR.name, username, email: AUTHOR.email });
  await s.seed.member({ project }, pusher, 40);
  const token = await s.seed.token(pusher, { scopes: ['api', 'write_repository'] });
  await createProject(s);
  const component = await createComponent(s, 'hello', { repo: fixture.repo });
  const clone = tmpDir(t);
  await runGit(clone, ['clone', '-q', cloneUrl(s.base, fixture.fullPath, pusher.username, token.token), '.']);
  return { s, fixture, project, pusher, token, component, clone, bare: s.c.repos.pathOf(project) };
}

async function followJobs(s: TestServer) {
  return s.c.db.kysely.selectFrom('jobs').selectAll().where('kind', '=', FOLLOW_JOB).orderBy('id').execute();
}

async function sources(s: TestServer, lang: string): Promise<string[]> {
  const body = await getJson(s, `/api/translations/hello/po/${lang}/units/`);
  return body.results.map((u: { source: string }) => u.source);
}

test('a git push over HTTP to the followed branch rescans the component: new strings appear, removed ones go, change 21, statistics', async (t) => {
  const { s, component, clone, bare, pusher } = await setup(t);
  const before = await getJson(s, '/api/translations/hello/po/cs/statistics/');
  assert.equal(before.total, 4);
  const fs = await import('node:fs');
  const path = await import('node:path');
  // add "Pear", remove "Apple" in both languages
  const drop = (po: string) => po.replace('msgid "Apple"\nmsgstr ""\n', '').replace('msgid "Apple"\nmsgstr "Apfel"\n', '');
  fs.writeFileSync(path.join(clone, 'po/cs.po'), drop(CS_PO) + PEAR_CS);
  fs.writeFileSync(path.join(clone, 'po/de.po'), drop(DE_PO) + PEAR_DE);
  await runGit(clone, ['commit', '-q', '-am', 'Pear instead of Apple']);
  await runGit(clone, ['push', '-q', 'origin', 'main']);
  const head = bareGit(bare, ['rev-parse', 'refs/heads/main']).trim();
  // rescanned by this process at once (idle() waits for what it started; the 5-minute sweep never ran)
  await s.c.translation.writes.follow.idle();

  assert.deepEqual(await sources(s, 'cs'), ['Hello, world!', 'Orange', '%d file\u001e%d files', 'Pear']);
  assert.deepEqual(await sources(s, 'de'), ['Hello, world!', 'Orange', '%d file\u001e%d files', 'Pear']);
  const row = await s.c.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
  assert.equal(row.head, head);
  // statistics: cs has Hello and %d file translated, Orange fuzzy, Pear translated
  const cs = await getJson(s, '/api/translations/hello/po/cs/statistics/');
  assert.deepEqual([cs.total, cs.translated, cs.fuzzy], [4, 3, 1]);
  const de = await getJson(s, '/api/translations/hello/po/de/statistics/');
  assert.deepEqual([de.total, de.translated, de.fuzzy], [4, 3, 0]);
  // change 21 "Rebased repository": the new revision, by the committer (whoever the system followed)
  const changes = await getJson(s, '/api/components/hello/po/changes/?action=21');
  assert.equal(changes.count, 1);
  const [rebased] = changes.results;
  assert.deepEqual(
    [rebased.action, rebased.action_name, rebased.component, rebased.target, rebased.author, rebased.user],
    [21, 'Rebased repository', 'http://weblate.test/api/components/hello/po/', head, `${API}/users/${pusher.username}/`, `${API}/users/${pusher.username}/`],
  );
  // the job is done, nothing left queued
  const jobs = await followJobs(s);
  assert.equal(jobs.length, 1);
  assert.deepEqual([jobs[0].state, jobs[0].attempts, jobs[0].last_error, JSON.parse(jobs[0].payload)], ['done', 1, null, { component_id: component.id }]);
  assert.equal(await s.c.translation.writes.follow.runQueued(), 0);
});

test('a file written through the API (PUT /repository/files) rescans the component', async (t) => {
  const { s, project, token } = await setup(t);
  const res = await s.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${project.id}/repository/files/${encodeURIComponent('po/cs.po')}`,
    headers: token.headers,
    payload: { branch: 'main', content: CS_PO + PEAR_CS, commit_message: 'Pear for Czech' },
  });
  assert.equal(res.statusCode, 200, res.body);
  await s.c.translation.writes.follow.idle();
  assert.deepEqual(await sources(s, 'cs'), ['Hello, world!', 'Orange', 'Apple', '%d file\u001e%d files', 'Pear']);
  const unit = (await getJson(s, '/api/translations/hello/po/cs/units/?q=source:Pear')).results[0];
  assert.deepEqual([unit.target, unit.state], ['Hruška', 20]);
  // the source translation follows: bilingual sources are the union of the files' strings
  const stats = await getJson(s, '/api/translations/hello/po/cs/statistics/');
  assert.deepEqual([stats.total, stats.translated], [5, 3]);
  assert.equal((await followJobs(s)).map((j) => j.state).join(), 'done');
});

test('a merged merge request rescans the component; its source branch alone did not', async (t) => {
  const { s, project, token, clone, component } = await setup(t);
  const fs = await import('node:fs');
  const path = await import('node:path');
  await runGit(clone, ['checkout', '-q', '-b', 'pear']);
  fs.writeFileSync(path.join(clone, 'po/de.po'), DE_PO + PEAR_DE);
  await runGit(clone, ['commit', '-q', '-am', 'Pear']);
  await runGit(clone, ['push', '-q', 'origin', 'pear']);
  await s.c.translation.writes.follow.idle();
  assert.deepEqual(await followJobs(s), []);
  let res = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: token.headers,
    payload: { source_branch: 'pear', target_branch: 'main', title: 'Pear' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const mr = res.json();
  await s.c.merges.idle();
  res = await s.app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/merge`, headers: token.headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().state, 'merged');
  await s.c.merges.idle();
  await s.c.translation.writes.follow.idle();
  assert.deepEqual(await sources(s, 'de'), ['Hello, world!', 'Orange', 'Apple', '%d file\u001e%d files', 'Pear']);
  const row = await s.c.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
  assert.equal(row.head, res.json().merge_commit_sha ?? res.json().sha);
  assert.deepEqual(
    (await followJobs(s)).map((j) => j.state),
    ['done'],
  );
});

test('a push that conflicts with committed translations: the failed rebase is recorded once, not retried', async (t) => {
  const { s, clone } = await setup(t);
  const fs = await import('node:fs');
  const path = await import('node:path');
  // a translation committed in the component (not pushed)
  const apple = (await getJson(s, '/api/translations/hello/po/cs/units/?q=source:Apple')).results[0];
  let res = await s.app.inject({ method: 'PATCH', url: `/api/units/${apple.id}/`, headers: AS_ROOT, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
  res = await s.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'commit' } });
  assert.deepEqual(res.json(), { result: true });
  // upstream translates the same string otherwise
  fs.writeFileSync(path.join(clone, 'po/cs.po'), CS_PO.replace('msgid "Apple"\nmsgstr ""', 'msgid "Apple"\nmsgstr "Jablíčko"'));
  await runGit(clone, ['commit', '-q', '-am', 'Apple upstream']);
  await runGit(clone, ['push', '-q', 'origin', 'main']);
  await s.c.translation.writes.follow.idle();
  const [job] = await followJobs(s);
  assert.deepEqual([job.state, job.attempts], ['failed', 1]);
  assert.match(job.last_error ?? '', /^Could not (rebase|merge)/);
  const failures = await getJson(s, '/api/components/hello/po/changes/?action=22&action=23');
  assert.equal(failures.count, 1);
  const repo = await getJson(s, '/api/components/hello/po/repository/');
  assert.equal(repo.merge_failure, job.last_error);
  assert.equal((await getJson(s, `/api/units/${apple.id}/`)).target, 'Jablko');
  assert.equal(await s.c.translation.writes.follow.runQueued(), 0);
});

test('pushes that do not move the followed branch queue nothing', async (t) => {
  const { s, clone, bare } = await setup(t);
  const head = bareGit(bare, ['rev-parse', 'refs/heads/main']).trim();
  await runGit(clone, ['checkout', '-q', '-b', 'topic']);
  await runGit(clone, ['commit', '-q', '--allow-empty', '-m', 'Elsewhere']);
  await runGit(clone, ['push', '-q', 'origin', 'topic']);
  await runGit(clone, ['tag', 'v1']);
  await runGit(clone, ['push', '-q', 'origin', 'v1']);
  await runGit(clone, ['push', '-q', 'origin', '--delete', 'topic']);
  await s.c.translation.writes.follow.idle();
  assert.deepEqual(await followJobs(s), []);
  const changes = await getJson(s, '/api/components/hello/po/changes/?action=21');
  assert.equal(changes.count, 0);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), head);
});

test('a queued rescan is durable: the worker round takes what no process ran, once per component', async (t) => {
  const { s, component, fixture } = await setup(t);
  // a push straight to the bare repository (no server in between), then two queued rescans as a
  // process that crashed before running them would have left them
  fixture.wt.write('po/cs.po', CS_PO + PEAR_CS).commit('Pear');
  fixture.wt.push('main');
  const follow = s.c.translation.writes.follow;
  await follow.queue(component.id);
  await follow.queue(component.id);
  let jobs = await followJobs(s);
  assert.equal(jobs.length, 1, 'one queued rescan per component');
  assert.equal(jobs[0].state, 'queued');
  assert.deepEqual(await sources(s, 'cs'), ['Hello, world!', 'Orange', 'Apple', '%d file\u001e%d files']);
  // the worker's round (as `hearth worker` runs it)
  await s.c.worker.drain();
  assert.deepEqual(await sources(s, 'cs'), ['Hello, world!', 'Orange', 'Apple', '%d file\u001e%d files', 'Pear']);
  jobs = await followJobs(s);
  assert.deepEqual(
    jobs.map((j) => [j.state, j.attempts, j.locked_by]),
    [['done', 1, null]],
  );
  // a lease that ran out (a worker died mid-rescan) is taken again
  await s.c.db.kysely
    .updateTable('jobs')
    .set({ state: 'running', locked_by: 'dead-worker', locked_until: '2000-01-01T00:00:00.000Z' })
    .where('id', '=', jobs[0].id)
    .execute();
  assert.equal(await follow.runQueued(), 1);
  assert.equal((await followJobs(s))[0].state, 'done');
});

test('the sweep finds a branch the listener never heard of (a process died between the push and the queueing)', async (t) => {
  const { s, component, fixture } = await setup(t);
  const follow = s.c.translation.writes.follow;
  assert.equal(await follow.sweep(), 0, 'every component is where its forge branch is');
  // a push straight to the bare repository: no listener ran
  fixture.wt.write('po/cs.po', CS_PO + PEAR_CS).commit('Pear');
  fixture.wt.push('main');
  assert.equal(await follow.sweep(), 1);
  assert.equal(await follow.sweep(), 1, 'still behind, still one queued rescan');
  assert.deepEqual(
    (await followJobs(s)).map((j) => [j.state, JSON.parse(j.payload).component_id]),
    [['queued', component.id]],
  );
  assert.equal(await follow.runQueued(), 1);
  assert.deepEqual(await sources(s, 'cs'), ['Hello, world!', 'Orange', 'Apple', '%d file\u001e%d files', 'Pear']);
  assert.equal(await follow.sweep(), 0);
});

test('a rescan that fails waits for its retry with the reason; a component gone is done', async (t) => {
  const { s, component, project } = await setup(t);
  const follow = s.c.translation.writes.follow;
  // the followed branch disappears from the forge: the pull cannot fetch it
  await s.c.db.kysely.updateTable('components').set({ branch: 'gone' }).where('id', '=', component.id).execute();
  assert.equal(await follow.queueFor(project.id, [{ ref: 'refs/heads/gone', before: '0'.repeat(40), after: '1'.repeat(40) }]), 1);
  await follow.idle();
  let [job] = await followJobs(s);
  assert.equal(job.state, 'queued');
  assert.equal(job.attempts, 1);
  assert.match(job.last_error ?? '', /.+/);
  assert.ok(Date.parse(job.run_at) > Date.now(), 'the retry waits');
  assert.equal(await follow.runQueued(), 0, 'not due yet');
  // a new push makes it due at once; the component is gone by then: done, nothing to do
  const res = await s.app.inject({ method: 'DELETE', url: '/api/components/hello/po/', headers: AS_ROOT });
  assert.equal(res.statusCode, 204, res.body);
  await follow.queue(component.id);
  assert.equal(await follow.runQueued(), 1);
  [job] = await followJobs(s);
  assert.deepEqual([job.state, job.attempts, job.last_error], ['done', 2, null]);
});
