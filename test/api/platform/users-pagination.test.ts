// GET /users pagination: offset headers exactly as GitLab's, the 50,000 offset limit, counts above
// 10,000, and the cursor keyset over every supported ordering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../../src/container.ts';
import type { NewUser } from '../../../src/db/schema.ts';
import { userRow } from '../../helpers/rows.ts';
import { buildTestApp } from '../../helpers/build-app.ts';

const BASE = 'http://hearth.test/api/v4/users';
/** The defaults every request carries into its Link URLs (Grape's declared params). */
const ADMIN_DEFAULTS = 'active=false&admins=false&blocked=false&exclude_external=false&exclude_internal=false&external=false';
const ADMIN_TAIL = 'sort=desc&with_custom_attributes=false&without_project_bots=false&without_projects=false';
const adminLink = (page: number, perPage: number | string, extra = '') =>
  `<${BASE}?${ADMIN_DEFAULTS}${extra}&order_by=id&page=${page}&per_page=${perPage}&${ADMIN_TAIL}>`;

async function insertUsers(c: Container, rows: NewUser[]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const inserted = await c.db.kysely
      .insertInto('users')
      .values(rows.slice(i, i + 500))
      .returning('id')
      .execute();
    out.push(...inserted.map((r) => r.id));
  }
  return out;
}

const ids = (res: { json(): unknown }) => (res.json() as { id: number }[]).map((u) => u.id);

test('offset pagination headers: every page, exact Link order and URLs', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const [u2, u3, u4, u5] = await insertUsers(
    c,
    ['a', 'b', 'c', 'd'].map((n) => userRow(n)),
  );

  const page = (p: number) => app.inject({ method: 'GET', url: `/api/v4/users?per_page=2&page=${p}`, headers: root });
  let res = await page(1);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(ids(res), [u5, u4]);
  assert.equal(res.headers['x-page'], '1');
  assert.equal(res.headers['x-per-page'], '2');
  assert.equal(res.headers['x-total'], '5');
  assert.equal(res.headers['x-total-pages'], '3');
  assert.equal(res.headers['x-next-page'], '2');
  assert.equal(res.headers['x-prev-page'], '');
  assert.equal(res.headers.link, `${adminLink(2, 2)}; rel="next", ${adminLink(1, 2)}; rel="first", ${adminLink(3, 2)}; rel="last"`);

  res = await page(2);
  assert.deepEqual(ids(res), [u3, u2]);
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  assert.equal(
    res.headers.link,
    `${adminLink(1, 2)}; rel="prev", ${adminLink(3, 2)}; rel="next", ${adminLink(1, 2)}; rel="first", ${adminLink(3, 2)}; rel="last"`,
  );

  res = await page(3);
  assert.deepEqual(ids(res), [1]);
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers['x-prev-page'], '2');
  assert.equal(res.headers.link, `${adminLink(2, 2)}; rel="prev", ${adminLink(1, 2)}; rel="first", ${adminLink(3, 2)}; rel="last"`);

  // Past the end: empty, both blank, first and last only.
  res = await page(9);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), []);
  assert.equal(res.headers['x-page'], '9');
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers['x-prev-page'], '');
  assert.equal(res.headers['x-total'], '5');
  assert.equal(res.headers.link, `${adminLink(1, 2)}; rel="first", ${adminLink(3, 2)}; rel="last"`);
});

test('per_page: capped at 100 but echoed as requested; negative → 20; page ≤ 0 → 1; defaults 20', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await insertUsers(
    c,
    Array.from({ length: 120 }, (_, i) => userRow(`u${i}`)),
  );

  let res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=500', headers: root });
  assert.equal(res.json().length, 100);
  assert.equal(res.headers['x-per-page'], '100');
  assert.equal(res.headers['x-total-pages'], '2');
  assert.equal(res.headers.link, `${adminLink(2, 500)}; rel="next", ${adminLink(1, 500)}; rel="first", ${adminLink(2, 500)}; rel="last"`);

  res = await app.inject({ method: 'GET', url: '/api/v4/users', headers: root });
  assert.equal(res.json().length, 20);
  assert.equal(res.headers['x-per-page'], '20');
  assert.equal(res.headers['x-total-pages'], '7');
  assert.equal(String(res.headers.link).split(', ')[0], `${adminLink(2, 20)}; rel="next"`);

  res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=-5&page=0', headers: root });
  assert.equal(res.json().length, 20);
  assert.equal(res.headers['x-per-page'], '20');
  assert.equal(res.headers['x-page'], '1');
});

test('Link URLs: sorted keys, encoded values, no credentials, non-administrators without the stripped parameters', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  await insertUsers(c, [userRow('jo1', { name: 'Jo Ann' }), userRow('jo2', { name: 'Jo Ann' })]);
  const me = await seed.user({ username: 'member' });
  const tok = await seed.token(me);
  const res = await app.inject({
    method: 'GET',
    url: `/api/v4/users?search=Jo+Ann&per_page=1&order_by=name&private_token=${tok.token}&custom_attributes[a]=b`,
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().length, 1);
  const expected = (p: number) =>
    `<${BASE}?active=false&admins=false&blocked=false&custom_attributes%5Ba%5D=b&exclude_external=false&exclude_internal=false&external=false` +
    `&page=${p}&per_page=1&search=Jo+Ann&with_custom_attributes=false&without_project_bots=false>`;
  assert.equal(res.headers.link, `${expected(2)}; rel="next", ${expected(1)}; rel="first", ${expected(2)}; rel="last"`);
  assert.ok(!res.headers.link.includes(tok.token));
});

test('offset pagination stops at 50,000 users: 405 beyond, keyset still works', async (t) => {
  const { app, root } = await buildTestApp(t);
  let res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=100&page=501', headers: root });
  assert.equal(res.statusCode, 405);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), {
    error:
      'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type User. Remaining records can be retrieved using keyset pagination.',
  });
  res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=100&page=500', headers: root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), []);
  // The requested values count, before per_page is capped at 100 (GitLab's params[:page] * params[:per_page]).
  res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=1000&page=50', headers: root });
  assert.equal(res.statusCode, 200);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=1000&page=51', headers: root });
  assert.equal(res.statusCode, 405);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=20&page=2501', headers: root });
  assert.equal(res.statusCode, 405);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=root&per_page=20&page=2501' });
  assert.equal(res.statusCode, 405, 'anonymous too');
});

test('above 10,000 users: no X-Total, X-Total-Pages or rel="last"; next still works', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await insertUsers(
    c,
    Array.from({ length: 10_000 }, (_, i) => userRow(`bulk${i}`)),
  );
  const res = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=100&page=3', headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().length, 100);
  assert.equal(res.headers['x-total'], undefined);
  assert.equal(res.headers['x-total-pages'], undefined);
  assert.equal(res.headers['x-next-page'], '4');
  assert.equal(res.headers['x-prev-page'], '2');
  assert.equal(res.headers.link, `${adminLink(2, 100)}; rel="prev", ${adminLink(4, 100)}; rel="next", ${adminLink(1, 100)}; rel="first"`);
});

test('keyset: walking every page of every ordering gives the offset order, Link rel="next" only', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  // Repeated names and times, so the id tie-breaker matters.
  const t1 = '2024-01-01T00:00:00.000Z';
  const t2 = '2025-01-01T00:00:00.000Z';
  await insertUsers(c, [
    userRow('kate', { name: 'Same', created_at: t1, updated_at: t2 }),
    userRow('abe', { name: 'Same', created_at: t1, updated_at: t1 }),
    userRow('zoe', { name: 'Other', created_at: t2, updated_at: t1 }),
    userRow('bea', { name: 'Same', created_at: t2, updated_at: t2 }),
    userRow('max', { name: 'Zulu', created_at: t1, updated_at: t2 }),
    userRow('eve', { name: 'Other', created_at: t2, updated_at: t1 }),
  ]);
  for (const orderBy of ['id', 'name', 'username', 'created_at', 'updated_at']) {
    for (const sort of ['asc', 'desc']) {
      const all = await app.inject({ method: 'GET', url: `/api/v4/users?order_by=${orderBy}&sort=${sort}&per_page=100`, headers: root });
      const expected = ids(all);
      assert.equal(expected.length, 7);
      const walked: number[] = [];
      let url: string | null = `/api/v4/users?pagination=keyset&per_page=2&order_by=${orderBy}&sort=${sort}`;
      let pages = 0;
      while (url) {
        const res: Awaited<ReturnType<typeof app.inject>> = await app.inject({ method: 'GET', url, headers: root });
        assert.equal(res.statusCode, 200);
        for (const h of ['x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page']) assert.equal(res.headers[h], undefined, h);
        walked.push(...ids(res));
        pages++;
        const link = res.headers.link as string | undefined;
        if (!link) break;
        const m = /^<http:\/\/hearth\.test(\/api\/v4\/users\?[^>]+)>; rel="next"$/.exec(link);
        assert.ok(m, link);
        url = m[1];
      }
      assert.deepEqual(walked, expected, `${orderBy} ${sort}`);
      assert.equal(pages, 4, `${orderBy} ${sort}: 2+2+2+1`);
    }
  }
});

test('keyset: the next link keeps every parameter; the last page has none; non-administrators walk id desc', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const [a, b] = await insertUsers(c, [userRow('a'), userRow('b')]);
  let res = await app.inject({ method: 'GET', url: '/api/v4/users?pagination=keyset&per_page=2&order_by=id&sort=asc', headers: root });
  assert.deepEqual(ids(res), [1, a]);
  const cursor = Buffer.from(JSON.stringify({ id: a })).toString('base64');
  assert.equal(
    res.headers.link,
    `<${BASE}?active=false&admins=false&blocked=false&cursor=${encodeURIComponent(cursor)}` +
      `&exclude_external=false&exclude_internal=false&external=false&order_by=id&pagination=keyset&per_page=2&sort=asc&with_custom_attributes=false&without_project_bots=false&without_projects=false>; rel="next"`,
  );
  res = await app.inject({
    method: 'GET',
    url: `/api/v4/users?pagination=keyset&per_page=2&order_by=id&sort=asc&cursor=${encodeURIComponent(cursor)}`,
    headers: root,
  });
  assert.deepEqual(ids(res), [b]);
  assert.equal(res.headers.link, undefined);

  const me = await seed.user({ username: 'me' });
  const tok = await seed.token(me);
  const walked: number[] = [];
  let url: string | null = '/api/v4/users?pagination=keyset&per_page=3&order_by=username&sort=asc';
  while (url) {
    res = await app.inject({ method: 'GET', url, headers: tok.headers });
    walked.push(...ids(res));
    const link = res.headers.link as string | undefined;
    assert.ok(!link || !link.includes('order_by'), 'stripped for non-administrators');
    url = link ? /<http:\/\/hearth\.test([^>]+)>/.exec(link)![1] : null;
  }
  assert.deepEqual(walked, [me.id, b, a, 1]);
});

test('keyset: relevance-ordered search cannot be walked (405); bad cursors are 400', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const tok = await seed.token(await seed.user());
  let res = await app.inject({ method: 'GET', url: '/api/v4/users?pagination=keyset&search=root', headers: tok.headers });
  assert.equal(res.statusCode, 405);
  assert.deepEqual(res.json(), { error: 'Keyset pagination is not yet available for this type of request' });
  // Administrators' searches are ordered by order_by, so they can.
  res = await app.inject({ method: 'GET', url: '/api/v4/users?pagination=keyset&search=root', headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().length, 1);

  const bad = [
    'not-base64-json',
    Buffer.from('[1]').toString('base64'),
    Buffer.from(JSON.stringify({ id: 'x' })).toString('base64'),
    Buffer.from(JSON.stringify({ id: 1 })).toString('base64') + '&order_by=name',
    Buffer.from(JSON.stringify({ name: 5, id: 1 })).toString('base64') + '&order_by=name',
  ];
  for (const cursor of bad) {
    res = await app.inject({ method: 'GET', url: `/api/v4/users?pagination=keyset&cursor=${cursor}`, headers: root });
    assert.equal(res.statusCode, 400, cursor);
    assert.deepEqual(res.json(), { error: 'cursor is invalid' });
  }
  // Any other pagination value is offset pagination.
  res = await app.inject({ method: 'GET', url: '/api/v4/users?pagination=offset', headers: root });
  assert.equal(res.headers['x-total'], '2');
});
