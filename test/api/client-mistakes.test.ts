// Client mistakes answer each API's own 400 (or DRF's 404 for a page), never a 500: malformed multipart
// bodies on every route that takes a body, page numbers no integer column holds on every list, a list
// given for a one-value parameter (`commits?author[]=`), ids beyond the id columns, NUL bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, ROOT_TOKEN, type TestApp } from '../helpers/build-app.ts';
import { poComponent } from '../helpers/translation.ts';

const BOUNDARY = '----hearth';
const TRUNCATED = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue`;
const WHOLE = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`;

interface Op {
  method: string;
  path: string;
  api: 'platform' | 'translation';
}

/** The operations of the OpenAPI document, with the path parameters filled with ids that exist. */
async function fixture(t: Parameters<typeof buildTestApp>[0]) {
  const ctx = await buildTestApp(t);
  const user = await ctx.seed.user();
  const group = await ctx.seed.group({ visibility: 'public' });
  const { fixture: repo } = await poComponent(t, ctx);
  const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  const values: Record<string, string> = {
    user_id: String(user.id),
    key: 'k',
    branch: 'main',
    tag_name: 'v1',
    sha: 'main',
    file_path: 'README.md',
    format: 'zip',
    code: 'cs',
    username: 'root',
    project: 'hello',
    component: 'po',
    language: 'cs',
    '*': `${repo.fullPath}.git/info/refs`,
  };
  const fill = (path: string) =>
    path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      if (name !== 'id') return values[name] ?? '1';
      if (path.startsWith('/api/v4/users/')) return String(user.id);
      if (path.startsWith('/api/v4/groups/')) return String(group.id);
      if (path.startsWith('/api/v4/projects/')) return String(project.id);
      return '1';
    });
  const doc: any = ctx.app.swagger();
  const ops: Array<Op & { url: string; query: string[]; requiredQuery: string[] }> = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const api = path.startsWith('/api/v4/') ? 'platform' : path.startsWith('/api/') ? 'translation' : null;
    if (!api) continue;
    for (const [m, op] of Object.entries<any>(item)) {
      const query = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
      const requiredQuery = (op.parameters ?? []).filter((p: any) => p.in === 'query' && p.required).map((p: any) => p.name);
      ops.push({ method: m.toUpperCase(), path, api, url: fill(path), query, requiredQuery });
    }
  }
  return { ctx, ops, project, user, group };
}

const auth = (api: Op['api']): Record<string, string> => (api === 'translation' ? { authorization: `Token ${ROOT_TOKEN}` } : { 'private-token': ROOT_TOKEN });

async function rowCounts(ctx: TestApp) {
  const out: Record<string, number> = {};
  for (const table of ['users', 'namespaces', 'projects', 'members', 'personal_access_tokens', 'system_hooks', 'translation_projects', 'components'] as const) {
    const { n } = await ctx.c.db.kysely
      .selectFrom(table as any)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(n);
  }
  return out;
}

test('a malformed multipart body is a 400 with the parse error on every route that takes a body; nothing is written', { timeout: 120_000 }, async (t) => {
  const { ctx, ops } = await fixture(t);
  // The runner's uploads (a job log, an artifacts archive) check the job token before reading a byte of
  // the body, as Workhorse authorizes an upload before accepting it: a stranger's body is never parsed.
  const streamed = new Set(['PATCH /api/v4/jobs/{id}/trace', 'POST /api/v4/jobs/{id}/artifacts']);
  // So do the archive uploads of imports and project uploads, for a caller who is not signed in (401).
  const archives = new Set(['POST /api/v4/projects/import', 'POST /api/v4/projects/import-relation', 'POST /api/v4/projects/{id}/uploads']);
  const writes = ops.filter((o) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(o.method) && !streamed.has(`${o.method} ${o.path}`));
  assert.ok(writes.length >= 55, `${writes.length} operations take a body`);
  for (const op of ops.filter((o) => streamed.has(`${o.method} ${o.path}`))) {
    const res = await ctx.app.inject({
      method: op.method as any,
      url: op.url,
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: TRUNCATED,
    });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], op.url);
  }
  const before = await rowCounts(ctx);
  const cases = [
    { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, payload: TRUNCATED, reason: 'Unexpected end of multipart data' },
    { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, payload: 'not multipart at all', reason: 'Unexpected end of multipart data' },
    { headers: { 'content-type': 'multipart/form-data' }, payload: WHOLE, reason: 'Invalid boundary in multipart: None' },
    { headers: { 'content-type': 'multipart/form-data; boundary=' }, payload: WHOLE, reason: 'Invalid boundary in multipart: ' },
  ];
  const wrong: string[] = [];
  for (const op of writes) {
    for (const c of cases) {
      for (const who of archives.has(`${op.method} ${op.path}`) ? [auth(op.api)] : [auth(op.api), {}]) {
        const res = await ctx.app.inject({ method: op.method as any, url: op.url, headers: { ...who, ...c.headers }, payload: c.payload });
        const message = `Multipart form parse error - ${c.reason}`;
        const expected = op.api === 'translation' ? { detail: message } : { error: message };
        const got = [res.statusCode, res.headers['content-type'], res.body];
        const want = [400, 'application/json', JSON.stringify(expected)];
        if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${op.method} ${op.url} ${JSON.stringify(c.headers)}: ${JSON.stringify(got)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
  for (const op of ops.filter((o) => archives.has(`${o.method} ${o.path}`))) {
    const res = await ctx.app.inject({ method: op.method as any, url: op.url, headers: cases[0].headers, payload: TRUNCATED });
    assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }], op.url);
  }
  assert.deepEqual(await rowCounts(ctx), before);
});

test('a well-formed multipart body still arrives as its fields on both APIs; a file is no text', async (t) => {
  const { ctx } = await fixture(t);
  const field = (k: string, v: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  const form = (fields: Record<string, string>) =>
    Object.entries(fields)
      .map(([k, v]) => field(k, v))
      .join('') + `--${BOUNDARY}--\r\n`;
  const headers = { ...auth('platform'), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
  let res = await ctx.app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers,
    payload: form({ name: 'Multipart group', path: 'multipart-group', description: 'd' }),
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual([res.json().name, res.json().path, res.json().description], ['Multipart group', 'multipart-group', 'd']);
  // a file arrives as its bytes: not a string (Grape gives a hash, "is invalid")
  const withFile =
    field('name', 'G') +
    field('path', 'g-file') +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="description"; filename="d.txt"\r\nContent-Type: text/plain\r\n\r\nfrom a file\r\n--${BOUNDARY}--\r\n`;
  res = await ctx.app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: withFile });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'description is invalid' }]);
  res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: { ...auth('translation'), 'content-type': `multipart/form-data; boundary="${BOUNDARY}"` },
    payload: form({ name: 'Multi', slug: 'multi', web: 'https://multi.example/' }),
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual([res.json().name, res.json().slug], ['Multi', 'multi']);
});

test('page=1e999 and page=99999999999999999999: "page is invalid" on every platform list, "Invalid page." on every translation list', {
  timeout: 120_000,
}, async (t) => {
  const { ctx, ops } = await fixture(t);
  const platformLists = ops.filter((o) => o.api === 'platform' && o.method === 'GET' && o.query.includes('page'));
  assert.ok(platformLists.length >= 11, `${platformLists.length} platform lists`);
  const translationLists: string[] = [];
  for (const op of ops.filter((o) => o.api === 'translation' && o.method === 'GET')) {
    const res = await ctx.app.inject({ method: 'GET', url: op.url, headers: auth('translation') });
    if (res.statusCode === 200 && res.headers['content-type'] === 'application/json' && Array.isArray(res.json().results)) translationLists.push(op.url);
  }
  assert.ok(translationLists.length >= 11, `${translationLists.length} translation lists: ${translationLists.join(' ')}`);
  const wrong: string[] = [];
  for (const page of ['1e999', '99999999999999999999', '-1e999', '2147483648']) {
    for (const op of platformLists) {
      // required parameters given (search's scope and search), so that the page is the one mistake
      const given = op.requiredQuery.map((q) => `${q}=${q === 'scope' ? 'issues' : 'abc'}&`).join('');
      for (const name of ['page', 'per_page']) {
        const res = await ctx.app.inject({ method: 'GET', url: `${op.url}?${given}${name}=${page}`, headers: auth('platform') });
        const got = [res.statusCode, res.body];
        if (JSON.stringify(got) !== JSON.stringify([400, JSON.stringify({ error: `${name} is invalid` })]))
          wrong.push(`${op.url}?${name}=${page}: ${JSON.stringify(got)}`);
      }
    }
    for (const url of translationLists) {
      const res = await ctx.app.inject({ method: 'GET', url: `${url}?page=${page}`, headers: auth('translation') });
      const got = [res.statusCode, res.body];
      if (JSON.stringify(got) !== JSON.stringify([404, '{"detail":"Invalid page."}'])) wrong.push(`${url}?page=${page}: ${JSON.stringify(got)}`);
    }
  }
  assert.deepEqual(wrong, []);
  // pages that exist still work
  const res = await ctx.app.inject({ method: 'GET', url: '/api/v4/groups?page=1&per_page=2147483647', headers: auth('platform') });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-per-page'], '100');
});

test('commits?author[]=: a list for a one-value parameter is "author is invalid", as Grape says', async (t) => {
  const { ctx, project } = await fixture(t);
  const base = `/api/v4/projects/${project.id}/repository/commits`;
  for (const q of ['author[]=', 'author[]=Ada', 'author[]=a&author[]=b', 'author[a]=1', 'author[a][b]=1']) {
    const res = await ctx.app.inject({ method: 'GET', url: `${base}?${q}`, headers: auth('platform') });
    assert.deepEqual([res.statusCode, res.headers['content-type'], res.json()], [400, 'application/json', { error: 'author is invalid' }], q);
  }
  // several at once, in the route's declaration order; a list where lists belong is fine
  let res = await ctx.app.inject({ method: 'GET', url: `${base}?author[]=x&path[]=po&ref_name[]=main`, headers: auth('platform') });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'ref_name is invalid, path is invalid, author is invalid' }]);
  res = await ctx.app.inject({ method: 'GET', url: `${base}?author=Ada`, headers: auth('platform') });
  assert.equal(res.statusCode, 200);
  assert.ok(res.json().length >= 1);
  res = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members?user_ids[]=1&user_ids[]=2`, headers: auth('platform') });
  assert.equal(res.statusCode, 200);
  // in a body too (form or JSON), where Ajv alone would take the first item of a one-item list
  res = await ctx.app.inject({ method: 'POST', url: '/api/v4/groups', headers: auth('platform'), payload: { name: ['x'], path: 'list-name' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'name is invalid' }]);
});

test('ids beyond the id columns name nothing (404); query and body integers beyond them are invalid; NUL bytes are refused before any lookup', async (t) => {
  const { ctx, project } = await fixture(t);
  const cases: Array<[string, string, Record<string, string>, number, unknown]> = [
    ['GET', '/api/v4/projects/2147483648', auth('platform'), 404, { message: '404 Project Not Found' }],
    ['GET', '/api/v4/groups/99999999999999999999', auth('platform'), 404, { message: '404 Group Not Found' }],
    ['GET', '/api/v4/users/2147483648/projects', auth('platform'), 404, { message: '404 User Not Found' }],
    ['GET', '/api/v4/users/2147483648', auth('platform'), 404, { message: '404 User Not Found' }],
    ['GET', '/api/v4/hooks/1e999', auth('platform'), 404, { message: '404 Not found' }],
    ['DELETE', '/api/v4/hooks/2147483648', auth('platform'), 404, { message: '404 Not found' }],
    ['GET', `/api/v4/projects/${project.id}/members/2147483648`, auth('platform'), 404, { message: '404 Not found' }],
    ['DELETE', '/api/v4/member_roles/99999999999999999999', auth('platform'), 404, { message: '404 Member Role Not Found' }],
    ['GET', '/api/v4/projects?id_after=2147483648', auth('platform'), 400, { error: 'id_after is invalid' }],
    ['GET', '/api/v4/groups?skip_groups[]=2147483648', auth('platform'), 400, { error: 'skip_groups is invalid' }],
    ['GET', '/api/units/2147483648/', auth('translation'), 404, { detail: 'Not found.' }],
    ['GET', '/api/changes/99999999999999999999/', auth('translation'), 404, { detail: 'Not found.' }],
    ['GET', '/api/v4/projects?search=a%00b', auth('platform'), 400, { error: 'search is invalid' }],
    ['GET', '/api/v4/user?sudo=%00', auth('platform'), 400, { error: 'sudo is invalid' }],
    ['GET', '/api/v4/groups/%00', auth('platform'), 400, { error: 'id is invalid' }],
    ['POST', `/api/v4/projects/${project.id}/repository/branches?branch=a%00&ref=main`, auth('platform'), 400, { error: 'branch is invalid' }],
    ['PUT', '/api/projects/%00/', auth('translation'), 404, { detail: 'Not found.' }],
    ['GET', '/api/units/?q=%00', auth('translation'), 400, { q: ['Null characters are not allowed.'] }],
  ];
  for (const [method, url, headers, status, body] of cases) {
    const res = await ctx.app.inject({ method: method as any, url, headers });
    assert.deepEqual([res.statusCode, res.json()], [status, body], `${method} ${url}`);
  }
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers: auth('platform'),
    payload: { name: 'n', path: 'p', description: 'a\u0000b' },
  });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'description is invalid' }]);
  const drf = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: auth('translation'),
    payload: { name: 'N\u0000', slug: 'n', web: 'https://n.example/' },
  });
  assert.deepEqual([drf.statusCode, drf.json()], [400, { name: ['Null characters are not allowed.'] }]);
});

test('the translation API reads the query as Django does: `q[a]=1` names `q[a]`, not `q`', async (t) => {
  const { ctx } = await fixture(t);
  const plain = await ctx.app.inject({ method: 'GET', url: '/api/units/', headers: auth('translation') });
  for (const q of ['q[a]=1', 'q[a][b][c]=1', 'q[]=x']) {
    const res = await ctx.app.inject({ method: 'GET', url: `/api/units/?${q}`, headers: auth('translation') });
    assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
    assert.equal(res.json().count, plain.json().count, q);
  }
});
