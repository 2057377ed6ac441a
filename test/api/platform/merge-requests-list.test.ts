// GET /merge_requests, /projects/:id/merge_requests, /groups/:id/merge_requests: scopes and anonymous
// callers, who sees which merge requests, orders with their tie-breaker, pagination, shapes, bad values.
// Every filter: merge-requests-list-filters.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrate } from '../../../src/db/migrate.ts';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { at, get, idsOf, world } from '../../helpers/merge-requests-list-world.ts';

test('GET /merge_requests: anonymous callers need scope=all (401 otherwise) and then see public projects with an open merge-request feature', async (t) => {
  const w = await world(t);
  const { app, P, mr } = w;
  const pub = await mr(P.pub);
  await mr(P.int);
  await mr(P.priv);
  const subpub = await mr(P.subpub);
  await mr(P.mrprivate);
  await mr(P.mrdisabled);
  await mr(P.secret, { author: w.other });
  for (const q of ['', '?scope=created_by_me', '?scope=assigned_to_me', '?scope=reviews_for_me', '?scope=created-by-me']) {
    const res = await get(app, `/api/v4/merge_requests${q}`);
    assert.equal(res.statusCode, 401, q);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  }
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=all')), [subpub.id, pub.id]);
});

test('GET /merge_requests: the default scope is created_by_me; assigned_to_me, reviews_for_me (dashes too) and all', async (t) => {
  const w = await world(t);
  const { app, P, mr, me, other, meTok } = w;
  const mine = await mr(P.pub, { author: me });
  const assigned = await mr(P.pub, { author: other, assignees: [me] });
  const review = await mr(P.pub, { author: other, reviewers: [me] });
  const theirs = await mr(P.pub, { author: other, assignees: [other], reviewers: [other] });
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests', meTok)), [mine.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=created_by_me', meTok)), [mine.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=created-by-me', meTok)), [mine.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=assigned_to_me', meTok)), [assigned.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=assigned-to-me', meTok)), [assigned.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=reviews_for_me', meTok)), [review.id]);
  assert.deepEqual(idsOf(await get(app, '/api/v4/merge_requests?scope=all', meTok)), [theirs.id, review.id, assigned.id, mine.id]);
  // project and group lists have no default scope, but take one
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${P.pub.id}/merge_requests`, meTok)), [theirs.id, review.id, assigned.id, mine.id]);
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?scope=assigned_to_me`, meTok)), [assigned.id]);
  assert.deepEqual(idsOf(await get(app, `/api/v4/groups/${w.top.id}/merge_requests?scope=reviews_for_me`, meTok)), [review.id]);
  // an anonymous caller's own merge requests are none
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?scope=created_by_me`)), []);
  const bad = await get(app, '/api/v4/merge_requests?scope=mine', meTok);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'scope does not have a valid value' });
});

test('GET /merge_requests?scope=all: members see private projects and private merge-request features; never a disabled feature or an unrelated private project', async (t) => {
  const w = await world(t);
  const { app, P, mr, root, meTok, otherTok, extTok } = w;
  const m: Record<string, number> = {};
  for (const key of ['pub', 'int', 'priv', 'subpub', 'archived', 'mrprivate', 'mrdisabled', 'away', 'secret']) m[key] = (await mr(P[key])).id;
  const all = (h: Record<string, string>) => get(app, '/api/v4/merge_requests?scope=all&sort=asc', h);
  // me: Developer of priv, Reporter of mrprivate
  assert.deepEqual(idsOf(await all(meTok)), [m.pub, m.int, m.priv, m.subpub, m.archived, m.mrprivate, m.away]);
  // other: owns secret (personal namespace), a Guest of mrprivate (below Reporter: not its merge requests)
  assert.deepEqual(idsOf(await all(otherTok)), [m.pub, m.int, m.subpub, m.archived, m.away, m.secret]);
  // external users see no internal project
  assert.deepEqual(idsOf(await all(extTok)), [m.pub, m.subpub, m.archived, m.away]);
  // administrators see everything but a disabled feature
  assert.deepEqual(idsOf(await all(root)), [m.pub, m.int, m.priv, m.subpub, m.archived, m.mrprivate, m.away, m.secret]);
});

test('GET /merge_requests?scope=all follows a change of project visibility, merge-request feature level or its group visibility at once (the rows keep who may read them)', async (t) => {
  const w = await world(t);
  const { app, P, mr, root, meTok, otherTok, c } = w;
  const m: Record<string, number> = {};
  for (const key of ['pub', 'int', 'priv', 'subpub', 'mrprivate', 'mrdisabled']) m[key] = (await mr(P[key])).id;
  const stored = async () =>
    Object.fromEntries(
      (await c.db.kysely.selectFrom('merge_requests').select(['id', 'visibility']).orderBy('id').execute()).map((r) => [
        Object.keys(m).find((key) => m[key] === r.id),
        r.visibility,
      ]),
    );
  assert.deepEqual(await stored(), { pub: 'public', int: 'internal', priv: 'private', subpub: 'public', mrprivate: 'private', mrdisabled: 'disabled' });
  const all = async (h: Record<string, string> = {}) => idsOf(await get(app, '/api/v4/merge_requests?scope=all&sort=asc', h));
  const put = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'PUT', url, headers: root, payload });
    assert.equal(res.statusCode, 200, res.body);
  };
  assert.deepEqual(await all(), [m.pub, m.subpub]);

  await put(`/api/v4/projects/${P.pub.id}`, { visibility: 'private' });
  await put(`/api/v4/projects/${P.mrdisabled.id}`, { merge_requests_access_level: 'enabled' });
  await put(`/api/v4/projects/${P.int.id}`, { merge_requests_access_level: 'private' });
  // a group moved under an internal one: its projects become internal with it
  const inner = await w.seed.group({ path: 'inner', name: 'Inner', visibility: 'internal' });
  const moved = await app.inject({ method: 'POST', url: `/api/v4/groups/${w.sub.id}/transfer`, headers: root, payload: { group_id: inner.id } });
  assert.equal(moved.statusCode, 201, moved.body);
  assert.deepEqual(await stored(), { pub: 'private', int: 'private', priv: 'private', subpub: 'internal', mrprivate: 'private', mrdisabled: 'public' });
  assert.deepEqual(await all(), [m.mrdisabled]);
  // other: no membership anywhere here
  assert.deepEqual(await all(otherTok), [m.subpub, m.mrdisabled]);
  // me: Developer of priv, Reporter of mrprivate
  assert.deepEqual(await all(meTok), [m.priv, m.subpub, m.mrprivate, m.mrdisabled]);
  // a member of Reporter and up reads a private feature; a Guest does not
  await w.seed.member({ project: P.int }, w.other, 10);
  await w.seed.member({ project: P.pub }, w.other, 20);
  assert.deepEqual(await all(otherTok), [m.pub, m.subpub, m.mrdisabled]);
  // and back: a feature turned off hides its merge requests from everyone, administrators included
  await put(`/api/v4/projects/${P.priv.id}`, { merge_requests_access_level: 'disabled' });
  await put(`/api/v4/projects/${P.pub.id}`, { visibility: 'public' });
  assert.deepEqual(await stored(), { pub: 'public', int: 'private', priv: 'disabled', subpub: 'internal', mrprivate: 'private', mrdisabled: 'public' });
  assert.deepEqual(await all(root), [m.pub, m.int, m.subpub, m.mrprivate, m.mrdisabled]);
  assert.deepEqual(await all(), [m.pub, m.mrdisabled]);
});

test('the merge request visibility migration fills the rows it finds from their projects', async (t) => {
  const w = await world(t);
  const { P, mr, c } = w;
  const m: Record<string, number> = {};
  for (const key of ['pub', 'int', 'priv', 'mrprivate', 'mrdisabled', 'secret']) m[key] = (await mr(P[key])).id;
  const k = c.db.kysely as any;
  // the state before the migration: no column, no triggers
  if (c.db.dialect === 'postgres') {
    await sql`drop trigger merge_requests_visibility on merge_requests`.execute(k);
    await sql`drop trigger projects_merge_request_visibility on projects`.execute(k);
    await sql`drop function merge_requests_visibility_of_project()`.execute(k);
    await sql`drop function projects_visibility_to_merge_requests()`.execute(k);
  } else {
    for (const trigger of ['merge_requests_visibility', 'merge_requests_visibility_move', 'projects_merge_request_visibility'])
      await sql`drop trigger ${sql.id(trigger)}`.execute(k);
  }
  await k.schema.alterTable('merge_requests').dropColumn('visibility').execute();
  await k.deleteFrom('schema_migrations').where('name', '=', '034-merge-request-visibility').execute();
  assert.deepEqual(await migrate(c.db), ['034-merge-request-visibility']);
  const rows = await k.selectFrom('merge_requests').select(['id', 'visibility']).orderBy('id').execute();
  assert.deepEqual(
    rows.map((r: { visibility: string }) => r.visibility),
    ['public', 'internal', 'private', 'private', 'disabled', 'private'],
  );
  // and the triggers are back
  await k.updateTable('projects').set({ visibility: 'internal' }).where('id', '=', P.pub.id).execute();
  assert.equal((await k.selectFrom('merge_requests').select('visibility').where('id', '=', m.pub).executeTakeFirst()).visibility, 'internal');
});

test('GET /projects/:id/merge_requests: 404 for a project the caller cannot see, 403 when its merge requests are closed to them', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok, otherTok } = w;
  const priv = await mr(P.priv);
  const res = await get(app, `/api/v4/projects/${P.priv.id}/merge_requests`, otherTok);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  assert.equal((await get(app, `/api/v4/projects/${P.priv.id}/merge_requests`)).statusCode, 404);
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${P.priv.id}/merge_requests`, meTok)), [priv.id]);
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${encodeURIComponent('top/priv')}/merge_requests`, meTok)), [priv.id]);
  for (const [project, h] of [
    [P.mrdisabled, meTok],
    [P.mrprivate, otherTok],
    [P.mrprivate, {}],
  ] as const) {
    const r = await get(app, `/api/v4/projects/${project.id}/merge_requests`, h);
    assert.equal(r.statusCode, 403, project.path);
    assert.deepEqual(r.json(), { message: '403 Forbidden' });
  }
  assert.equal((await get(app, `/api/v4/projects/${P.mrprivate.id}/merge_requests`, meTok)).statusCode, 200);
  assert.equal((await get(app, '/api/v4/projects/99999/merge_requests', meTok)).statusCode, 404);
});

test('GET /groups/:id/merge_requests: the group and its subgroups, unarchived projects unless non_archived=false; 404 for an invisible group', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok, seed } = w;
  const pub = await mr(P.pub);
  const subpub = await mr(P.subpub);
  const archived = await mr(P.archived);
  await mr(P.away);
  await mr(P.mrdisabled);
  assert.deepEqual(idsOf(await get(app, `/api/v4/groups/${w.top.id}/merge_requests?sort=asc`, meTok)), [pub.id, subpub.id]);
  assert.deepEqual(idsOf(await get(app, `/api/v4/groups/${w.top.id}/merge_requests?sort=asc&non_archived=false`, meTok)), [pub.id, subpub.id, archived.id]);
  assert.deepEqual(idsOf(await get(app, `/api/v4/groups/top%2Fsub/merge_requests`, meTok)), [subpub.id]);
  const hidden = await seed.group({ path: 'hidden', visibility: 'private' });
  const res = await get(app, `/api/v4/groups/${hidden.id}/merge_requests`, meTok);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });
});

test('order_by and sort: created_at (default, desc), updated_at, title, merged_at (nulls last), each with the id tie-breaker in the same direction', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok } = w;
  const same = at(30);
  const a = await mr(P.pub, { title: 'beta', created_at: same, updated_at: at(50), merged_at: at(60) });
  const b = await mr(P.pub, { title: 'alpha', created_at: same, updated_at: at(40) });
  const c = await mr(P.pub, { title: 'gamma', created_at: at(10), updated_at: at(50), merged_at: at(70) });
  const d = await mr(P.pub, { title: 'alpha', created_at: at(40), updated_at: at(20), merged_at: at(60) });
  const list = async (q: string) => idsOf(await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?${q}`, meTok));
  assert.deepEqual(await list(''), [d.id, b.id, a.id, c.id]);
  assert.deepEqual(await list('order_by=created_at&sort=asc'), [c.id, a.id, b.id, d.id]);
  assert.deepEqual(await list('order_by=updated_at'), [c.id, a.id, b.id, d.id]);
  assert.deepEqual(await list('order_by=updated_at&sort=asc'), [d.id, b.id, a.id, c.id]);
  assert.deepEqual(await list('order_by=title&sort=asc'), [b.id, d.id, a.id, c.id]);
  assert.deepEqual(await list('order_by=title&sort=desc'), [c.id, a.id, d.id, b.id]);
  assert.deepEqual(await list('order_by=merged_at&sort=desc'), [c.id, d.id, a.id, b.id]);
  assert.deepEqual(await list('order_by=merged_at&sort=asc'), [a.id, d.id, c.id, b.id]);
  for (const q of ['order_by=id', 'order_by=foo', 'sort=up']) {
    const res = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?${q}`, meTok);
    assert.equal(res.statusCode, 400, q);
    assert.deepEqual(res.json(), { error: `${q.split('=')[0]} does not have a valid value` });
  }
});

test('pagination: GitLab offset headers and Link with every declared parameter', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok } = w;
  const rows = [];
  for (let i = 0; i < 5; i++) rows.push(await mr(P.pub));
  const res = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?per_page=2&page=2&state=opened`, meTok);
  assert.deepEqual(idsOf(res), [rows[2].id, rows[1].id]);
  assert.equal(res.headers['x-per-page'], '2');
  assert.equal(res.headers['x-page'], '2');
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  assert.equal(res.headers['x-total'], '5');
  assert.equal(res.headers['x-total-pages'], '3');
  const base = `${EXTERNAL_URL}/api/v4/projects/${P.pub.id}/merge_requests?id=${P.pub.id}&order_by=created_at`;
  const tail = 'sort=desc&state=opened&with_labels_details=false&with_merge_status_recheck=false';
  assert.equal(
    res.headers.link,
    [
      `<${base}&page=1&per_page=2&${tail}>; rel="prev"`,
      `<${base}&page=3&per_page=2&${tail}>; rel="next"`,
      `<${base}&page=1&per_page=2&${tail}>; rel="first"`,
      `<${base}&page=3&per_page=2&${tail}>; rel="last"`,
    ].join(', '),
  );
  const last = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?per_page=2&page=3`, meTok);
  assert.deepEqual(idsOf(last), [rows[0].id]);
  assert.equal(last.headers['x-next-page'], '');
  const bad = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?per_page=0`, meTok);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'per_page has a value not allowed' });
});

test('view=simple: exactly the nine fields of MergeRequestSimple', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok } = w;
  const row = await mr(P.pub, { title: 'Simple', description: 'Plain', state: 'merged', updated_at: at(99) });
  const res = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?view=simple`, meTok);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [
    {
      id: row.id,
      iid: 1,
      project_id: P.pub.id,
      title: 'Simple',
      description: 'Plain',
      state: 'merged',
      created_at: at(1),
      updated_at: at(99),
      web_url: `${EXTERNAL_URL}/top/pub/-/merge_requests/1`,
    },
  ]);
  const bad = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?view=full`, meTok);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'view does not have a valid value' });
});

test('with_labels_details: labels as objects instead of names', async (t) => {
  const w = await world(t);
  const { app, P, mr, label, meTok } = w;
  const bug = await label(P.pub, 'bug');
  await mr(P.pub, { labels: [bug] });
  const names = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests`, meTok);
  assert.deepEqual(names.json()[0].labels, ['bug']);
  const details = await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?with_labels_details=true`, meTok);
  const [l] = details.json()[0].labels;
  assert.equal(typeof l, 'object');
  assert.equal(l.id, bug);
  assert.equal(l.name, 'bug');
  assert.equal(l.color, '#428bca');
});

test('the response cache: a write to a merge request is seen by the next read', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok, c } = w;
  const row = await mr(P.pub, { title: 'Before' });
  const url = `/api/v4/projects/${P.pub.id}/merge_requests?state=opened`;
  assert.deepEqual(idsOf(await get(app, url, meTok)), [row.id]);
  assert.deepEqual(idsOf(await get(app, url, meTok)), [row.id]);
  await c.db.kysely.updateTable('merge_requests').set({ state: 'closed' }).where('id', '=', row.id).execute();
  assert.deepEqual(idsOf(await get(app, url, meTok)), []);
});

test('with_merge_status_recheck: accepted, the list is not held up', async (t) => {
  const w = await world(t);
  const { app, P, mr, meTok } = w;
  const row = await mr(P.pub);
  assert.deepEqual(idsOf(await get(app, `/api/v4/projects/${P.pub.id}/merge_requests?with_merge_status_recheck=true`, meTok)), [row.id]);
});

test('references.relative: relative to the project listed, the full path from another group, short on the global list', async (t) => {
  const w = await world(t);
  await w.mr(w.P.subpub);
  const refs = async (url: string) => (await get(w.app, url, w.meTok)).json()[0].references;
  assert.deepEqual(await refs(`/api/v4/projects/${w.P.subpub.id}/merge_requests`), { short: '!1', relative: '!1', full: 'top/sub/subpub!1' });
  assert.deepEqual(await refs(`/api/v4/groups/${w.top.id}/merge_requests`), { short: '!1', relative: 'top/sub/subpub!1', full: 'top/sub/subpub!1' });
  // no project or group to be relative to: GitLab's to_reference(nil) is the short form
  assert.deepEqual(await refs('/api/v4/merge_requests?scope=all'), { short: '!1', relative: '!1', full: 'top/sub/subpub!1' });
});
