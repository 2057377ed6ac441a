// GET /projects, GET /groups/:id/projects, GET /users/:user_id/projects: who sees what, filters,
// orders, offset and keyset pagination, shapes, and the response cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { expectedProject, groupNs, userNs } from '../../helpers/projects-expect.ts';
import { assertSearchIndexesInSync } from '../../helpers/search-index.ts';

const get = (app: any, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
const ids = (res: any): number[] => res.json().map((p: { id: number }) => p.id);

/**
 * A small world: public, internal and private projects in a group tree and personal namespaces, and a
 * user `me` who is a member of some of them in every way there is.
 */
async function world(t: any) {
  const ctx = await buildTestApp(t);
  const { seed } = ctx;
  const me = await seed.user({ username: 'me', name: 'Me' });
  const other = await seed.user({ username: 'other', name: 'Other' });
  const top = await seed.group({ path: 'top', name: 'Top', visibility: 'public' });
  const sub = await seed.group({ path: 'sub', name: 'Sub', parent: top, visibility: 'public' });
  const team = await seed.group({ path: 'team', name: 'Team', visibility: 'private' });
  const P: Record<string, ProjectRow> = {};
  const make = async (key: string, ns: NamespaceRow, visibility: string, attrs: Partial<{ name: string; archived: boolean }> = {}) => {
    P[key] = await seed.project({ namespace: ns, path: key, name: attrs.name ?? key, visibility, archived: attrs.archived });
  };
  await make('pub-top', top, 'public');
  await make('int-top', top, 'internal');
  await make('priv-top', top, 'private');
  await make('pub-sub', sub, 'public');
  await make('priv-sub', sub, 'private');
  await make('priv-team', team, 'private');
  await make('priv-team-2', team, 'private', { archived: true });
  await make('priv-other', await seed.namespaceOf(other), 'private');
  await make('priv-me', await seed.namespaceOf(me), 'private');
  await seed.member({ group: sub }, me, 30); // priv-sub, pub-sub through the group
  await seed.member({ group: team }, me, 10); // priv-team, priv-team-2 as guest
  await seed.member({ project: P['priv-top'] }, me, 50); // a direct Owner
  await seed.member({ project: P['priv-other'] }, me, 20, { expires_at: '2001-01-01' }); // expired: nothing
  const meTok = (await seed.token(me)).headers;
  return { ...ctx, me, other, top, sub, team, P, meTok };
}

test('GET /projects: anonymous callers see public projects in the basic shape; the default order is newest first', async (t) => {
  const { app, top, P } = await world(t);
  const res = await get(app, '/api/v4/projects');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(ids(res), [P['pub-sub'].id, P['pub-top'].id]);
  assert.deepEqual(res.json()[1], expectedProject(P['pub-top'], { namespace: groupNs(top), namespaceFullName: 'Top', shape: 'basic' }));
  // membership-type filters find nothing for anonymous callers
  for (const q of ['membership=true', 'owned=true', 'min_access_level=10']) assert.deepEqual(ids(await get(app, `/api/v4/projects?${q}`)), [], q);
});

test('GET /projects: a user sees public, internal and their own projects, each with their permissions', async (t) => {
  const { app, sub, P, meTok } = await world(t);
  const res = await get(app, '/api/v4/projects?order_by=id&sort=asc', meTok);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    ids(res),
    ['pub-top', 'int-top', 'priv-top', 'pub-sub', 'priv-sub', 'priv-team', 'priv-team-2', 'priv-me'].map((k) => P[k].id),
  );
  const privSub = res.json().find((p: { id: number }) => p.id === P['priv-sub'].id);
  assert.deepEqual(
    privSub,
    expectedProject(P['priv-sub'], {
      namespace: groupNs(sub),
      namespaceFullName: 'Top / Sub',
      shape: 'with_access',
      level: 30,
      permissions: { project_access: null, group_access: 30 },
    }),
  );
  const privTop = res.json().find((p: { id: number }) => p.id === P['priv-top'].id);
  assert.deepEqual(privTop.permissions, { project_access: { access_level: 50, notification_level: 3 }, group_access: null });
  // simple=true: the basic shape for everyone
  const simple = await get(app, '/api/v4/projects?order_by=id&sort=asc&simple=true', meTok);
  assert.deepEqual(simple.json()[4], expectedProject(P['priv-sub'], { namespace: groupNs(sub), namespaceFullName: 'Top / Sub', shape: 'basic' }));
});

test('GET /projects: external users see public projects and their own; administrators see everything', async (t) => {
  const { app, seed, root, P } = await world(t);
  const ext = await seed.user({ external: true });
  await seed.member({ project: P['priv-team'] }, ext, 20);
  const res = await get(app, '/api/v4/projects?order_by=id&sort=asc', (await seed.token(ext)).headers);
  assert.deepEqual(ids(res), [P['pub-top'].id, P['pub-sub'].id, P['priv-team'].id]);
  const all = await get(app, '/api/v4/projects?order_by=id&sort=asc', root);
  assert.deepEqual(
    ids(all),
    Object.values(P).map((p) => p.id),
  );
  assert.equal(all.json()[0].repository_storage, 'default');
  assert.deepEqual(all.json()[0].permissions, { project_access: null, group_access: null });
});

test('GET /projects: membership, owned and min_access_level (direct, inherited from groups and their parents, personal; expired ones do not count)', async (t) => {
  const { app, seed, root, me, top, P, meTok } = await world(t);
  const q = async (query: string, headers = meTok) => ids(await get(app, `/api/v4/projects?order_by=id&sort=asc&${query}`, headers)).sort((a, b) => a - b);
  const keys = (...k: string[]) => k.map((x) => P[x].id).sort((a, b) => a - b);
  assert.deepEqual(await q('membership=true'), keys('priv-top', 'pub-sub', 'priv-sub', 'priv-team', 'priv-team-2', 'priv-me'));
  assert.deepEqual(await q('owned=true'), keys('priv-top', 'priv-me'));
  assert.deepEqual(await q('min_access_level=30'), keys('priv-top', 'pub-sub', 'priv-sub', 'priv-me'));
  assert.deepEqual(await q('membership=true&min_access_level=50'), keys('priv-top', 'priv-me'));
  // a membership of the parent group reaches the subgroup's projects
  await seed.member({ group: top }, me, 20);
  assert.deepEqual(await q('membership=true'), keys('pub-top', 'int-top', 'priv-top', 'pub-sub', 'priv-sub', 'priv-team', 'priv-team-2', 'priv-me'));
  // administrators: their own memberships only
  assert.deepEqual(await q('membership=true', root), []);
  let res = await get(app, '/api/v4/projects?min_access_level=25', meTok);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'min_access_level does not have a valid value' }]);
  res = await get(app, '/api/v4/projects?membership=maybe', meTok);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'membership is invalid' }]);
});

test('GET /projects: search (path, name, description; short queries match exactly), visibility, archived, topics, dates, ids', async (t) => {
  const { app, c, root, P } = await world(t);
  await c.db.kysely.updateTable('projects').set({ description: 'The Widget Factory', topics: '["Rust","cli"]' }).where('id', '=', P['pub-top'].id).execute();
  await c.db.kysely.updateTable('projects').set({ name: 'Widget Tools' }).where('id', '=', P['int-top'].id).execute();
  await c.db.kysely
    .updateTable('projects')
    .set({ last_activity_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:00:00.000Z' })
    .where('id', '=', P['priv-me'].id)
    .execute();
  const q = async (query: string) => ids(await get(app, `/api/v4/projects?order_by=id&sort=asc&${query}`, root));
  assert.deepEqual(await q('search=widget'), [P['pub-top'].id, P['int-top'].id]);
  assert.deepEqual(await q('search=WIDGET%20factory'), [P['pub-top'].id], 'every word must match');
  assert.deepEqual(await q('search=%22widget%20f%22'), [P['pub-top'].id], 'a quoted phrase is one term');
  assert.deepEqual(await q('search=priv-sub'), [P['priv-sub'].id]);
  assert.deepEqual(await q('search=pr'), [], 'two characters: an exact match only');
  assert.deepEqual(await q('search=sub%2Fpriv&search_namespaces=true'), [P['priv-sub'].id]);
  assert.deepEqual(await q('search=50%25'), []);
  assert.deepEqual(await q('visibility=internal'), [P['int-top'].id]);
  assert.deepEqual(await q('archived=true'), [P['priv-team-2'].id]);
  assert.equal((await q('archived=false')).length, Object.keys(P).length - 1);
  assert.deepEqual(await q('topic=rust'), [P['pub-top'].id]);
  assert.deepEqual(await q('topic=rust,CLI'), [P['pub-top'].id]);
  assert.deepEqual(await q('topic=rust,go'), []);
  assert.deepEqual(await q('last_activity_before=2021-01-01'), [P['priv-me'].id]);
  assert.equal((await q('last_activity_after=2021-01-01T00:00:00Z')).length, Object.keys(P).length - 1);
  assert.deepEqual(ids(await get(app, '/api/v4/projects?updated_before=2021-01-01&order_by=updated_at', root)), [P['priv-me'].id]);
  assert.deepEqual(await q(`id_after=${P['priv-team-2'].id}`), [P['priv-other'].id, P['priv-me'].id]);
  assert.deepEqual(await q(`id_before=${P['int-top'].id}`), [P['pub-top'].id]);
  // stars, imports, languages and topic ids do not exist here
  for (const f of ['starred=true', 'imported=true', 'with_programming_language=Ruby', 'topic_id=1']) assert.deepEqual(await q(f), [], f);
  let res = await get(app, '/api/v4/projects?updated_after=2020-01-01', root);
  assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - `updated_at` filter and `updated_at` sorting must be paired' }]);
  res = await get(app, '/api/v4/projects?last_activity_after=yesterday', root);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'last_activity_after is invalid' }]);
  res = await get(app, '/api/v4/projects?visibility=hidden', root);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'visibility does not have a valid value' }]);
});

test('GET /projects: search gives the same projects for mixed case, phrases, %, _, ", non-ASCII and namespace paths; edits are seen at once', async (t) => {
  const { app, c, root, P } = await world(t);
  const sqlite = c.db.dialect === 'sqlite';
  const set = (key: string, values: { name?: string; description?: string | null; path?: string }) =>
    c.db.kysely.updateTable('projects').set(values).where('id', '=', P[key].id).execute();
  await set('pub-top', { name: 'Ünïcode Parser', description: 'The parser reads 100% of "quoted" input_files' });
  await set('int-top', { description: 'A PARSER for ÉCOLE' });
  const q = async (query: string) => ids(await get(app, `/api/v4/projects?order_by=id&sort=asc&search=${encodeURIComponent(query)}`, root));
  const inPaths = async (query: string) =>
    ids(await get(app, `/api/v4/projects?order_by=id&sort=asc&search_namespaces=true&search=${encodeURIComponent(query)}`, root));
  assert.deepEqual(await q('PaRsEr'), [P['pub-top'].id, P['int-top'].id]);
  assert.deepEqual(await q('parser "quoted"'), [P['pub-top'].id], 'every term in one column');
  assert.deepEqual(await q('parser quoted'), [P['pub-top'].id]);
  assert.deepEqual(await q('parser école'), sqlite ? [] : [P['int-top'].id], "SQLite's lower() leaves É as it is");
  assert.deepEqual(await q('"reads 100%"'), [P['pub-top'].id], '% is literal');
  assert.deepEqual(await q('input_f'), [P['pub-top'].id], '_ is literal');
  assert.deepEqual(await q('inputxf'), []);
  assert.deepEqual(await q('of "quoted'), [P['pub-top'].id], 'an unpaired " is part of its term');
  assert.deepEqual(await q('nïcode'), [P['pub-top'].id]);
  assert.deepEqual(await q('ünïcode'), sqlite ? [] : [P['pub-top'].id]);
  assert.deepEqual(await q('cole'), [P['int-top'].id]);
  // the namespace's full path and the path, with the '/' between them: a term across the '/' (its part after
  // it long enough to look up, or only its part before it, or neither), in the full path alone, in the path alone
  assert.deepEqual(await inPaths('sub/pri'), [P['priv-sub'].id]);
  assert.deepEqual(await inPaths('sub/p'), [P['pub-sub'].id, P['priv-sub'].id]);
  assert.deepEqual(await inPaths('b/p'), [P['pub-sub'].id, P['priv-sub'].id]);
  assert.deepEqual(await inPaths('top/sub'), [P['pub-sub'].id, P['priv-sub'].id]);
  assert.deepEqual(await inPaths('TOP/ pub'), [P['pub-top'].id, P['pub-sub'].id], 'each term anywhere in the full path');
  assert.deepEqual(await inPaths('/priv-team'), [P['priv-team'].id, P['priv-team-2'].id]);
  assert.deepEqual(await inPaths('team-2'), [P['priv-team-2'].id]);
  assert.deepEqual(await q('top/sub'), [], 'without search_namespaces: the path alone');
  // the index follows edits: a renamed project, a cleared description, a moved group's full path, a deleted project
  await set('pub-top', { name: 'Renamed', description: null });
  await set('int-top', { path: 'int-moved', name: 'Moved' });
  assert.deepEqual(await q('parser'), [P['int-top'].id]);
  assert.deepEqual(await q('renamed'), [P['pub-top'].id]);
  assert.deepEqual(await q('int-moved'), [P['int-top'].id]);
  assert.deepEqual(await q('int-top'), []);
  await c.db.kysely.updateTable('namespaces').set({ full_path: 'moved/sub' }).where('full_path', '=', 'top/sub').execute();
  assert.deepEqual(await inPaths('moved/sub/'), [P['pub-sub'].id, P['priv-sub'].id]);
  assert.deepEqual(await inPaths('top/sub'), []);
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${P['priv-team-2'].id}`, headers: root });
  assert.equal(res.statusCode, 202);
  assert.deepEqual(await inPaths('team-2'), []);
  await assertSearchIndexesInSync(c);
});
test('GET /projects: with_issues_enabled and with_merge_requests_enabled', async (t) => {
  const { app, root, P, meTok } = await world(t);
  const put = (id: number, payload: Record<string, unknown>) => app.inject({ method: 'PUT', url: `/api/v4/projects/${id}`, headers: root, payload });
  await put(P['pub-top'].id, { issues_enabled: false });
  await put(P['int-top'].id, { issues_access_level: 'private', merge_requests_access_level: 'disabled' });
  const q = async (query: string, headers: Record<string, string>) => ids(await get(app, `/api/v4/projects?order_by=id&sort=asc&${query}`, headers));
  assert.deepEqual(await q('with_issues_enabled=true&visibility=public', meTok), [P['pub-sub'].id]);
  assert.deepEqual(await q('with_issues_enabled=true&search=int-top', meTok), [], 'private issues: members only');
  assert.deepEqual(await q('with_issues_enabled=true&search=int-top', root), [P['int-top'].id]);
  assert.deepEqual(await q('with_merge_requests_enabled=true&search=top', root), [P['pub-top'].id, P['priv-top'].id]);
});

test('GET /projects: orders and their validation', async (t) => {
  const { app, c, root, P } = await world(t);
  const names: Record<string, string> = { 'pub-top': 'delta', 'int-top': 'Alpha', 'priv-top': 'charlie', 'pub-sub': 'bravo' };
  for (const [k, name] of Object.entries(names))
    await c.db.kysely
      .updateTable('projects')
      .set({ name, last_activity_at: `2024-0${Object.keys(names).indexOf(k) + 1}-01T00:00:00.000Z` })
      .where('id', '=', P[k].id)
      .execute();
  const q = async (query: string) => ids(await get(app, `/api/v4/projects?search=top&${query}`, root));
  assert.deepEqual(
    await q('order_by=name&sort=asc'),
    ['int-top', 'priv-top', 'pub-top'].map((k) => P[k].id),
  );
  assert.deepEqual(
    await q('order_by=path&sort=desc'),
    ['pub-top', 'priv-top', 'int-top'].map((k) => P[k].id),
  );
  assert.deepEqual(
    await q('order_by=last_activity_at&sort=desc'),
    ['priv-top', 'int-top', 'pub-top'].map((k) => P[k].id),
  );
  assert.deepEqual(
    await q('order_by=id'),
    ['priv-top', 'int-top', 'pub-top'].map((k) => P[k].id),
  );
  assert.deepEqual(
    await q('order_by=star_count&sort=asc'),
    ['pub-top', 'int-top', 'priv-top'].map((k) => P[k].id),
  );
  assert.deepEqual(
    await q('order_by=storage_size&sort=asc'),
    ['pub-top', 'int-top', 'priv-top'].map((k) => P[k].id),
  );
  // similarity: the closest match first, among the caller's own projects
  await c.db.kysely.updateTable('projects').set({ name: 'top' }).where('id', '=', P['priv-top'].id).execute();
  assert.equal(ids(await get(app, '/api/v4/projects?search=top&order_by=similarity', root)).length, 0, 'root is a member of nothing');
  let res = await get(app, '/api/v4/projects?order_by=stars', root);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'order_by does not have a valid value' }]);
  res = await get(app, '/api/v4/projects?sort=up', root);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'sort does not have a valid value' }]);
});

test('GET /projects: similarity order puts the closest of the caller’s projects first', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const g = await seed.group();
  await seed.member({ group: g }, u, 30);
  const a = await seed.project({ namespace: g, path: 'my-api-tools', name: 'My API tools' });
  const b = await seed.project({ namespace: g, path: 'api', name: 'API' });
  const c2 = await seed.project({ namespace: g, path: 'api-client', name: 'api client' });
  await seed.project({ path: 'api-public', visibility: 'public' });
  const res = await get(app, '/api/v4/projects?search=api&order_by=similarity', (await seed.token(u)).headers);
  assert.deepEqual(ids(res), [b.id, c2.id, a.id]);
});

test('GET /projects: offset pagination headers and links as GitLab writes them; the 50,000 offset limit', async (t) => {
  const { app, root, P } = await world(t);
  const res = await get(app, '/api/v4/projects?per_page=3&page=2&order_by=id&sort=asc', root);
  assert.deepEqual(
    ids(res),
    ['pub-sub', 'priv-sub', 'priv-team'].map((k) => P[k].id),
  );
  const params = 'imported=false&membership=false&order_by=id&owned=false';
  const tail = 'simple=false&sort=asc&starred=false&statistics=false&with_custom_attributes=false&with_issues_enabled=false&with_merge_requests_enabled=false';
  const link = (page: number) => `<${EXTERNAL_URL}/api/v4/projects?${params}&page=${page}&per_page=3&${tail}>`;
  assert.equal(res.headers['x-total'], '9');
  assert.equal(res.headers['x-total-pages'], '3');
  assert.equal(res.headers['x-page'], '2');
  assert.equal(res.headers['x-per-page'], '3');
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  assert.equal(res.headers.link, `${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(1)}; rel="first", ${link(3)}; rel="last"`);
  const far = await get(app, '/api/v4/projects?per_page=100&page=501', root);
  assert.equal(far.statusCode, 405);
  assert.deepEqual(far.json(), {
    error:
      'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. Remaining records can be retrieved using keyset pagination.',
  });
  const zero = await get(app, '/api/v4/projects?per_page=0', root);
  assert.deepEqual([zero.statusCode, zero.json()], [400, { error: 'per_page has a value not allowed' }]);
});

test('GET /projects: keyset pagination by id (Link rel="next" only, id_before / id_after), 405 for other orders', async (t) => {
  const { app, root, P } = await world(t);
  const all = Object.values(P)
    .map((p) => p.id)
    .sort((a, b) => b - a);
  let url = '/api/v4/projects?pagination=keyset&order_by=id&per_page=4';
  const seen: number[] = [];
  for (let i = 0; i < 5 && url; i++) {
    const res = await get(app, url, root);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-total'], undefined);
    assert.equal(res.headers['x-next-page'], undefined);
    seen.push(...ids(res));
    const link = res.headers.link as string | undefined;
    if (link) {
      assert.match(link, /^<http:\/\/hearth\.test\/api\/v4\/projects\?[^>]*id_before=\d+[^>]*>; rel="next"$/);
      url = link.slice(link.indexOf('/api/v4'), link.indexOf('>'));
    } else url = '';
  }
  assert.deepEqual(seen, all);
  const asc = await get(app, '/api/v4/projects?pagination=keyset&order_by=id&sort=asc&per_page=2', root);
  assert.deepEqual(ids(asc), all.slice().reverse().slice(0, 2));
  assert.match(asc.headers.link, new RegExp(`id_after=${all.at(-2)}&`));
  const bad = await get(app, '/api/v4/projects?pagination=keyset', root);
  assert.deepEqual([bad.statusCode, bad.json()], [405, { error: 'Keyset pagination is not yet available for this type of request' }]);
});

test('GET /groups/:id/projects: the projects of a group (and its subgroups) the caller may see, in the Project shape', async (t) => {
  const { app, seed, root, top, sub, team, P, meTok } = await world(t);
  let res = await get(app, '/api/v4/groups/top/projects');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(ids(res), [P['pub-top'].id]);
  assert.deepEqual(res.json()[0], expectedProject(P['pub-top'], { namespace: groupNs(top), namespaceFullName: 'Top', shape: 'full', level: 0 }));
  res = await get(app, `/api/v4/groups/${top.id}/projects?include_subgroups=true&order_by=id&sort=asc`, meTok);
  assert.deepEqual(
    ids(res),
    ['pub-top', 'int-top', 'priv-top', 'pub-sub', 'priv-sub'].map((k) => P[k].id),
  );
  assert.equal(res.json()[0].permissions, undefined, 'no permissions in group project lists');
  assert.match(res.headers.link, new RegExp(`[?&]id=${top.id}&include_ancestor_groups=false&include_subgroups=true&`));
  res = await get(app, '/api/v4/groups/top%2Fsub/projects?include_ancestor_groups=true&order_by=id&sort=asc', meTok);
  assert.deepEqual(
    ids(res),
    ['pub-top', 'int-top', 'priv-top', 'pub-sub', 'priv-sub'].map((k) => P[k].id),
  );
  res = await get(app, `/api/v4/groups/${sub.id}/projects?simple=true&order_by=id&sort=asc`, meTok);
  assert.deepEqual(res.json()[1], expectedProject(P['priv-sub'], { namespace: groupNs(sub), namespaceFullName: 'Top / Sub', shape: 'basic' }));
  res = await get(app, `/api/v4/groups/${team.id}/projects?archived=false`, meTok);
  assert.deepEqual(ids(res), [P['priv-team'].id]);
  res = await get(app, `/api/v4/groups/${top.id}/projects?owned=true&include_subgroups=true`, meTok);
  assert.deepEqual(ids(res), [P['priv-top'].id]);
  // invisible or missing groups
  for (const [url, headers] of [
    [`/api/v4/groups/${team.id}/projects`, {}],
    ['/api/v4/groups/nope/projects', root],
    [`/api/v4/groups/${team.id}/projects`, (await seed.token(await seed.user())).headers],
  ] as const) {
    res = await get(app, url, headers);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }], url);
  }
  res = await get(app, `/api/v4/groups/${top.id}/projects?order_by=size`, root);
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'order_by does not have a valid value' }]);
});

test('GET /users/:user_id/projects: personal projects the caller may see, by id or username; 404 User Not Found', async (t) => {
  const { app, c, seed, other, P, meTok } = await world(t);
  const pub = await seed.project({ owner: other, path: 'shared', visibility: 'public' });
  let res = await get(app, `/api/v4/users/${other.id}/projects`, meTok);
  assert.deepEqual(ids(res), [pub.id], 'the private one is not shown (expired membership)');
  res = await get(app, '/api/v4/users/OTHER/projects');
  assert.deepEqual(ids(res), [pub.id]);
  assert.deepEqual(
    res.json()[0],
    expectedProject(pub, { namespace: userNs(await seed.namespaceOf(other), other as UserRow), namespaceFullName: 'Other', shape: 'basic' }),
  );
  res = await get(app, '/api/v4/users/me/projects', meTok);
  assert.deepEqual(ids(res), [P['priv-me'].id]);
  assert.deepEqual(res.json()[0].owner.username, 'me');
  assert.match(res.headers.link, /[?&]user_id=me&/);
  res = await get(app, '/api/v4/users/ghost/projects');
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);
  res = await get(app, '/api/v4/users/99999/projects');
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);
  // a private profile shows nothing to others
  await c.db.kysely.updateTable('users').set({ private_profile: 1 }).where('id', '=', other.id).execute();
  assert.deepEqual(ids(await get(app, `/api/v4/users/${other.id}/projects`, meTok)), []);
});

test('project lists are cached per viewer and never stale: writes through the API and to the tables show at once', async (t) => {
  const { app, c, seed, root, me, top, meTok } = await world(t);
  const first = await get(app, '/api/v4/projects?membership=true', meTok);
  const again = await get(app, '/api/v4/projects?membership=true', meTok);
  assert.equal(again.body, first.body);
  assert.equal(again.headers['x-total'], first.headers['x-total']);
  // another viewer with the same query gets their own list
  assert.notEqual((await get(app, '/api/v4/projects?membership=true', root)).body, first.body);
  const created = (await app.inject({ method: 'POST', url: '/api/v4/projects', headers: meTok, payload: { name: 'fresh' } })).json();
  let now = await get(app, '/api/v4/projects?membership=true', meTok);
  assert.equal(ids(now)[0], created.id);
  await seed.member({ group: top }, me, 10);
  now = await get(app, '/api/v4/projects?membership=true', meTok);
  assert.equal(Number(now.headers['x-total']), Number(first.headers['x-total']) + 3);
  // group lists are per group
  const a = await get(app, '/api/v4/groups/top/projects', meTok);
  const b = await get(app, '/api/v4/groups/top%2Fsub/projects', meTok);
  assert.notEqual(a.body, b.body);
  await c.db.kysely.updateTable('projects').set({ name: 'renamed in the table' }).where('path', '=', 'pub-top').execute();
  assert.match((await get(app, '/api/v4/groups/top/projects', meTok)).body, /renamed in the table/);
});
