// Client mistakes are never server errors: every operation of the OpenAPI document gets a bounded,
// deterministic set of bad requests (bad path ids, huge and malformed query values, broken JSON and
// multipart bodies, wrong content types, hostile field values), as root and anonymously, and none may
// answer 5xx. Every failure is collected and reported at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, ROOT_TOKEN } from '../helpers/build-app.ts';
import { poComponent } from '../helpers/translation.ts';

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Operation {
  method: Method;
  /** OpenAPI path: /api/v4/projects/{id} */
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyProps: string[];
  api: 'platform' | 'translation' | 'git';
}

interface Probe {
  method: Method;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

/** Path values that name nothing, or nothing sensible. */
const BAD_SEGMENTS = [
  '0',
  '-1',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999',
  '1e999',
  'abc',
  '%00',
  '..',
  '%2e%2e',
  '%E0%A4%A',
  '%ff',
  'NaN',
  ' ',
  'a'.repeat(300),
  'a'.repeat(1100),
];
/** Query values: huge, not-a-number, negative, empty, arrays and hashes where scalars belong. */
const BAD_QUERY_VALUES = [
  '1e999',
  '99999999999999999999',
  '-99999999999999999999',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  'NaN',
  '-1',
  '0',
  'abc',
  '',
  '%00',
  '%ff',
  '2026-99-99',
  '9999999-01-01T00:00:00Z',
  'a'.repeat(5000),
];
/** Query shapes: the parameter as an array, a hash, a deep hash. */
const BAD_QUERY_SHAPES = (p: string) => [`${p}[]=`, `${p}[]=1&${p}[]=abc`, `${p}[a]=1`, `${p}[a][b][c][d][e][f]=1`, `${p}=1&${p}=2`];
/** Field values in a JSON body (raw JSON text: 1e999 parses to Infinity). */
const BAD_JSON_VALUES = [
  '1e999',
  '-1e999',
  '99999999999999999999',
  '2147483648',
  '1.5',
  '-1',
  '0',
  '"abc"',
  '""',
  '[]',
  '[1,"a",null]',
  '{}',
  '{"a":{"b":1}}',
  'null',
  'true',
  `"${'x'.repeat(3000)}"`,
  '"\\u0000"',
  '"2026-99-99"',
];
const BOUNDARY = '----hearthfuzz';
/** Whole bodies that are broken or of the wrong kind. */
const BAD_BODIES: Array<{ name: string; headers: Record<string, string>; payload: string | Buffer }> = [
  { name: 'broken json', headers: { 'content-type': 'application/json' }, payload: '{"name": ' },
  { name: 'json garbage', headers: { 'content-type': 'application/json' }, payload: '\u0000\u00ff{]' },
  { name: 'json null', headers: { 'content-type': 'application/json' }, payload: 'null' },
  { name: 'json array', headers: { 'content-type': 'application/json' }, payload: '[1,2]' },
  { name: 'json string', headers: { 'content-type': 'application/json' }, payload: '"x"' },
  { name: 'json number', headers: { 'content-type': 'application/json' }, payload: '1e999' },
  { name: 'json proto', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1},"constructor":{"prototype":{"y":1}}}' },
  { name: 'json charset', headers: { 'content-type': 'application/json; charset=latin1' }, payload: '{}' },
  {
    name: 'broken multipart',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue`,
  },
  { name: 'multipart garbage', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, payload: 'this is not multipart at all' },
  {
    name: 'multipart no boundary',
    headers: { 'content-type': 'multipart/form-data' },
    payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`,
  },
  { name: 'multipart empty boundary', headers: { 'content-type': 'multipart/form-data; boundary=' }, payload: '--\r\n' },
  {
    name: 'multipart bad headers',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: `--${BOUNDARY}\r\nContent-Disposition: nonsense\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`,
  },
  {
    name: 'multipart nested names',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a[b][c]"\r\n\r\n1\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="a[b]"\r\n\r\n2\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.po"\r\nContent-Type: text/plain\r\n\r\nmsgid ""\r\n--${BOUNDARY}--\r\n`,
  },
  { name: 'form nesting', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a[b][c][d][e][f][g]=1&a[]=2&name[]=x&name[y]=z&%ff=%ff' },
  { name: 'xml', headers: { 'content-type': 'text/xml' }, payload: '<a/>' },
  { name: 'text', headers: { 'content-type': 'text/plain' }, payload: 'hello' },
  { name: 'octet-stream', headers: { 'content-type': 'application/octet-stream' }, payload: Buffer.from([0, 255, 1, 2]) },
  { name: 'bad content type', headers: { 'content-type': ';;;==' }, payload: '{}' },
];

/**
 * Fields of the translation API's writes (its routes declare no body schema): hostile values for each.
 * Not `slug`, `code` or `repo`: a rename would leave the later probes nothing to find, a repository
 * URL is fetched.
 */
const TRANSLATION_FIELDS = [
  'name',
  'web',
  'source_language',
  'branch',
  'filemask',
  'file_format',
  'template',
  'vcs',
  'direction',
  'plural',
  'operation',
  'lock',
  'target',
  'state',
];
/** Credentials in every place they are read, with bad values (they are looked up before any route runs). */
const BAD_CREDENTIALS: Array<{ query?: string; headers?: Record<string, string> }> = [
  { query: 'private_token=%00' },
  { query: 'private_token=%ff' },
  { query: 'access_token=%00' },
  { query: 'job_token=%00' },
  { query: 'sudo=%00' },
  { query: 'sudo=99999999999999999999' },
  { query: 'sudo=1e999' },
  { query: 'sudo[]=1' },
  { query: 'private_token[a]=1' },
  { headers: { sudo: '99999999999999999999' } },
  { headers: { sudo: '-1' } },
  { headers: { sudo: 'a'.repeat(5000) } },
  { headers: { authorization: 'Bearer ' + 'a'.repeat(5000) } },
  { headers: { authorization: 'Token' } },
  { headers: { authorization: 'Token a b' } },
  { headers: { authorization: 'Basic %%%' } },
  { headers: { 'private-token': 'x'.repeat(5000) } },
  { headers: { 'job-token': '' } },
  { headers: { cookie: '_service_session=%00; _service_session=x' } },
];

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(item)) {
      const method = m.toUpperCase() as Method;
      if (!['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
      const params: any[] = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        method,
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyProps: Object.keys(schema?.properties ?? {}),
        api: path.startsWith('/api/v4/') || path.startsWith('/oauth/') ? 'platform' : path.startsWith('/api/') ? 'translation' : 'git',
      });
    }
  }
  return ops;
}

/**
 * The time the requests may take, each: about 2.5 ms on a quiet 2-core machine, 10 ms leaves room for a
 * busy one (a CPU hog beside it, other test runs). The budget grows with the number of requests, so new
 * routes never make the test fail for time.
 */
const MS_PER_REQUEST = 10;

test('no request from a client answers 5xx (every operation of the OpenAPI document)', async (t) => {
  const ctx = await buildTestApp(t, { archiveRateLimit: 0 });
  const { app, seed, c } = ctx;
  const started = Date.now();

  // what valid ids name
  const user = await seed.user({ username: 'fuzzuser' });
  const group = await seed.group({ path: 'fuzzgroup', visibility: 'public' });
  const { fixture } = await poComponent(t, ctx);
  const project = await c.db.kysely.selectFrom('projects').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  await c.db.kysely.insertInto('user_custom_attributes').values({ user_id: user.id, key: 'color', value: 'blue', created_at: now, updated_at: now }).execute();
  fixture.wt.tag('v1').push();
  const role = await seed.memberRole(10, []);
  const hookRes = await app.inject({
    method: 'POST',
    url: '/api/v4/hooks',
    headers: { 'private-token': ROOT_TOKEN },
    payload: { url: 'http://127.0.0.1:9/fuzz', enable_ssl_verification: false },
  });
  assert.equal(hookRes.statusCode, 201, hookRes.body);
  const hook = hookRes.json();

  const valid = (op: Operation, name: string): string => {
    const p = op.path;
    switch (name) {
      case 'id':
        if (p.startsWith('/api/v4/users/')) return String(user.id);
        if (p.startsWith('/api/v4/groups/')) return String(group.id);
        if (p.startsWith('/api/v4/projects/')) return String(project.id);
        return '1'; // units, changes
      case 'user_id':
        return String(user.id);
      case 'hook_id':
        return String(hook.id);
      case 'member_role_id':
        return String(role.id);
      case 'key':
        return 'color';
      case 'branch':
        return 'main';
      case 'tag_name':
        return 'v1';
      case 'sha':
        return 'main';
      case 'file_path':
        return 'po%2Fcs.po';
      case 'format':
        return 'zip';
      case 'code':
        return 'cs';
      case 'username':
        return 'root';
      case 'project':
        return 'hello';
      case 'component':
        return 'po';
      case 'language':
        return 'cs';
      case '*':
        return `${fixture.fullPath}.git/info/refs`;
      default:
        return '1';
    }
  };
  const urlOf = (op: Operation, override: Record<string, string> = {}) =>
    op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => override[name] ?? valid(op, name));
  const auths = (op: Operation): Array<Record<string, string>> => [
    op.api === 'translation' ? { authorization: `Token ${ROOT_TOKEN}` } : { 'private-token': ROOT_TOKEN },
    {},
  ];

  // every request is listed first (they depend on nothing but the ids above), then sent one at a time
  const probes: Probe[] = [];
  const send = (p: Probe) => void probes.push(p);
  const failures: string[] = [];
  let sent = 0;
  const request = async (p: Probe) => {
    sent++;
    let res;
    try {
      res = await app.inject({ method: p.method, url: p.url, headers: p.headers, payload: p.payload });
    } catch (err) {
      failures.push(`${p.method} ${p.url} ${JSON.stringify(p.headers ?? {})} → threw ${(err as Error).message}`);
      return;
    }
    if (res.statusCode >= 500) {
      const payload = p.payload === undefined ? '' : ` body=${JSON.stringify(String(p.payload).slice(0, 120))}`;
      failures.push(
        `${p.method} ${p.url.slice(0, 200)} ${JSON.stringify(p.headers ?? {}).slice(0, 160)}${payload} → ${res.statusCode} ${res.body.slice(0, 300)}`,
      );
    }
  };

  const ops = operations(app.swagger());
  assert.ok(ops.length > 100, `the document lists the routes (${ops.length})`);
  const writes = (op: Operation) => op.method !== 'GET' && op.method !== 'HEAD';
  // last: what could revoke the credential the fuzzer uses, or delete what the valid ids name
  const late = (op: Operation) => op.method === 'DELETE' || op.path.includes('/self');
  const ordered = [...ops.filter((o) => !late(o)), ...ops.filter(late)];

  // 1. bad path values, one parameter at a time (the others valid)
  for (const op of ordered) {
    for (const name of op.pathParams) {
      for (const bad of BAD_SEGMENTS) {
        const url = urlOf(op, { [name]: bad });
        for (const auth of auths(op)) {
          send({
            method: op.method,
            url,
            headers: writes(op) ? { ...auth, 'content-type': 'application/json' } : auth,
            payload: writes(op) ? '{}' : undefined,
          });
        }
      }
    }
  }

  // 2. bad query values on reads (the declared parameters, and the pagination ones every list takes)
  for (const op of ops.filter((o) => !writes(o))) {
    const names = [...new Set([...op.queryParams, 'page', 'per_page', ...(op.api === 'translation' ? ['page_size', 'q', 'format'] : [])])];
    for (const name of names) {
      const queries = [...BAD_QUERY_VALUES.map((v) => `${name}=${encodeURIComponent(v).replace(/%25(00|ff)/g, '%$1')}`), ...BAD_QUERY_SHAPES(name)];
      for (const q of queries) {
        for (const auth of auths(op)) send({ method: op.method, url: `${urlOf(op)}?${q}`, headers: auth });
      }
    }
  }

  // 3. broken and mistyped bodies on writes
  for (const op of ordered.filter(writes)) {
    for (const body of BAD_BODIES) {
      for (const auth of auths(op)) send({ method: op.method, url: urlOf(op), headers: { ...auth, ...body.headers }, payload: body.payload });
    }
    // 4. hostile values for each declared field (root only: anonymous stops at authentication)
    for (const prop of op.api === 'translation' ? TRANSLATION_FIELDS : op.bodyProps) {
      for (const v of BAD_JSON_VALUES) {
        send({ method: op.method, url: urlOf(op), headers: { ...auths(op)[0], 'content-type': 'application/json' }, payload: `{"${prop}":${v}}` });
      }
    }
  }

  // 5. credentials with bad values, on a few reads of each API
  for (const url of ['/api/v4/user', '/api/v4/projects', `/api/v4/projects/${project.id}`, '/api/projects/', '/api/units/']) {
    for (const cred of BAD_CREDENTIALS) {
      send({ method: 'GET', url: cred.query ? `${url}?${cred.query}` : url, headers: cred.headers });
      send({ method: 'GET', url: cred.query ? `${url}?${cred.query}` : url, headers: { 'private-token': ROOT_TOKEN, ...cred.headers } });
    }
  }

  await t.test(`${probes.length} requests, in order`, { timeout: probes.length * MS_PER_REQUEST }, async () => {
    for (const p of probes) await request(p);
  });
  t.diagnostic(`${sent} requests over ${ops.length} operations in ${Date.now() - started} ms`);
  assert.equal(failures.length, 0, `${failures.length} of ${sent} requests answered 5xx:\n${failures.join('\n')}`);
});
