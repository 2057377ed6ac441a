// Cached credentials and lists must never outlive a write, whoever makes it (another node writes
// straight to the database: here, the test does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { sql } from 'kysely';
import { readVersions } from '../../../src/db/versions.ts';

test('every write replaces its table version with a token never used before, in both dialects', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const seen = new Set<number>();
  const snap = async () => {
    const v = await readVersions(c.db);
    return v;
  };
  const before = await snap();
  seen.add(before.users);
  const u = await seed.user();
  const v1 = await snap();
  assert.notEqual(v1.users, before.users);
  seen.add(v1.users);
  // a rolled-back write must not bring back an earlier token
  await assert.rejects(
    c.db.kysely.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ bio: 'rolled back' }).where('id', '=', u.id).execute();
      throw new Error('roll back');
    }),
  );
  const v2 = await snap();
  assert.equal(v2.users, v1.users);
  await c.db.kysely.updateTable('users').set({ bio: 'x' }).where('id', '=', u.id).execute();
  const v3 = await snap();
  assert.ok(!seen.has(v3.users), 'a fresh token after the rollback');
  const tok = await seed.token(u);
  await c.db.kysely.deleteFrom('personal_access_tokens').where('id', '=', tok.id).execute();
  const after = await snap();
  assert.notEqual(after.personal_access_tokens, before.personal_access_tokens);
  assert.equal(after.identities, before.identities);
});

test('a write by another connection (the CLI, another process) is seen at once', async (t) => {
  const { c, dataDir } = await buildTestApp(t);
  if (c.db.dialect !== 'sqlite') return; // PostgreSQL: by notification (the last test)
  const before = await readVersions(c.db);
  const { createDb } = await import('../../../src/db/connect.ts');
  const other = createDb({ databaseUrl: null, dataDir });
  await other.kysely.updateTable('users').set({ bio: 'from elsewhere' }).where('id', '=', 1).execute();
  await other.close();
  const after = await readVersions(c.db);
  assert.notEqual(after.users, before.users);
});

test('a token revoked or a user blocked behind the app stops working on the next request', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  const get = () => app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers });
  assert.equal((await get()).statusCode, 200);
  assert.equal((await get()).statusCode, 200); // served from the credential cache
  await c.db.kysely.updateTable('users').set({ state: 'blocked' }).where('id', '=', u.id).execute();
  assert.equal((await get()).statusCode, 403);
  await c.db.kysely.updateTable('users').set({ state: 'active' }).where('id', '=', u.id).execute();
  assert.equal((await get()).statusCode, 200);
  await c.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', tok.id).execute();
  const res = await get();
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().error, 'invalid_token');
});

test('the user list reflects writes made through the API and behind it', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const list = async () =>
    (await app.inject({ method: 'GET', url: '/api/v4/users?per_page=100&order_by=id&sort=asc', headers: root })).json().map((u: any) => u.username);
  const first = await list();
  assert.deepEqual(await list(), first);
  const created = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { username: 'newbie', name: 'New', email: 'newbie@example.com', password: 'password-123' },
  });
  assert.equal(created.statusCode, 201);
  assert.deepEqual(await list(), [...first, 'newbie']);
  const other = await seed.user({ username: 'behind' });
  assert.deepEqual(await list(), [...first, 'newbie', 'behind']);
  await c.db.kysely.updateTable('users').set({ username: 'renamed' }).where('id', '=', other.id).execute();
  assert.deepEqual(await list(), [...first, 'newbie', 'renamed']);
  // the pagination headers come back with the cached body
  const a = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=1', headers: root });
  const b = await app.inject({ method: 'GET', url: '/api/v4/users?per_page=1', headers: root });
  for (const h of ['x-page', 'x-per-page', 'x-total', 'x-total-pages', 'x-next-page', 'x-prev-page', 'link']) assert.equal(b.headers[h], a.headers[h], h);
  assert.equal(b.headers['content-type'], 'application/json');
  assert.equal(b.body, a.body);
});

test('concurrent misses of one list share one computation, and each gets the whole answer', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  for (let i = 0; i < 5; i++) await seed.user({ username: `crowd${i}` });
  const { responseCacheRequests } = await import('../../../src/metrics/registry.ts');
  const count = async (result: string) =>
    (await responseCacheRequests.get()).values.find((v) => v.labels.route === '/api/v4/users' && v.labels.result === result)?.value ?? 0;
  const [misses, shared, hits] = [await count('miss'), await count('shared'), await count('hit')];
  const url = '/api/v4/users?per_page=2&order_by=id&sort=asc&crowd=1';
  const answers = await Promise.all(Array.from({ length: 10 }, () => app.inject({ method: 'GET', url, headers: root })));
  assert.deepEqual(
    answers.map((r) => r.statusCode),
    Array(10).fill(200),
  );
  for (const r of answers) {
    assert.equal(r.body, answers[0].body);
    for (const h of ['x-page', 'x-per-page', 'x-total', 'x-total-pages', 'x-next-page', 'link']) assert.equal(r.headers[h], answers[0].headers[h], h);
  }
  assert.deepEqual(
    answers[0].json().map((u: { username: string }) => u.username),
    ['root', 'crowd0'],
  );
  assert.equal(answers[0].headers['x-total'], '6');
  assert.equal((await count('miss')) - misses, 1, 'one computation');
  // the others waited for it; on PostgreSQL a request reads its table versions asynchronously, so some may
  // come after it and hit the stored answer instead (the count of waiters is SQLite's to pin down)
  const waited = (await count('shared')) - shared;
  if (c.db.dialect === 'sqlite') assert.equal(waited, 9, 'nine waited for it');
  assert.equal(waited + (await count('hit')) - hits, 9, 'the nine others');
  // after a write, the next misses compute the new answer (not the shared old one)
  await c.db.kysely.updateTable('users').set({ username: 'crowd-renamed' }).where('username', '=', 'crowd0').execute();
  const again = await Promise.all(Array.from({ length: 3 }, () => app.inject({ method: 'GET', url, headers: root })));
  for (const r of again)
    assert.deepEqual(
      r.json().map((u: { username: string }) => u.username),
      ['root', 'crowd-renamed'],
    );
});

test('each viewer gets their own list: administrators, users and their own tokens', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const bob = await seed.user({ username: 'bob' });
  const ta = await seed.token(alice, { name: 'alice-token' });
  const tb = await seed.token(bob, { name: 'bob-token' });
  const names = async (headers: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens', headers }))
      .json()
      .map((x: any) => x.name)
      .sort();
  assert.deepEqual(await names(ta.headers), ['alice-token']);
  assert.deepEqual(await names(tb.headers), ['bob-token']);
  assert.deepEqual(await names(root), ['HEARTH_ROOT_TOKEN', 'alice-token', 'bob-token']);
  const adminView = (await app.inject({ method: 'GET', url: '/api/v4/users', headers: root })).json()[0];
  const userView = (await app.inject({ method: 'GET', url: '/api/v4/users', headers: ta.headers })).json()[0];
  assert.ok('email' in adminView);
  assert.ok(!('email' in userView));
});

test('PostgreSQL: versions come from notifications (no query while nothing wrote), a local write at once, and a lost feed falls back to queries', async (t) => {
  const { c } = await buildTestApp(t);
  if (c.db.dialect !== 'postgres') return;
  const feed = c.db.versionFeed!;
  const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  await until('the feed to listen', () => feed.live);
  const first = await readVersions(c.db);
  // the same snapshot object: no query was made
  assert.equal(await readVersions(c.db), first);

  // another node: its own connection
  const pg = (await import('pg')).default;
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(c.db.kysely)).rows[0].s;
  const other = new pg.Client({ connectionString: process.env.DATABASE_URL_TEST, options: `-c search_path=${schema}` });
  await other.connect();
  t.after(() => other.end());
  await other.query(`update users set bio = 'from another node' where id = 1`);
  const stored = Number((await other.query(`select version from table_versions where name = 'users'`)).rows[0].version);
  await until('the notification', async () => (await readVersions(c.db)).users === stored);
  const notified = await readVersions(c.db);
  assert.equal(notified.personal_access_tokens, first.personal_access_tokens);
  assert.equal(await readVersions(c.db), notified);

  // this node's own write: seen by the very next read, before any notification
  await c.db.kysely.updateTable('users').set({ bio: 'local' }).where('id', '=', 1).execute();
  const local = await readVersions(c.db);
  assert.ok(local.users > stored);

  // the listening connection is lost: every read queries until it listens again
  const pid = feed.pid!;
  await other.query('select pg_terminate_backend($1)', [pid]);
  await until('the feed to notice', () => !feed.live);
  await other.query(`update users set bio = 'while deaf' where id = 1`);
  const deaf = Number((await other.query(`select version from table_versions where name = 'users'`)).rows[0].version);
  assert.equal((await readVersions(c.db)).users, deaf);
  await until('the feed to listen again', () => feed.live && feed.pid !== pid);
  await other.query(`update users set bio = 'heard again' where id = 1`);
  const again = Number((await other.query(`select version from table_versions where name = 'users'`)).rows[0].version);
  await until('the notification after reconnecting', async () => (await readVersions(c.db)).users === again);
});

test('PostgreSQL: writers of one table do not wait for each other (its version is taken at commit), tables written in opposite orders do not deadlock, and every commit gets a later version', async (t) => {
  const { c, seed } = await buildTestApp(t);
  if (c.db.dialect !== 'postgres') return;
  const pg = (await import('pg')).default;
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(c.db.kysely)).rows[0].s;
  const connect = async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL_TEST, options: `-c search_path=${schema}` });
    await client.connect();
    t.after(() => client.end());
    return client;
  };
  const version = async (name: string) =>
    Number((await c.db.kysely.selectFrom('table_versions').select('version').where('name', '=', name).executeTakeFirstOrThrow()).version);
  const users: { id: number }[] = [];
  for (let i = 0; i < 20; i++) users.push(await seed.user());
  const clients = await Promise.all(users.map(() => connect()));
  const before = await version('users');
  // 20 transactions write a row of users each and stay open: every write returns while the others are open
  const written = Promise.all(
    clients.map(async (client, i) => {
      await client.query('begin');
      await client.query('update users set bio = $1 where id = $2', [`writer ${i}`, users[i].id]);
    }),
  );
  const stuck = new Promise((_, reject) => setTimeout(() => reject(new Error('a writer waited for another one')), 20_000).unref());
  await Promise.race([written, stuck]);
  assert.equal(await version('users'), before, 'nothing is visible before a commit');
  // they commit one after the other: each commit a later version
  const seen = [];
  for (const client of clients) {
    await client.query('commit');
    seen.push(await version('users'));
  }
  for (let i = 0; i < seen.length; i++) assert.ok(seen[i] > (i ? seen[i - 1] : before), `commit ${i}: ${seen[i]} after ${i ? seen[i - 1] : before}`);

  // two tables, written in opposite orders by two open transactions: both commit
  const [a, b] = clients;
  const group = await seed.group();
  const [users0, namespaces0] = [await version('users'), await version('namespaces')];
  await a.query('begin');
  await b.query('begin');
  await a.query(`update users set bio = 'a' where id = $1`, [users[0].id]);
  await b.query(`update namespaces set description = 'b' where id = $1`, [group.id]);
  await Promise.race([
    Promise.all([
      a.query(`update namespaces set description = 'a' where id <> $1`, [group.id]),
      b.query(`update users set bio = 'b' where id = $1`, [users[1].id]),
    ]),
    stuck,
  ]);
  await Promise.all([a.query('commit'), b.query('commit')]);
  assert.ok((await version('users')) > users0);
  assert.ok((await version('namespaces')) > namespaces0);
  assert.deepEqual(
    (await c.db.kysely.selectFrom('users').select('bio').where('id', 'in', [users[0].id, users[1].id]).orderBy('id').execute()).map((r) => r.bio),
    ['a', 'b'],
  );
});
