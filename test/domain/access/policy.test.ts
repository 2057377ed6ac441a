import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { userActor, ANONYMOUS } from '../../../src/domain/access/actor.ts';

test('policy: inheritance, custom roles, visibility, external users, expiry', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const top = await seed.group({ visibility: 'private' });
  const sub = await seed.group({ parent: top, visibility: 'private' });
  const project = await seed.project({ namespace: sub, visibility: 'private' });
  const dev = await seed.user();
  await seed.member({ group: top }, dev, 30);
  const guestReader = await seed.user();
  const role = await seed.memberRole(10, ['read_code']);
  await seed.member({ project }, guestReader, 10, { member_role: role });
  const stranger = await seed.user();
  const expired = await seed.user();
  await seed.member({ project }, expired, 40, { expires_at: '2020-01-01' });
  const ns = (await c.resolve.namespaceById(sub.id))!;

  const dAccess = await c.policy.project(userActor(dev), project, ns);
  assert.equal(dAccess.level, 30);
  assert.ok(dAccess.abilities.has('push_code'));
  assert.ok(!dAccess.abilities.has('admin_project'));
  const g = await c.policy.project(userActor(guestReader), project, ns);
  assert.ok(g.abilities.has('read_code'));
  assert.ok(!g.abilities.has('push_code'));
  assert.equal((await c.policy.project(userActor(stranger), project, ns)).abilities.size, 0);
  assert.equal((await c.policy.project(userActor(expired), project, ns)).abilities.size, 0);
  assert.equal((await c.policy.project(ANONYMOUS, project, ns)).abilities.size, 0);
  // the subgroup member can see the private parent
  assert.ok((await c.policy.group(userActor(dev), sub)).abilities.has('read_group'));
  assert.ok((await c.policy.group(userActor(guestReader), top)).abilities.has('read_group'));
  assert.ok(!(await c.policy.group(userActor(stranger), top)).abilities.has('read_group'));

  const internal = await seed.project({ namespace: sub, visibility: 'internal' });
  const ext = await seed.user({ external: true });
  assert.ok((await c.policy.project(userActor(stranger), internal, ns)).abilities.has('read_code'));
  assert.equal((await c.policy.project(userActor(ext), internal, ns)).abilities.size, 0);

  // list filters agree with the single checks
  const visible = async (u: any) =>
    (
      await c.db.kysely
        .selectFrom('projects')
        .select('id')
        .where(c.policy.visibleProjects(userActor(u)))
        .orderBy('id')
        .execute()
    ).map((r) => r.id);
  assert.deepEqual(await visible(dev), [project.id, internal.id]);
  assert.deepEqual(await visible(guestReader), [project.id, internal.id]);
  assert.deepEqual(await visible(ext), []);
  const admin = await seed.user({ is_admin: true });
  const all = (await c.db.kysely.selectFrom('projects').select('id').orderBy('id').execute()).map((r) => r.id);
  assert.deepEqual(await visible(admin), all);
  const groups = async (u: any) =>
    (
      await c.db.kysely
        .selectFrom('namespaces')
        .select('id')
        .where(await c.policy.visibleGroups(userActor(u)))
        .orderBy('id')
        .execute()
    ).map((r) => r.id);
  assert.deepEqual(await groups(guestReader), [top.id, sub.id]);
  assert.deepEqual(await groups(stranger), []);
});
