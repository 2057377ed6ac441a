// The rulebook of visibility and feature access (src/domain/access/visibility.ts) on a real database:
// who sees a project of each visibility, what the administrator's restricted levels refuse, which
// features are open to whom, and the two list conditions (Policy.visibleProjects, ProjectsQuery.visible)
// agreeing row for row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { ANONYMOUS, userActor, type Actor } from '../../../src/domain/access/actor.ts';
import { featureOpen, publicProfiles, restrictedFor } from '../../../src/domain/access/visibility.ts';
import type { Feature } from '../../../src/domain/core/project-settings.ts';
import { DomainError } from '../../../src/lib/errors.ts';
import { buildTestApp } from '../../helpers/build-app.ts';

const VISIBILITIES = ['private', 'internal', 'public'] as const;
type Who = 'anonymous' | 'external' | 'regular' | 'guest' | 'reporter' | 'admin';
const WHO: Who[] = ['anonymous', 'external', 'regular', 'guest', 'reporter', 'admin'];

/** Everyone of the table; `guest` and `reporter` are members of every project of `group`. */
async function cast(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t);
  const { seed } = app;
  const group = await seed.group({ visibility: 'public' });
  const users: Record<Exclude<Who, 'anonymous'>, UserRow> = {
    external: await seed.user({ external: true }),
    regular: await seed.user(),
    guest: await seed.user(),
    reporter: await seed.user(),
    admin: await seed.user({ is_admin: true }),
  };
  await seed.member({ group }, users.guest, 10);
  await seed.member({ group }, users.reporter, 20);
  const actors = Object.fromEntries(WHO.map((w) => [w, w === 'anonymous' ? ANONYMOUS : userActor(users[w])])) as Record<Who, Actor>;
  return { ...app, group, users, actors };
}

test('visibility: who sees a project of each level (read_project), whatever levels are restricted', async (t) => {
  const { c, seed, group, actors } = await cast(t);
  const projects = Object.fromEntries(await Promise.all(VISIBILITIES.map(async (v) => [v, await seed.project({ namespace: group, visibility: v })])));
  const expected: Record<Who, Record<(typeof VISIBILITIES)[number], boolean>> = {
    anonymous: { private: false, internal: false, public: true },
    external: { private: false, internal: false, public: true },
    regular: { private: false, internal: true, public: true },
    guest: { private: true, internal: true, public: true },
    reporter: { private: true, internal: true, public: true },
    admin: { private: true, internal: true, public: true },
  };
  // restricted levels bind what may be set, never who sees what exists
  for (const restricted of [[], ['internal'], ['public'], ['internal', 'public']]) {
    await c.settings.save({ restricted_visibility_levels: restricted });
    for (const who of WHO) {
      for (const v of VISIBILITIES) {
        const access = await c.policy.project(actors[who], projects[v], group);
        assert.equal(access.abilities.has('read_project'), expected[who][v], `${who} reads a ${v} project (restricted: ${restricted})`);
      }
    }
  }
});

test('visibility: the restricted levels refuse what non-administrators set; the public one hides profiles from anonymous visitors', async (t) => {
  const { c, actors } = await cast(t);
  const settingsOf = (levels: string[]) => ({ restricted_visibility_levels: levels as ('private' | 'internal' | 'public')[] });
  const table: { levels: string[]; who: Who; refused: string[]; profiles: boolean }[] = [
    { levels: [], who: 'anonymous', refused: [], profiles: true },
    { levels: [], who: 'regular', refused: [], profiles: true },
    { levels: ['internal'], who: 'regular', refused: ['internal'], profiles: true },
    { levels: ['internal'], who: 'external', refused: ['internal'], profiles: true },
    { levels: ['internal'], who: 'admin', refused: [], profiles: true },
    { levels: ['public'], who: 'anonymous', refused: ['public'], profiles: false },
    { levels: ['public'], who: 'external', refused: ['public'], profiles: true },
    { levels: ['public'], who: 'reporter', refused: ['public'], profiles: true },
    { levels: ['public'], who: 'admin', refused: [], profiles: true },
    { levels: ['private', 'internal', 'public'], who: 'guest', refused: ['private', 'internal', 'public'], profiles: true },
    { levels: ['private', 'internal', 'public'], who: 'admin', refused: [], profiles: true },
  ];
  for (const row of table) {
    const s = settingsOf(row.levels);
    for (const v of VISIBILITIES) assert.equal(restrictedFor(s, actors[row.who], v), row.refused.includes(v), `${row.who}, ${v}, restricted ${row.levels}`);
    assert.equal(publicProfiles(s, actors[row.who]), row.profiles, `${row.who} sees profiles, restricted ${row.levels}`);
  }

  // the service refuses a restricted level to a user and takes it from an administrator
  await c.settings.save({ restricted_visibility_levels: ['internal'] });
  for (const who of ['regular', 'admin'] as const) {
    for (const v of VISIBILITIES) {
      const create = c.projects.create(actors[who], { name: `${who} ${v}`, path: `${who}-${v}`, visibility: v });
      if (who === 'regular' && v === 'internal') {
        await assert.rejects(create, (e: unknown) => e instanceof DomainError && e.status === 400, `${who} creates ${v}`);
      } else {
        assert.equal((await create).visibility, v, `${who} creates ${v}`);
      }
    }
  }
});

test('visibility: a feature is open by its access level, the project visibility and the membership level', async (t) => {
  const { c, seed, group, actors } = await cast(t);
  // [feature, its access level, project visibility, open to: anonymous, external, regular, guest (10), reporter (20), admin]
  const table: [Feature, 'disabled' | 'private' | 'enabled', (typeof VISIBILITIES)[number], boolean[]][] = [
    ['merge_requests', 'enabled', 'public', [true, true, true, true, true, true]],
    ['merge_requests', 'private', 'public', [false, false, false, false, true, true]],
    ['merge_requests', 'disabled', 'public', [false, false, false, false, false, false]],
    ['merge_requests', 'private', 'private', [false, false, false, false, true, true]],
    ['repository', 'private', 'private', [false, false, false, false, true, true]],
    ['repository', 'private', 'internal', [false, false, false, true, true, true]],
    ['repository', 'private', 'public', [false, false, false, true, true, true]],
    ['repository', 'disabled', 'internal', [false, false, false, false, false, false]],
    ['builds', 'private', 'private', [false, false, false, true, true, true]],
    ['builds', 'private', 'public', [false, false, false, true, true, true]],
    ['builds', 'enabled', 'internal', [true, true, true, true, true, true]],
    ['issues', 'private', 'internal', [false, false, false, true, true, true]],
    ['container_registry', 'private', 'public', [false, false, false, false, true, true]],
    ['wiki', 'disabled', 'private', [false, false, false, false, false, false]],
  ];
  for (const [feature, level, visibility, open] of table) {
    const project = await withFeature(c, await seed.project({ namespace: group, visibility }), feature, level);
    for (const [i, who] of WHO.entries()) {
      const access = await c.policy.project(actors[who], project, group);
      const what = `${feature} ${level} in a ${visibility} project, for ${who}`;
      assert.equal(featureOpen(actors[who], project, access, feature), open[i], what);
      // the views the API's entity maps say the same
      const [view] = await c.projectsQuery.views(actors[who], [project]);
      assert.equal(view.openFeatures.has(feature), open[i], `${what} (view)`);
    }
  }
});

test('visibility: Policy.visibleProjects and ProjectsQuery.visible list the same projects for every actor', async (t) => {
  const { c, seed, group, users, actors } = await cast(t);
  const privateTop = await seed.group({ visibility: 'private' });
  const privateSub = await seed.group({ visibility: 'private', parent: privateTop });
  const owner = await seed.user();
  const projects: ProjectRow[] = [];
  for (const ns of [group, privateTop, privateSub, await seed.namespaceOf(owner)] as NamespaceRow[])
    for (const v of VISIBILITIES) projects.push(await seed.project({ namespace: ns, visibility: v }));
  // memberships: inherited from a top group, direct on one project, expired, and an external member
  const inherited = await seed.user();
  await seed.member({ group: privateTop }, inherited, 30);
  const direct = await seed.user();
  await seed.member({ project: projects[7] }, direct, 10);
  const expired = await seed.user();
  await seed.member({ group: privateTop }, expired, 40, { expires_at: '2020-01-01' });
  await seed.member({ project: projects[4] }, users.external, 20);

  const everyone: [string, Actor][] = [
    ...WHO.map((w) => [w, actors[w]] as [string, Actor]),
    ...Object.entries({ owner, inherited, direct, expired }).map(([w, u]) => [w, userActor(u)] as [string, Actor]),
  ];
  const ids = async (where: Awaited<ReturnType<typeof c.projectsQuery.visible>>) =>
    (await c.db.kysely.selectFrom('projects').select('id').where(where).orderBy('id').execute()).map((r) => r.id);
  for (const [who, actor] of everyone) {
    const byPolicy = await ids(c.policy.visibleProjects(actor));
    assert.deepEqual(await ids(await c.projectsQuery.visible(actor)), byPolicy, who);
    // and both agree with the single-project rule
    const readable: number[] = [];
    for (const p of projects) {
      const ns = (await c.resolve.namespaceById(p.namespace_id))!;
      if ((await c.policy.project(actor, p, ns)).abilities.has('read_project')) readable.push(p.id);
    }
    assert.deepEqual(byPolicy, readable, `${who}: lists and the single check`);
  }
});

async function withFeature(c: Awaited<ReturnType<typeof buildTestApp>>['c'], project: ProjectRow, feature: Feature, level: string): Promise<ProjectRow> {
  return c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ [`${feature}_access_level`]: level }) })
    .where('id', '=', project.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
