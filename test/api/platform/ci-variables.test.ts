// CI/CD variables: /projects/:id/variables, /groups/:id/variables, /admin/ci/variables — whole bodies, who may,
// GitLab's validation bodies with nothing written, values sealed at rest, hidden values, scopes and the 409 of an
// ambiguous key; and what a job of a project gets from the three levels (precedence, protected refs, scopes).
import { after, before, describe, test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, ROOT_TOKEN, type TestApp } from '../../helpers/build-app.ts';
import { VariablesService } from '../../../src/domain/ci/variables/variables.service.ts';
import { Keyring } from '../../../src/lib/secrets.ts';

describe('ci-variables', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const root = { 'private-token': ROOT_TOKEN };
  let ctx: TestApp;
  let s: Awaited<ReturnType<typeof setup>>;
  const cleanups: (() => unknown)[] = [];

  async function setup({ seed }: TestApp) {
    const top = await seed.group({ path: 'top', name: 'Top' });
    const sub = await seed.group({ path: 'sub', name: 'Sub', parent: top });
    const project = await seed.project({ namespace: sub, path: 'app', name: 'App', visibility: 'private' });
    const as: Record<string, Record<string, string>> = {};
    for (const [name, level] of [
      ['developer', 30],
      ['maintainer', 40],
    ] as const) {
      const u = await seed.user({ username: name });
      await seed.member({ project }, u, level);
      as[name] = (await seed.token(u)).headers;
    }
    const gm = await seed.user({ username: 'groupmaintainer' });
    await seed.member({ group: top }, gm, 40);
    as.groupMaintainer = (await seed.token(gm)).headers;
    as.stranger = (await seed.token(await seed.user({ username: 'stranger' }))).headers;
    return { top, sub, project, as };
  }

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    s = await setup(ctx);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  const rows = () => ctx.c.db.kysely.selectFrom('ci_variables').selectAll().orderBy('id').execute();
  const clear = () => ctx.c.db.kysely.deleteFrom('ci_variables').execute();

  test('a project’s variables: create, list, get, update, delete — whole bodies, sealed at rest', async () => {
    await clear();
    const base = `/api/v4/projects/${s.project.id}/variables`;
    const created = await ctx.app.inject({
      method: 'POST',
      url: base,
      headers: s.as.maintainer,
      payload: { key: 'DEPLOY_KEY', value: 's3cr3t-value', masked: true, protected: true, description: 'the deploy key' },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(json(created), {
      variable_type: 'env_var',
      key: 'DEPLOY_KEY',
      value: 's3cr3t-value',
      hidden: false,
      protected: true,
      masked: true,
      raw: false,
      environment_scope: '*',
      description: 'the deploy key',
    });
    // form-encoded booleans as Grape reads them, a file variable, a scope
    const form = await ctx.app.inject({
      method: 'POST',
      url: base,
      headers: { ...s.as.maintainer, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'key=KUBECONFIG&value=apiVersion%3A+v1%0A&variable_type=file&raw=true&environment_scope=production',
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.deepEqual(json(form), {
      variable_type: 'file',
      key: 'KUBECONFIG',
      value: 'apiVersion: v1\n',
      hidden: false,
      protected: false,
      masked: false,
      raw: true,
      environment_scope: 'production',
      description: null,
    });
    const stored = await rows();
    assert.equal(stored.length, 2);
    for (const r of stored) {
      assert.match(r.value, /^k1:[0-9a-f]{12}:/);
      assert.ok(!r.value.includes('s3cr3t') && !r.value.includes('apiVersion'));
    }

    const list = await ctx.app.inject({ method: 'GET', url: `${base}?per_page=1`, headers: s.as.maintainer });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      json(list).map((v: { key: string }) => v.key),
      ['DEPLOY_KEY'],
    );
    assert.equal(list.headers['x-total'], '2');
    assert.equal(list.headers['x-next-page'], '2');
    assert.match(String(list.headers.link), new RegExp(`<${EXTERNAL_URL}${base}\\?id=${s.project.id}&page=2&per_page=1>; rel="next"`));

    const got = await ctx.app.inject({ method: 'GET', url: `${base}/KUBECONFIG`, headers: s.as.maintainer });
    assert.deepEqual(json(got), json(form));
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `${base}/DEPLOY_KEY`,
      headers: s.as.maintainer,
      payload: { value: 'n3w-s3cr3t-value', protected: false, description: null },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(json(put), { ...json(created), value: 'n3w-s3cr3t-value', protected: false, description: null });
    const del = await ctx.app.inject({ method: 'DELETE', url: `${base}/DEPLOY_KEY`, headers: s.as.maintainer });
    assert.equal(del.statusCode, 204);
    assert.deepEqual(
      (await rows()).map((r) => r.key),
      ['KUBECONFIG'],
    );
    const gone = await ctx.app.inject({ method: 'GET', url: `${base}/DEPLOY_KEY`, headers: s.as.maintainer });
    assert.equal(gone.statusCode, 404);
    assert.deepEqual(json(gone), { message: '404 Variable Not Found' });
  });

  test('who may: Maintainers; a Developer gets 403 and no value, a stranger 404, anonymous 401', async () => {
    await clear();
    const base = `/api/v4/projects/${s.project.id}/variables`;
    await ctx.app.inject({ method: 'POST', url: base, headers: s.as.maintainer, payload: { key: 'TOKEN', value: 'value-of-a-secret' } });
    for (const [method, url] of [
      ['GET', base],
      ['GET', `${base}/TOKEN`],
      ['POST', base],
      ['PUT', `${base}/TOKEN`],
      ['DELETE', `${base}/TOKEN`],
    ] as const) {
      const payload = method === 'POST' || method === 'PUT' ? { key: 'TOKEN2', value: 'x' } : undefined;
      const dev = await ctx.app.inject({ method, url, headers: s.as.developer, payload });
      assert.equal(dev.statusCode, 403, `${method} ${url}`);
      assert.deepEqual(json(dev), { message: '403 Forbidden' });
      assert.ok(!dev.body.includes('value-of-a-secret'));
      const stranger = await ctx.app.inject({ method, url, headers: s.as.stranger, payload });
      assert.equal(stranger.statusCode, 404, `${method} ${url} ${stranger.body}`);
      assert.deepEqual(json(stranger), { message: '404 Project Not Found' });
      const anonymous = await ctx.app.inject({ method, url, payload });
      assert.equal(anonymous.statusCode, 401);
    }
    // a group Maintainer administers the group's and its projects' variables; only administrators the instance's
    const groupList = await ctx.app.inject({ method: 'GET', url: `/api/v4/groups/${s.sub.id}/variables`, headers: s.as.groupMaintainer });
    assert.equal(groupList.statusCode, 200);
    const projList = await ctx.app.inject({ method: 'GET', url: base, headers: s.as.groupMaintainer });
    assert.deepEqual(
      json(projList).map((v: { key: string }) => v.key),
      ['TOKEN'],
    );
    const groupDev = await ctx.app.inject({ method: 'GET', url: `/api/v4/groups/${s.sub.id}/variables`, headers: s.as.maintainer });
    assert.equal(groupDev.statusCode, 403); // a project's Maintainer sees its group, but does not administer it
    const inst = await ctx.app.inject({ method: 'GET', url: '/api/v4/admin/ci/variables', headers: s.as.groupMaintainer });
    assert.equal(inst.statusCode, 403);
    assert.deepEqual((await rows()).length, 1);
  });

  test('bad input: GitLab’s bodies, nothing written', async () => {
    await clear();
    const base = `/api/v4/projects/${s.project.id}/variables`;
    const post = (payload: Record<string, unknown>) => ctx.app.inject({ method: 'POST', url: base, headers: s.as.maintainer, payload });
    await post({ key: 'TAKEN', value: 'a' });
    const cases: [Record<string, unknown>, number, unknown][] = [
      [{ value: 'x' }, 400, { error: 'key is missing' }],
      [{ key: 'K' }, 400, { error: 'value is missing' }],
      [{ key: 'bad-key', value: 'x' }, 400, { message: { key: ["can contain only letters, digits and '_'."] } }],
      [{ key: 'K'.repeat(256), value: 'x' }, 400, { message: { key: ['is too long (maximum is 255 characters)'] } }],
      [{ key: 'TAKEN', value: 'b' }, 400, { message: { key: ['(TAKEN) has already been taken'] } }],
      [{ key: 'SHORT', value: 'short', masked: true }, 400, { message: { value: ['is invalid'] } }],
      [{ key: 'SPACES', value: 'has spaces in it', masked: true }, 400, { message: { value: ['is invalid'] } }],
      [{ key: 'LINES', value: 'two\nlines-of-it', masked: true, raw: true }, 400, { message: { value: ['is invalid'] } }],
      [{ key: 'TYPE', value: 'x', variable_type: 'secret' }, 400, { error: 'variable_type does not have a valid value' }],
      [
        { key: 'SCOPE', value: 'x', environment_scope: 'prod;rm' },
        400,
        { message: { environment_scope: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces"] } },
      ],
      [{ key: 'BIG', value: 'x'.repeat(10_001) }, 400, { message: { value: ['is too long (maximum is 10000 characters)'] } }],
    ];
    for (const [payload, status, body] of cases) {
      const r = await post(payload);
      assert.equal(r.statusCode, status, JSON.stringify(payload).slice(0, 80));
      assert.deepEqual(json(r), body);
    }
    // masked with raw: any 8 non-space characters
    const raw = await post({ key: 'RAW_MASKED', value: 'p@$$w0rd!{}', masked: true, raw: true });
    assert.equal(raw.statusCode, 201);
    // an update that makes the value unmaskable leaves the row as it was
    const bad = await ctx.app.inject({ method: 'PUT', url: `${base}/TAKEN`, headers: s.as.maintainer, payload: { masked: true } });
    assert.deepEqual(json(bad), { message: { value: ['is invalid'] } });
    const stored = await rows();
    assert.deepEqual(
      stored.map((r) => [r.key, r.masked]),
      [
        ['TAKEN', 0],
        ['RAW_MASKED', 1],
      ],
    );
  });

  test('one key in several environment scopes: 409 without a filter, each reached with filter[environment_scope]', async () => {
    await clear();
    const base = `/api/v4/projects/${s.project.id}/variables`;
    for (const scope of ['*', 'production']) {
      const r = await ctx.app.inject({
        method: 'POST',
        url: base,
        headers: s.as.maintainer,
        payload: { key: 'URL', value: `url-${scope}`, environment_scope: scope },
      });
      assert.equal(r.statusCode, 201);
    }
    const ambiguous = await ctx.app.inject({ method: 'GET', url: `${base}/URL`, headers: s.as.maintainer });
    assert.equal(ambiguous.statusCode, 409);
    assert.deepEqual(json(ambiguous), { message: "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'" });
    const prod = await ctx.app.inject({ method: 'GET', url: `${base}/URL?filter[environment_scope]=production`, headers: s.as.maintainer });
    assert.equal(json(prod).value, 'url-production');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `${base}/URL`,
      headers: s.as.maintainer,
      payload: { value: 'url-any', filter: { environment_scope: '*' } },
    });
    assert.equal(json(put).value, 'url-any');
    const del = await ctx.app.inject({ method: 'DELETE', url: `${base}/URL?filter[environment_scope]=production`, headers: s.as.maintainer });
    assert.equal(del.statusCode, 204);
    assert.deepEqual(
      (await rows()).map((r) => r.environment_scope),
      ['*'],
    );
  });

  test('hidden group and project variables never show their value; instance variables are for administrators', async () => {
    await clear();
    for (const base of [`/api/v4/groups/${s.top.id}/variables`, `/api/v4/projects/${s.project.id}/variables`]) {
      const created = await ctx.app.inject({
        method: 'POST',
        url: base,
        headers: s.as.groupMaintainer,
        payload: { key: 'key1', value: 'secret_value', masked_and_hidden: true },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(json(created), {
        variable_type: 'env_var',
        key: 'key1',
        value: null,
        hidden: true,
        protected: false,
        masked: true,
        raw: false,
        environment_scope: '*',
        description: null,
      });
      const put = await ctx.app.inject({ method: 'PUT', url: `${base}/key1`, headers: s.as.groupMaintainer, payload: { description: 'new_description' } });
      assert.deepEqual(json(put), { ...json(created), description: 'new_description' });
      const list = await ctx.app.inject({ method: 'GET', url: base, headers: s.as.groupMaintainer });
      assert.ok(!list.body.includes('secret_value'));
    }
    const inst = await ctx.app.inject({
      method: 'POST',
      url: '/api/v4/admin/ci/variables',
      headers: root,
      payload: { key: 'key1', value: 'secret_value', masked_and_hidden: true },
    });
    assert.equal(inst.statusCode, 201);
    assert.deepEqual(json(inst), {
      variable_type: 'env_var',
      key: 'key1',
      value: 'secret_value',
      protected: false,
      masked: false,
      raw: false,
      description: null,
    });
    const instPut = await ctx.app.inject({ method: 'PUT', url: '/api/v4/admin/ci/variables/key1', headers: root, payload: { value: 'new_value1' } });
    assert.equal(json(instPut).value, 'new_value1');
    const instList = await ctx.app.inject({ method: 'GET', url: '/api/v4/admin/ci/variables', headers: root });
    assert.deepEqual(json(instList), [json(instPut)]);
    const instDel = await ctx.app.inject({ method: 'DELETE', url: '/api/v4/admin/ci/variables/key1', headers: root });
    assert.equal(instDel.statusCode, 204);
    assert.equal((await rows()).length, 2);
  });

  test('what a job gets: instance < groups (root first) < project; protected ones on protected refs; scopes', async () => {
    await clear();
    const add = (url: string, payload: Record<string, unknown>) => ctx.app.inject({ method: 'POST', url, headers: root, payload });
    await add('/api/v4/admin/ci/variables', { key: 'LEVEL', value: 'instance' });
    await add('/api/v4/admin/ci/variables', { key: 'ONLY_INSTANCE', value: 'i' });
    await add(`/api/v4/groups/${s.top.id}/variables`, { key: 'LEVEL', value: 'top' });
    await add(`/api/v4/groups/${s.sub.id}/variables`, { key: 'LEVEL', value: 'sub' });
    await add(`/api/v4/projects/${s.project.id}/variables`, { key: 'LEVEL', value: 'project', environment_scope: 'review/*' });
    await add(`/api/v4/projects/${s.project.id}/variables`, { key: 'LEVEL', value: 'project-prod', environment_scope: 'production' });
    await add(`/api/v4/projects/${s.project.id}/variables`, { key: 'SECRET', value: 'protected-only', protected: true, variable_type: 'file' });
    const ns = await ctx.c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', s.project.namespace_id).executeTakeFirstOrThrow();
    const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', s.project.id).executeTakeFirstOrThrow();
    const of = (protectedRef: boolean, environment: string | null) => ctx.c.ci.variables.forJob(project, ns, { protectedRef, environment });
    const last = (vars: { key: string; value: string }[], key: string) => vars.filter((v) => v.key === key).at(-1)?.value;
    const plain = await of(false, null);
    assert.deepEqual(
      plain.map((v) => `${v.key}=${v.value}`),
      ['LEVEL=instance', 'ONLY_INSTANCE=i', 'LEVEL=top', 'LEVEL=sub'],
    );
    assert.equal(last(await of(false, 'review/feature-1'), 'LEVEL'), 'project');
    assert.equal(last(await of(false, 'production'), 'LEVEL'), 'project-prod');
    const onProtected = await of(true, null);
    assert.deepEqual(onProtected.at(-1), { key: 'SECRET', value: 'protected-only', public: false, masked: false, raw: false, file: true });
    // the rows are cached by the variables' version: the first read after a write (here or on another
    // connection) sees it
    await ctx.app.inject({ method: 'PUT', url: `/api/v4/groups/${s.sub.id}/variables/LEVEL`, headers: root, payload: { value: 'sub-2' } });
    await ctx.app.inject({ method: 'DELETE', url: '/api/v4/admin/ci/variables/ONLY_INSTANCE', headers: root });
    assert.deepEqual(
      (await of(false, null)).map((v) => `${v.key}=${v.value}`),
      ['LEVEL=instance', 'LEVEL=top', 'LEVEL=sub-2'],
    );
    await ctx.c.db.kysely.transaction().execute((trx) => trx.updateTable('ci_variables').set({ protected: 0 }).where('key', '=', 'SECRET').execute());
    assert.deepEqual((await of(false, null)).at(-1), { key: 'SECRET', value: 'protected-only', public: false, masked: false, raw: false, file: true });
  });

  test('key rotation: a new key first re-seals every value; the old key can go then', async () => {
    await clear();
    const base = `/api/v4/projects/${s.project.id}/variables`;
    await ctx.app.inject({ method: 'POST', url: base, headers: root, payload: { key: 'ROTATED', value: 'before-rotation' } });
    const deps = (ctx.c.ci.variables as unknown as { deps: ConstructorParameters<typeof VariablesService>[0] }).deps;
    const oldKey = fs.readFileSync(path.join(ctx.dataDir, 'encryption.key'), 'utf8').trim();
    const newKey = 'n'.repeat(40);
    const [before] = await rows();
    assert.ok(before!.value.startsWith(`k1:${Keyring.idOf(oldKey)}:`));
    const both = new VariablesService(deps, new Keyring([newKey, oldKey]));
    assert.equal(await both.reseal(), 1);
    assert.equal(await both.reseal(), 0);
    const [after] = await rows();
    assert.ok(after!.value.startsWith(`k1:${Keyring.idOf(newKey)}:`));
    const onlyNew = new VariablesService(deps, new Keyring([newKey]));
    assert.equal((await onlyNew.get({ kind: 'project', project: s.project }, 'ROTATED')).value, 'before-rotation');
    const onlyOld = new VariablesService(deps, new Keyring([oldKey]));
    assert.throws(() => onlyOld.view(after!), /sealed with key [0-9a-f]{12}, which this process was not given/);
  });
});
