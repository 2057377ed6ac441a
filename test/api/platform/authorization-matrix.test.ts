// The authorization matrix: every kind of actor × public/internal/private projects and groups × read
// and write endpoints. The table of actors and the table of endpoints generate the cases: adding a row
// adds coverage. Expected answers come from the rules below, written once, independently of the policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';

type Visibility = 'public' | 'internal' | 'private';
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];

interface ActorSpec {
  name: string;
  /** membership level in the project and the group (0 = none) */
  level: number;
  admin?: boolean;
  external?: boolean;
  blocked?: boolean;
  anonymous?: boolean;
  /** custom role: base level is `level`, plus these permissions */
  permissions?: string[];
}

const ACTORS: ActorSpec[] = [
  { name: 'anonymous', level: 0, anonymous: true },
  { name: 'non-member', level: 0 },
  { name: 'external non-member', level: 0, external: true },
  { name: 'external guest', level: 10, external: true },
  { name: 'guest', level: 10 },
  { name: 'reporter', level: 20 },
  { name: 'developer', level: 30 },
  { name: 'maintainer', level: 40 },
  { name: 'owner', level: 50 },
  { name: 'guest + admin_group_member', level: 10, permissions: ['admin_group_member'] },
  { name: 'guest + remove_project', level: 10, permissions: ['remove_project', 'archive_project'] },
  { name: 'admin', level: 0, admin: true },
  { name: 'blocked owner', level: 50, blocked: true },
];

interface Ctx {
  level: number;
  permissions: string[];
  admin: boolean;
  signedIn: boolean;
  external: boolean;
  visibility: Visibility;
}

const visible = (x: Ctx) => x.admin || x.level > 0 || x.visibility === 'public' || (x.visibility === 'internal' && x.signedIn && !x.external);
/** read → 200 when visible else 404; a write → 401 anonymous, 404 invisible, 403 not allowed. */
const read = (x: Ctx) => (visible(x) ? 200 : 404);
const write = (ok: (x: Ctx) => boolean, success: number) => (x: Ctx) => (!x.signedIn ? 401 : !visible(x) ? 404 : x.admin || ok(x) ? success : 403);

interface EndpointSpec {
  name: string;
  target: 'project' | 'group';
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  path: (id: number) => string;
  payload?: Record<string, unknown>;
  expect: (x: Ctx) => number;
  /** the body of a 404 where the project is visible but the thing is not (default: the project's 404) */
  hiddenBody?: string;
}

const ENDPOINTS: EndpointSpec[] = [
  { name: 'read project', target: 'project', method: 'GET', path: (id) => `/api/v4/projects/${id}`, expect: read },
  // lib/api/members.rb authenticates first: anonymous callers get 401 even on public projects.
  {
    name: 'list project members',
    target: 'project',
    method: 'GET',
    path: (id) => `/api/v4/projects/${id}/members`,
    expect: (x) => (!x.signedIn ? 401 : read(x)),
  },
  {
    name: 'update project',
    target: 'project',
    method: 'PUT',
    path: (id) => `/api/v4/projects/${id}`,
    payload: { description: 'changed' },
    expect: write((x) => x.level >= 40, 200),
  },
  { name: 'read group', target: 'group', method: 'GET', path: (id) => `/api/v4/groups/${id}`, expect: read },
  {
    name: 'update group',
    target: 'group',
    method: 'PUT',
    path: (id) => `/api/v4/groups/${id}`,
    payload: { description: 'changed' },
    expect: write((x) => x.level >= 50, 200),
  },
  { name: 'list group members', target: 'group', method: 'GET', path: (id) => `/api/v4/groups/${id}/members`, expect: (x) => (!x.signedIn ? 401 : read(x)) },
  {
    name: 'add a project member',
    target: 'project',
    method: 'POST',
    path: (id) => `/api/v4/projects/${id}/members`,
    payload: { user_id: 1, access_level: 10 },
    // root (id 1) is added once by the first allowed caller; later allowed callers get 409
    expect: write((x) => x.level >= 40, 201),
  },
  {
    name: 'add a group member',
    target: 'group',
    method: 'POST',
    path: (id) => `/api/v4/groups/${id}/members`,
    payload: { user_id: 1, access_level: 10 },
    expect: write((x) => x.level >= 50 || x.permissions.includes('admin_group_member'), 201),
  },
  // issues: #1 is open to whoever reads the project's issues, #2 is confidential (Reporters and up); root wrote both
  { name: 'list project issues', target: 'project', method: 'GET', path: (id) => `/api/v4/projects/${id}/issues`, expect: read },
  { name: 'read an issue', target: 'project', method: 'GET', path: (id) => `/api/v4/projects/${id}/issues/1`, expect: read },
  {
    name: 'read a confidential issue',
    target: 'project',
    method: 'GET',
    path: (id) => `/api/v4/projects/${id}/issues/2`,
    expect: (x) => (!visible(x) ? 404 : x.admin || x.level >= 20 ? 200 : 404),
    hiddenBody: '404 Not found',
  },
  {
    name: 'comment on a confidential issue',
    target: 'project',
    method: 'POST',
    path: (id) => `/api/v4/projects/${id}/issues/2/notes`,
    payload: { body: 'seen' },
    expect: (x) => (!x.signedIn ? 401 : !visible(x) ? 404 : x.admin || x.level >= 20 ? 201 : 404),
    hiddenBody: '404 Not found',
  },
  {
    name: 'open an issue',
    target: 'project',
    method: 'POST',
    path: (id) => `/api/v4/projects/${id}/issues`,
    payload: { title: 'From the matrix' },
    expect: write(() => true, 201),
  },
  {
    name: 'edit an issue',
    target: 'project',
    method: 'PUT',
    path: (id) => `/api/v4/projects/${id}/issues/1`,
    payload: { title: 'Edited' },
    expect: write((x) => x.level >= 20, 200),
  },
  {
    name: 'list boards',
    target: 'project',
    method: 'GET',
    path: (id) => `/api/v4/projects/${id}/boards`,
    expect: read,
  },
  { name: 'delete an issue', target: 'project', method: 'DELETE', path: (id) => `/api/v4/projects/${id}/issues/1`, expect: write((x) => x.level >= 50, 204) },
  {
    name: 'archive project',
    target: 'project',
    method: 'POST',
    path: (id) => `/api/v4/projects/${id}/archive`,
    expect: write((x) => x.level >= 50 || x.permissions.includes('archive_project'), 201),
  },
  // destructive ones last
  {
    name: 'delete project',
    target: 'project',
    method: 'DELETE',
    path: (id) => `/api/v4/projects/${id}`,
    expect: write((x) => x.level >= 50 || x.permissions.includes('remove_project'), 202),
  },
  { name: 'delete group', target: 'group', method: 'DELETE', path: (id) => `/api/v4/groups/${id}`, expect: write((x) => x.level >= 50, 202) },
];

for (const visibility of VISIBILITIES) {
  test(`authorization matrix: ${visibility} project and group`, async (t) => {
    const { app, c, seed } = await buildTestApp(t);
    // Each actor gets its own group and project of this visibility, so memberships never overlap.
    const cases: { actor: ActorSpec; headers: Record<string, string>; group: NamespaceRow; project: ProjectRow }[] = [];
    for (const actor of ACTORS) {
      const group = await seed.group({ visibility });
      const project = await seed.project({ namespace: group, visibility });
      for (const [iid, confidential] of [
        [1, 0],
        [2, 1],
      ] as const) {
        const at = new Date().toISOString();
        await c.db.kysely
          .insertInto('issues')
          .values({
            project_id: project.id,
            iid,
            title: `Issue ${iid}`,
            description: null,
            state: 'opened',
            author_id: 1,
            milestone_id: null,
            confidential,
            discussion_locked: null,
            due_date: null,
            weight: null,
            closed_by_id: null,
            closed_at: null,
            created_at: at,
            updated_at: at,
          })
          .execute();
      }
      await c.db.kysely.insertInto('internal_ids').values({ usage: 'issues', scope_type: 'Project', scope_id: project.id, last_value: 2 }).execute();
      let headers: Record<string, string> = {};
      if (!actor.anonymous) {
        const user: UserRow = await seed.user({ is_admin: actor.admin, external: actor.external });
        if (actor.level) {
          const role = actor.permissions ? await seed.memberRole(actor.level, actor.permissions) : undefined;
          await seed.member({ group }, user, actor.level, role ? { member_role: role } : {});
        }
        headers = (await seed.token(user, { scopes: ['api'] })).headers;
        if (actor.blocked) await c.db.kysely.updateTable('users').set({ state: 'blocked' }).where('id', '=', user.id).execute();
      }
      cases.push({ actor, headers, group, project });
    }
    const failures: string[] = [];
    for (const { actor, headers, group, project } of cases) {
      for (const ep of ENDPOINTS) {
        const x: Ctx = {
          level: actor.level,
          permissions: actor.permissions ?? [],
          admin: !!actor.admin,
          signedIn: !actor.anonymous,
          external: !!actor.external,
          visibility,
        };
        const expected = actor.blocked ? 403 : ep.expect(x);
        const id = ep.target === 'project' ? project.id : group.id;
        const res = await app.inject({ method: ep.method, url: ep.path(id), headers, ...(ep.payload ? { payload: ep.payload } : {}) });
        if (res.statusCode !== expected) failures.push(`${actor.name} × ${ep.name}: expected ${expected}, got ${res.statusCode} ${res.body.slice(0, 120)}`);
        else if (expected === 404) {
          const body = res.json();
          const want = ep.path(id).includes('/groups/') ? '404 Group Not Found' : ep.hiddenBody && visible(x) ? ep.hiddenBody : '404 Project Not Found';
          if (body.message !== want) failures.push(`${actor.name} × ${ep.name}: 404 body ${res.body}`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });
}
