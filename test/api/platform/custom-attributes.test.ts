// Project and group custom attributes: the endpoints users already had, shared code.
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

for (const kind of ['project', 'group'] as const) {
  test(`${kind} custom attributes: set, update, read, list, delete`, async (t) => {
    const { app, c, root, seed } = await buildTestApp(t);
    const group = await seed.group({ path: 'g' });
    const project = await seed.project({ namespace: group, path: 'p' });
    const table = kind === 'project' ? 'project_custom_attributes' : 'group_custom_attributes';
    const ownerId = kind === 'project' ? project.id : group.id;
    const base = kind === 'project' ? '/api/v4/projects/g%2Fp/custom_attributes' : '/api/v4/groups/g/custom_attributes';

    let res = await app.inject({ method: 'PUT', url: `${base}/location`, headers: root, payload: { value: 'Antarctica' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { key: 'location', value: 'Antarctica' });
    res = await app.inject({ method: 'PUT', url: `${base}/location`, headers: root, payload: { value: 'Greenland' } });
    assert.deepEqual(res.json(), { key: 'location', value: 'Greenland' });
    res = await app.inject({ method: 'PUT', url: `${base}/team?value=blue`, headers: root });
    assert.deepEqual(res.json(), { key: 'team', value: 'blue' });
    const rows = await c.db.kysely
      .selectFrom(table)
      .select(['key', 'value'])
      .where(kind === 'project' ? 'project_id' : ('group_id' as never), '=', ownerId as never)
      .orderBy('id')
      .execute();
    assert.deepEqual(rows, [
      { key: 'location', value: 'Greenland' },
      { key: 'team', value: 'blue' },
    ]);
    const byId = kind === 'project' ? `/api/v4/projects/${project.id}/custom_attributes` : `/api/v4/groups/${group.id}/custom_attributes`;
    res = await app.inject({ method: 'GET', url: byId, headers: root });
    assert.deepEqual(res.json(), [
      { key: 'location', value: 'Greenland' },
      { key: 'team', value: 'blue' },
    ]);
    res = await app.inject({ method: 'GET', url: `${base}/team`, headers: root });
    assert.deepEqual(res.json(), { key: 'team', value: 'blue' });
    res = await app.inject({ method: 'GET', url: `${base}/nope`, headers: root });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Not found' });
    res = await app.inject({ method: 'DELETE', url: `${base}/team`, headers: root });
    assert.equal(res.statusCode, 204);
    res = await app.inject({ method: 'DELETE', url: `${base}/team`, headers: root });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Custom attribute Not Found' });
    assert.deepEqual((await app.inject({ method: 'GET', url: base, headers: root })).json(), [{ key: 'location', value: 'Greenland' }]);

    // they go with their owner
    if (kind === 'project') await c.db.kysely.deleteFrom('projects').where('id', '=', project.id).execute();
    else {
      await c.db.kysely.deleteFrom('projects').where('id', '=', project.id).execute();
      await c.db.kysely.deleteFrom('namespaces').where('id', '=', group.id).execute();
    }
    assert.deepEqual(await c.db.kysely.selectFrom(table).selectAll().execute(), []);
  });

  test(`${kind} custom attributes: bad input, unknown owners, administrators only`, async (t) => {
    const { app, c, root, seed } = await buildTestApp(t);
    const member = await seed.user();
    const group = await seed.group({ path: 'g' });
    await seed.project({ namespace: group, path: 'p' });
    await seed.member({ group }, member, 50);
    const tok = await seed.token(member);
    const table = kind === 'project' ? 'project_custom_attributes' : 'group_custom_attributes';
    const base = kind === 'project' ? '/api/v4/projects/g%2Fp/custom_attributes' : '/api/v4/groups/g/custom_attributes';
    const missing = kind === 'project' ? '/api/v4/projects/999999/custom_attributes' : '/api/v4/groups/nope/custom_attributes';

    let res = await app.inject({ method: 'PUT', url: `${base}/k`, headers: root });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'value is missing' });
    res = await app.inject({ method: 'PUT', url: `${base}/k`, headers: root, payload: { value: ' ' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: "Value can't be blank" });
    for (const [method, url] of [
      ['GET', missing],
      ['GET', `${missing}/k`],
      ['DELETE', `${missing}/k`],
      ['PUT', `${missing}/k`],
      ['GET', kind === 'project' ? '/api/v4/projects/99999999999/custom_attributes' : '/api/v4/groups/99999999999/custom_attributes'],
    ] as const) {
      for (const headers of [root, tok.headers]) {
        res = await app.inject({ method, url, headers, payload: method === 'PUT' ? { value: 'v' } : undefined });
        assert.equal(res.statusCode, 404, url);
        assert.deepEqual(res.json(), { message: '404 Not Found' });
      }
    }
    // even an Owner of the project or group is not an administrator
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      res = await app.inject({ method, url: `${base}/k`, headers: tok.headers, payload: method === 'PUT' ? { value: 'v' } : undefined });
      assert.equal(res.statusCode, 403, method);
      assert.deepEqual(res.json(), { message: '403 Forbidden' });
    }
    res = await app.inject({ method: 'GET', url: base });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(await c.db.kysely.selectFrom(table).selectAll().execute(), []);
  });
}
