// Group lists: GET /groups, /groups/:id/subgroups and /groups/:id/descendant_groups with GroupsFinder's
// visibility rules, every filter, ordering, offset pagination and anonymous keyset pagination.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { assertSearchIndexesInSync } from '../../helpers/search-index.ts';
import type { NamespaceRow, UserRow } from '../../../src/db/schema.ts';

interface World {
  t: TestApp;
  g: Record<string, NamespaceRow>;
  alice: UserRow;
  aliceH: Record<string, string>;
  bobH: Record<string, string>;
  extH: Record<string, string>;
}

/**
 * alpha (private, alice Owner) > child > leaf; beta (public) > pubsub (public); gamma (internal);
 * delta (private) > dsub (private) holding a project alice develops; epsilon (private, nobody).
 * bob is a Developer of beta; ext is an external user.
 */
async function world(t: Parameters<typeof buildTestApp>[0]): Promise<World> {
  const app = await buildTestApp(t);
  const { seed } = app;
  const g: Record<string, NamespaceRow> = {};
  g.alpha = await seed.group({ path: 'alpha', visibility: 'private' });
  g.child = await seed.group({ path: 'child', parent: g.alpha, visibility: 'private' });
  g.leaf = await seed.group({ path: 'leaf', parent: g.child, visibility: 'private' });
  g.beta = await seed.group({ path: 'beta', visibility: 'public' });
  g.pubsub = await seed.group({ path: 'pubsub', parent: g.beta, visibility: 'public' });
  g.gamma = await seed.group({ path: 'gamma', visibility: 'internal' });
  g.delta = await seed.group({ path: 'delta', visibility: 'private' });
  g.dsub = await seed.group({ path: 'dsub', parent: g.delta, visibility: 'private' });
  g.epsilon = await seed.group({ path: 'epsilon', visibility: 'private' });
  const alice = await seed.user({ username: 'alice' });
  await seed.member({ group: g.alpha }, alice, 50);
  const project = await seed.project({ namespace: g.dsub });
  await seed.member({ project }, alice, 30);
  const bob = await seed.user({ username: 'bob' });
  await seed.member({ group: g.beta }, bob, 30);
  const ext = await seed.user({ username: 'ext', external: true });
  return {
    t: app,
    g,
    alice,
    aliceH: (await seed.token(alice)).headers,
    bobH: (await seed.token(bob)).headers,
    extH: (await seed.token(ext)).headers,
  };
}

const paths = (res: { json(): unknown }) => (res.json() as { full_path: string }[]).map((x) => x.full_path);

test('GET /groups: who sees what (anonymous, members, all_available, external users, administrators)', async (t) => {
  const w = await world(t);
  const { app, root } = w.t;
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

  const anon = await get('/api/v4/groups');
  assert.equal(anon.statusCode, 200);
  assert.equal(anon.headers['content-type'], 'application/json');
  assert.deepEqual(paths(anon), ['beta', 'beta/pubsub']);

  // signed-in users see their groups, the ancestors of their subgroups and projects, and descendants
  assert.deepEqual(paths(await get('/api/v4/groups', w.aliceH)), ['alpha', 'alpha/child', 'delta', 'delta/dsub', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups?all_available=true', w.aliceH)), [
    'alpha',
    'beta',
    'alpha/child',
    'delta',
    'delta/dsub',
    'gamma',
    'alpha/child/leaf',
    'beta/pubsub',
  ]);
  assert.deepEqual(paths(await get('/api/v4/groups', w.bobH)), ['beta', 'beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups?all_available=true', w.extH)), ['beta', 'beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups', w.extH)), []);

  // administrators see every group (never personal namespaces), unless they ask for their own
  const all = await get('/api/v4/groups', root);
  assert.deepEqual(paths(all), ['alpha', 'beta', 'alpha/child', 'delta', 'delta/dsub', 'epsilon', 'gamma', 'alpha/child/leaf', 'beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups?all_available=false', root)), []);

  // the list entity is Entities::Group: no detail fields
  const first = (all.json() as Record<string, unknown>[])[0];
  assert.equal(first.full_name, 'alpha');
  assert.equal('projects' in first, false);
  assert.equal('shared_with_groups' in first, false);
  const leaf = (all.json() as Record<string, unknown>[]).find((x) => x.id === w.g.leaf.id)!;
  assert.equal(leaf.full_name, 'alpha / child / leaf');
  assert.equal(leaf.parent_id, w.g.child.id);
  assert.equal(leaf.web_url, `${EXTERNAL_URL}/groups/alpha/child/leaf`);
});

test('GET /groups and /namespaces: search gives the same groups for mixed case, %, _, ", non-ASCII and short needles; renames and moves at once', async (t) => {
  const w = await world(t);
  const { app, c, root } = w.t;
  const sqlite = c.db.dialect === 'sqlite';
  const name = (key: string, value: string) => c.db.kysely.updateTable('namespaces').set({ name: value }).where('id', '=', w.g[key].id).execute();
  await name('gamma', 'Grüne 100% "Gruppe"');
  await name('epsilon', 'Ärzte_Team');
  const groups = async (search: string) =>
    paths(await app.inject({ method: 'GET', url: `/api/v4/groups?all_available=true&order_by=id&search=${encodeURIComponent(search)}`, headers: root }));
  const namespaces = async (query: string) =>
    paths(await app.inject({ method: 'GET', url: `/api/v4/namespaces?${query}`, headers: root })).filter((p) => !['root', 'alice', 'bob', 'ext'].includes(p));
  assert.deepEqual(await groups('CHILD'), ['alpha/child', 'alpha/child/leaf'], 'the name, the path or the full path');
  assert.deepEqual(await groups('ha/chi'), ['alpha/child', 'alpha/child/leaf']);
  assert.deepEqual(await groups('100%'), ['gamma'], '% is literal');
  assert.deepEqual(await groups('"gruppe"'), ['gamma'], 'the whole search, quotes and all');
  assert.deepEqual(await groups('grüne 100'), ['gamma']);
  assert.deepEqual(await groups('rzte_t'), ['epsilon'], '_ is literal');
  assert.deepEqual(await groups('rztext'), []);
  assert.deepEqual(await groups('ÄRZTE'), sqlite ? [] : ['epsilon'], "SQLite's lower() leaves Ä as it is");
  assert.deepEqual(await groups('af'), ['alpha/child/leaf'], 'two characters: still a substring');
  // GET /namespaces: every word (of 3 characters or more) in the name or the path; the full path on request
  assert.deepEqual(await namespaces('search=CHI'), ['alpha/child']);
  assert.deepEqual(await namespaces('search=grüne%20%22gruppe%22'), ['gamma']);
  assert.deepEqual(await namespaces('search=alpha/child&full_path_search=true'), ['alpha/child', 'alpha/child/leaf']);
  // a group moved to another path moves its subgroups' full paths; a renamed group; a deleted one
  const res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${w.g.alpha.id}`, headers: root, payload: { path: 'omega' } });
  assert.equal(res.statusCode, 200, res.body);
  await name('gamma', 'Green');
  assert.deepEqual(await groups('alpha'), ['omega'], 'the name stays alpha');
  assert.deepEqual(await groups('omega/'), ['omega/child', 'omega/child/leaf']);
  assert.deepEqual(await groups('gruppe'), []);
  assert.deepEqual(await groups('green'), ['gamma']);
  assert.deepEqual(await namespaces('search=omega/child/le&full_path_search=true'), ['omega/child/leaf']);
  await c.db.kysely.deleteFrom('namespaces').where('id', '=', w.g.epsilon.id).execute();
  assert.deepEqual(await groups('rzte'), []);
  await assertSearchIndexesInSync(c);
});

test('GET /groups: owned, min_access_level, top_level_only, search, visibility, skip_groups, ordering', async (t) => {
  const w = await world(t);
  const { app } = w.t;
  const get = (url: string, headers = w.aliceH) => app.inject({ method: 'GET', url, headers });

  assert.deepEqual(paths(await get('/api/v4/groups?owned=true')), ['alpha']);
  assert.deepEqual(paths(await get('/api/v4/groups?owned=true')), ['alpha']);
  assert.deepEqual(paths(await get('/api/v4/groups?owned=true', {})), []);
  assert.deepEqual(paths(await get('/api/v4/groups?min_access_level=40')), ['alpha', 'alpha/child', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups?min_access_level=30', w.bobH)), ['beta', 'beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups?min_access_level=40', w.bobH)), []);
  assert.deepEqual(paths(await get('/api/v4/groups?top_level_only=true&all_available=true')), ['alpha', 'beta', 'delta', 'gamma']);
  // search looks at the name, the path and the full path
  assert.deepEqual(paths(await get('/api/v4/groups?search=CHILD')), ['alpha/child', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups?search=sub&all_available=true')), ['delta/dsub', 'beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups?search=100%25')), []);
  assert.deepEqual(paths(await get('/api/v4/groups?visibility=public&all_available=true')), ['beta', 'beta/pubsub']);
  assert.deepEqual(paths(await get(`/api/v4/groups?skip_groups[]=${w.g.alpha.id}&skip_groups[]=${w.g.child.id}`)), ['delta', 'delta/dsub', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get(`/api/v4/groups?skip_groups=${w.g.alpha.id},${w.g.delta.id}`)), ['alpha/child', 'delta/dsub', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups?order_by=id&sort=desc')), ['delta/dsub', 'delta', 'alpha/child/leaf', 'alpha/child', 'alpha']);
  assert.deepEqual(paths(await get('/api/v4/groups?order_by=path')), ['alpha', 'alpha/child', 'delta', 'delta/dsub', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups?sort=desc')), ['alpha/child/leaf', 'delta/dsub', 'delta', 'alpha/child', 'alpha']);
  assert.deepEqual(paths(await get('/api/v4/groups?order_by=similarity')), ['alpha', 'alpha/child', 'delta', 'delta/dsub', 'alpha/child/leaf']);
  // statistics and custom attributes are accepted and change nothing
  assert.deepEqual(paths(await get('/api/v4/groups?statistics=true&with_custom_attributes=true')), [
    'alpha',
    'alpha/child',
    'delta',
    'delta/dsub',
    'alpha/child/leaf',
  ]);
});

test('GET /groups: bad parameters', async (t) => {
  const w = await world(t);
  const { app } = w.t;
  const cases: [string, string][] = [
    ['order_by=size', 'order_by does not have a valid value'],
    ['sort=up', 'sort does not have a valid value'],
    ['min_access_level=35', 'min_access_level does not have a valid value'],
    ['min_access_level=abc', 'min_access_level is invalid'],
    ['all_available=perhaps', 'all_available is invalid'],
    ['visibility=secret', 'visibility does not have a valid value'],
    ['owned=maybe', 'owned is invalid'],
    ['skip_groups[]=abc', 'skip_groups is invalid'],
    ['per_page=0', 'per_page has a value not allowed'],
    ['page=abc', 'page is invalid'],
  ];
  for (const [q, error] of cases) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/groups?${q}`, headers: w.aliceH });
    assert.equal(res.statusCode, 400, q);
    assert.deepEqual(res.json(), { error }, q);
  }
});

test('GET /groups: offset pagination headers', async (t) => {
  const w = await world(t);
  const { app, root } = w.t;
  const res = await app.inject({ method: 'GET', url: '/api/v4/groups?per_page=2&page=2', headers: root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(paths(res), ['alpha/child', 'delta']);
  const link = (page: number) =>
    `<${EXTERNAL_URL}/api/v4/groups?order_by=name&owned=false&page=${page}&per_page=2&sort=asc&statistics=false&with_custom_attributes=false>`;
  assert.equal(res.headers['x-per-page'], '2');
  assert.equal(res.headers['x-page'], '2');
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  assert.equal(res.headers['x-total'], '9');
  assert.equal(res.headers['x-total-pages'], '5');
  assert.equal(res.headers.link, `${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(1)}; rel="first", ${link(5)}; rel="last"`);
  const past = await app.inject({ method: 'GET', url: '/api/v4/groups?per_page=2&page=9', headers: root });
  assert.deepEqual(past.json(), []);
  assert.equal(past.headers['x-next-page'], '');
  // the credential never reaches the links
  const withToken = await app.inject({ method: 'GET', url: `/api/v4/groups?per_page=5&private_token=${root['private-token']}` });
  assert.ok(!String(withToken.headers.link).includes('private_token'));
});

test('GET /groups: keyset pagination for anonymous callers (order_by=name, sort=asc only)', async (t) => {
  const { app, seed } = await buildTestApp(t);
  for (const p of ['kb', 'ka', 'kc']) await seed.group({ path: p, visibility: 'public' });
  const first = await app.inject({ method: 'GET', url: '/api/v4/groups?pagination=keyset&per_page=2' });
  assert.equal(first.statusCode, 200);
  assert.deepEqual(paths(first), ['ka', 'kb']);
  assert.equal(first.headers['x-total'], undefined);
  const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1];
  assert.ok(next.startsWith(`${EXTERNAL_URL}/api/v4/groups?cursor=`));
  assert.ok(next.includes('pagination=keyset'));
  const second = await app.inject({ method: 'GET', url: next.slice(EXTERNAL_URL.length) });
  assert.deepEqual(paths(second), ['kc']);
  assert.equal(second.headers.link, undefined);

  const other = await app.inject({ method: 'GET', url: '/api/v4/groups?pagination=keyset&order_by=id' });
  assert.equal(other.statusCode, 405);
  assert.deepEqual(other.json(), { error: 'Keyset pagination is not yet available for this type of request' });
  const bad = await app.inject({ method: 'GET', url: '/api/v4/groups?pagination=keyset&cursor=%%%' });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'cursor is invalid' });
  const far = await app.inject({ method: 'GET', url: '/api/v4/groups?page=501&per_page=100' });
  assert.equal(far.statusCode, 405);
  assert.deepEqual(far.json(), {
    error:
      'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Group. Remaining records can be retrieved using keyset pagination.',
  });
});

test('GET /groups/:id/subgroups and /descendant_groups', async (t) => {
  const w = await world(t);
  const { app, root } = w.t;
  const get = (url: string, headers: Record<string, string> = w.aliceH) => app.inject({ method: 'GET', url, headers });

  assert.deepEqual(paths(await get(`/api/v4/groups/${w.g.alpha.id}/subgroups`)), ['alpha/child']);
  assert.deepEqual(paths(await get('/api/v4/groups/alpha/subgroups')), ['alpha/child']);
  assert.deepEqual(paths(await get('/api/v4/groups/alpha%2Fchild/subgroups')), ['alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups/alpha/descendant_groups')), ['alpha/child', 'alpha/child/leaf']);
  assert.deepEqual(paths(await get('/api/v4/groups/alpha/descendant_groups?search=leaf')), ['alpha/child/leaf']);
  // a public group: its public subgroups for anonymous callers; signed-in non-members ask for all_available
  assert.deepEqual(paths(await get('/api/v4/groups/beta/subgroups', {})), ['beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups/beta/subgroups')), []);
  assert.deepEqual(paths(await get('/api/v4/groups/beta/subgroups?all_available=true')), ['beta/pubsub']);
  assert.deepEqual(paths(await get('/api/v4/groups/delta/descendant_groups', root)), ['delta/dsub']);

  for (const url of ['/api/v4/groups/epsilon/subgroups', `/api/v4/groups/${w.g.epsilon.id}/descendant_groups`, '/api/v4/groups/nope/subgroups']) {
    const res = await get(url);
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  }

  const paged = await get('/api/v4/groups/alpha/descendant_groups?per_page=1');
  assert.equal(paged.headers['x-total'], '2');
  assert.equal(
    paged.headers.link,
    `<${EXTERNAL_URL}/api/v4/groups/alpha/descendant_groups?id=alpha&order_by=name&owned=false&page=2&per_page=1&sort=asc&statistics=false&with_custom_attributes=false>; rel="next", ` +
      `<${EXTERNAL_URL}/api/v4/groups/alpha/descendant_groups?id=alpha&order_by=name&owned=false&page=1&per_page=1&sort=asc&statistics=false&with_custom_attributes=false>; rel="first", ` +
      `<${EXTERNAL_URL}/api/v4/groups/alpha/descendant_groups?id=alpha&order_by=name&owned=false&page=2&per_page=1&sort=asc&statistics=false&with_custom_attributes=false>; rel="last"`,
  );
  // the lists of two parents are cached apart
  assert.deepEqual(paths(await get('/api/v4/groups/alpha%2Fchild/descendant_groups')), ['alpha/child/leaf']);
});

test('GET /groups lists follow writes at once (response cache)', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const user = await seed.user();
  const { headers } = await seed.token(user);
  assert.deepEqual(paths(await app.inject({ method: 'GET', url: '/api/v4/groups', headers })), []);
  const created = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'New', path: 'new' } });
  assert.equal(created.statusCode, 201);
  assert.deepEqual(paths(await app.inject({ method: 'GET', url: '/api/v4/groups', headers })), ['new']);
  const other = await seed.group({ path: 'other', visibility: 'private' });
  await seed.member({ group: other }, user, 10);
  assert.deepEqual(paths(await app.inject({ method: 'GET', url: '/api/v4/groups', headers })), ['new', 'other']);
});
