// The search API: every scope at the instance, a group and a project (whole bodies, compared with the lists
// that show the same entities), who sees what (private projects, a disabled merge requests feature, internal
// notes, comments on confidential issues, code), GitLab's refusals (missing or unknown parameters, scopes of another level, projects and groups
// the caller cannot see), the search pagination headers, and code and commit search in a real repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { insertMergeRequest } from '../../helpers/merge-requests-notes.ts';
import { workTree } from '../../helpers/git.ts';
import { nowIso } from '../../../src/lib/time.ts';
import type { MergeRequestRow, NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';

const get = (ctx: TestApp, url: string, headers: Record<string, string> = ctx.root) => ctx.app.inject({ method: 'GET', url, headers });
const json = (r: { body: string }) => JSON.parse(r.body);

interface World {
  ctx: TestApp;
  group: NamespaceRow;
  open: ProjectRow;
  secret: ProjectRow;
  owner: UserRow;
  outsider: UserRow;
  ownerH: Record<string, string>;
  outsiderH: Record<string, string>;
  openMr: MergeRequestRow;
  secretMr: MergeRequestRow;
}

/** A public group with a public project and a private one, each with a merge request about "flux capacitor". */
async function world(t: Parameters<typeof buildTestApp>[0]): Promise<World> {
  const ctx = await buildTestApp(t);
  const owner = await ctx.seed.user({ username: 'doc', name: 'Emmett Brown' });
  const outsider = await ctx.seed.user({ username: 'biff', name: 'Biff Tannen' });
  const group = await ctx.seed.group({ path: 'hill-valley', visibility: 'public' });
  const open = await ctx.seed.project({ path: 'delorean', name: 'DeLorean', namespace: group, visibility: 'public' });
  const secret = await ctx.seed.project({ path: 'time-circuits', name: 'Time circuits', namespace: group, visibility: 'private' });
  await ctx.seed.member({ group }, owner, 50);
  const openMr = await insertMergeRequest(ctx.c, open, owner, { iid: 1, title: 'Fit the flux capacitor' });
  const secretMr = await insertMergeRequest(ctx.c, secret, owner, { iid: 1, title: 'Tune the flux capacitor' });
  return {
    ctx,
    group,
    open,
    secret,
    owner,
    outsider,
    ownerH: (await ctx.seed.token(owner)).headers,
    outsiderH: (await ctx.seed.token(outsider)).headers,
    openMr,
    secretMr,
  };
}

test('refusals: anonymous callers, missing and unknown parameters, scopes of another level, invisible projects and groups', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const cases: [string, Record<string, string> | null, number, unknown][] = [
    ['/api/v4/search?scope=projects&search=flux', null, 401, { message: '401 Unauthorized' }],
    ['/api/v4/projects/1/search?scope=notes', null, 401, { message: '401 Unauthorized' }],
    ['/api/v4/search?scope=projects', w.ownerH, 400, { error: 'search is missing' }],
    ['/api/v4/search?search=flux', w.ownerH, 400, { error: 'scope is missing' }],
    ['/api/v4/search', w.ownerH, 400, { error: 'search is missing, scope is missing' }],
    ['/api/v4/search?scope=everything&search=flux', w.ownerH, 400, { error: 'scope does not have a valid value' }],
    // basic search: code, commits and notes are a project's; snippets the instance's
    ['/api/v4/search?scope=blobs&search=flux', w.ownerH, 400, { error: 'scope does not have a valid value' }],
    ['/api/v4/search?scope=notes&search=flux', w.ownerH, 400, { error: 'scope does not have a valid value' }],
    [`/api/v4/groups/${w.group.id}/search?scope=commits&search=flux`, w.ownerH, 400, { error: 'scope does not have a valid value' }],
    [`/api/v4/groups/${w.group.id}/search?scope=snippet_titles&search=flux`, w.ownerH, 400, { error: 'scope does not have a valid value' }],
    [`/api/v4/projects/${w.open.id}/search?scope=projects&search=flux`, w.ownerH, 400, { error: 'scope does not have a valid value' }],
    [`/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux&state=locked`, w.ownerH, 400, { error: 'state does not have a valid value' }],
    [
      `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux&search_type=regex`,
      w.ownerH,
      400,
      { error: 'search_type does not have a valid value' },
    ],
    [
      `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux&search_type=advanced`,
      w.ownerH,
      400,
      { message: '400 Bad request - Elasticsearch is not available' },
    ],
    [
      `/api/v4/search?scope=projects&search=flux&search_type=zoekt`,
      w.ownerH,
      400,
      { message: '400 Bad request - Zoekt is not available, Zoekt can only be used for blobs' },
    ],
    [`/api/v4/projects/${w.open.id}/search?scope=notes&search=flux&per_page=0`, w.ownerH, 400, { error: 'per_page has a value not allowed' }],
    // a project or group the caller cannot see does not exist for them
    [`/api/v4/projects/${w.secret.id}/search?scope=merge_requests&search=flux`, w.outsiderH, 404, { message: '404 Project Not Found' }],
    [`/api/v4/projects/hill-valley%2Ftime-circuits/search?scope=blobs&search=flux`, w.outsiderH, 404, { message: '404 Project Not Found' }],
    ['/api/v4/projects/999999/search?scope=notes&search=flux', w.ownerH, 404, { message: '404 Project Not Found' }],
    ['/api/v4/groups/no-such-group/search?scope=projects&search=flux', w.ownerH, 404, { message: '404 Group Not Found' }],
  ];
  for (const [url, headers, status, body] of cases) {
    const r = await ctx.app.inject({ method: 'GET', url, headers: headers ?? {} });
    assert.equal(r.statusCode, status, url);
    assert.deepEqual(json(r), body, url);
  }
  const privateGroup = await ctx.seed.group({ path: 'secret-lab', visibility: 'private' });
  const r = await get(ctx, `/api/v4/groups/${privateGroup.id}/search?scope=projects&search=flux`, w.outsiderH);
  assert.equal(r.statusCode, 404);
  assert.deepEqual(json(r), { message: '404 Group Not Found' });
});

test('projects: the visible ones whose path, name or description holds the term, as BasicProjectDetails, newest first', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const archived = await ctx.seed.project({ path: 'delorean-archived', namespace: w.group, visibility: 'public', archived: true });
  // what the projects list shows for simple=true is the same entity
  const basic = async (p: ProjectRow, h: Record<string, string>) =>
    (json(await get(ctx, `/api/v4/projects?simple=true&search=${encodeURIComponent(p.path)}`, h)) as { id: number }[]).find((e) => e.id === p.id);

  const asOwner = await get(ctx, '/api/v4/search?scope=projects&search=hill-valley', w.ownerH);
  assert.equal(asOwner.statusCode, 200);
  assert.deepEqual(json(asOwner), [await basic(w.secret, w.ownerH), await basic(w.open, w.ownerH)]);
  assert.equal(asOwner.headers['x-search-type'], 'basic');
  assert.equal(asOwner.headers['content-transfer-encoding'], 'binary');

  // the private project is not there for someone who is not a member
  const asOutsider = await get(ctx, '/api/v4/search?scope=projects&search=hill-valley', w.outsiderH);
  assert.deepEqual(
    json(asOutsider).map((p: { id: number }) => p.id),
    [w.open.id],
  );
  // archived projects only when asked for
  const withArchived = await get(ctx, '/api/v4/search?scope=projects&search=delorean&include_archived=true', w.ownerH);
  assert.deepEqual(
    json(withArchived).map((p: { id: number }) => p.id),
    [archived.id, w.open.id],
  );
  // a group's: its projects and its subgroups'
  const sub = await ctx.seed.group({ path: 'twin-pines', visibility: 'public', parent: w.group });
  const inSub = await ctx.seed.project({ path: 'delorean-mk2', namespace: sub, visibility: 'public' });
  await ctx.seed.project({ path: 'delorean-elsewhere', visibility: 'public' });
  const r = await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=projects&search=delorean`, w.ownerH);
  assert.deepEqual(
    json(r).map((p: { id: number }) => p.id),
    [inSub.id, w.open.id],
  );
  assert.equal(r.headers['content-transfer-encoding'], undefined);
});

test('merge requests: the readable ones, MergeRequestBasic, state and #iid, no total in the headers', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const merged = await insertMergeRequest(ctx.c, w.open, w.owner, { iid: 2, title: 'Flux capacitor fluxing', state: 'merged' });
  const list = async (url: string, h: Record<string, string>) => json(await get(ctx, url, h));

  // the instance: as the global list shows them
  const all = await get(ctx, '/api/v4/search?scope=merge_requests&search=flux', w.ownerH);
  assert.equal(all.statusCode, 200);
  const globalList = await list('/api/v4/merge_requests?scope=all&search=flux', w.ownerH);
  assert.deepEqual(
    json(all),
    [w.openMr, w.secretMr, merged]
      .sort((a, b) => (a.created_at === b.created_at ? b.id - a.id : a.created_at < b.created_at ? 1 : -1))
      .map((m) => globalList.find((e: { id: number }) => e.id === m.id)),
  );
  assert.equal(all.headers['x-total'], undefined);
  assert.equal(all.headers['x-total-pages'], undefined);
  assert.equal(all.headers['x-page'], '1');
  assert.equal(all.headers['x-per-page'], '20');
  assert.equal(all.headers['x-next-page'], '');
  assert.equal(all.headers.link, `<${EXTERNAL_URL}/api/v4/search?page=1&per_page=20&scope=merge_requests&search=flux>; rel="first"`);

  // the private project's merge request is not there for a non-member
  const outsider = await get(ctx, '/api/v4/search?scope=merge_requests&search=flux', w.outsiderH);
  assert.deepEqual(
    json(outsider)
      .map((m: { id: number }) => m.id)
      .sort(),
    [w.openMr.id, merged.id].sort(),
  );

  // a project's, with its state filter and `#iid`, as its list shows them
  const projectList = await list(`/api/v4/projects/${w.open.id}/merge_requests?state=all`, w.ownerH);
  const byId = (id: number) => projectList.find((e: { id: number }) => e.id === id);
  assert.deepEqual(json(await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux&state=merged`, w.ownerH)), [byId(merged.id)]);
  assert.deepEqual(json(await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=%231`, w.ownerH)), [byId(w.openMr.id)]);
  // the oldest first when asked
  const asc = await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux&order_by=created_at&sort=asc`, w.ownerH);
  assert.deepEqual(
    json(asc).map((m: { id: number }) => m.id),
    [w.openMr.id, merged.id],
  );

  // a group's: as the group's list shows them
  const groupList = await list(`/api/v4/groups/${w.group.id}/merge_requests?state=opened&search=flux`, w.ownerH);
  const groupSearch = json(await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=merge_requests&search=flux&state=opened`, w.ownerH));
  assert.deepEqual(groupSearch, groupList);
  assert.equal(groupSearch.length, 2);

  // a disabled merge requests feature: nothing, even for the owner
  const off = await ctx.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${w.open.id}`,
    headers: ctx.root,
    payload: { merge_requests_access_level: 'disabled' },
  });
  assert.equal(off.statusCode, 200);
  assert.deepEqual(json(await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux`, w.ownerH)), []);
  assert.deepEqual(json(await get(ctx, '/api/v4/search?scope=merge_requests&search=flux', w.outsiderH)), []);
});

test('milestones: of the projects whose issues or merge requests the caller may read, the latest updated first', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const make = async (p: ProjectRow, title: string) => {
    const r = await ctx.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${p.id}/milestones`,
      headers: ctx.root,
      payload: { title, description: 'Reach 88 mph' },
    });
    assert.equal(r.statusCode, 201);
    return json(r);
  };
  const openM = await make(w.open, 'Version 1.21');
  const secretM = await make(w.secret, 'Version 1.21 (secret)');
  const other = await make(w.open, 'Hoverboard');
  const r = await get(ctx, '/api/v4/search?scope=milestones&search=88%20mph', w.ownerH);
  assert.equal(r.statusCode, 200);
  assert.deepEqual(json(r), [other, secretM, openM]);
  assert.equal(r.headers['x-total'], undefined);
  assert.deepEqual(json(await get(ctx, '/api/v4/search?scope=milestones&search=version', w.outsiderH)), [openM]);
  assert.deepEqual(json(await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=milestones&search=VERSION`, w.ownerH)), [secretM, openM]);
  assert.deepEqual(json(await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=milestones&search=hover`, w.outsiderH)), [other]);
});

test('users: the users list at the instance, members at a group and a project; total only for a project', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const marty = await ctx.seed.user({ username: 'marty', name: 'Marty McFly' });
  await ctx.seed.member({ project: w.open }, marty, 30);
  const basic = (u: UserRow) => ({
    id: u.id,
    username: u.username,
    name: u.name,
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${EXTERNAL_URL}/${u.username}`,
  });
  const all = await get(ctx, '/api/v4/search?scope=users&search=marty', w.outsiderH);
  assert.deepEqual(json(all), [basic(marty)]);
  assert.equal(all.headers['x-total'], undefined);
  // the group's members: not Marty (a member of one of its projects only)
  assert.deepEqual(json(await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=users&search=brown`, w.ownerH)), [basic(w.owner)]);
  assert.deepEqual(json(await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=users&search=marty`, w.ownerH)), []);
  // the project's: direct members and those of its group
  const p = await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=users&search=m`, w.ownerH);
  assert.deepEqual(json(p), []); // one character finds nothing (GitLab's abuse detection)
  // two characters match a whole name or username only, as the users list does
  assert.deepEqual(json(await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=users&search=mc`, w.ownerH)), []);
  const both = await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=users&search=mcfly`, w.ownerH);
  assert.deepEqual(json(both), [basic(marty)]);
  assert.equal(both.headers['x-total'], '1');
  assert.equal(both.headers['x-total-pages'], '1');
  const em = await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=users&search=emmett`, w.ownerH);
  assert.deepEqual(json(em), [basic(w.owner)]);
});

test("notes: comments on the project's merge requests and commits; internal ones for Reporters and up; none without access", async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const reporter = await ctx.seed.user({ username: 'george' });
  const guest = await ctx.seed.user({ username: 'lorraine' });
  await ctx.seed.member({ project: w.open }, reporter, 20);
  await ctx.seed.member({ project: w.secret }, guest, 10);
  let n = 0;
  const note = async (mr: MergeRequestRow, body: string, attrs: { internal?: number; system?: number; at: string }) =>
    ctx.c.db.kysely
      .insertInto('notes')
      .values({
        project_id: mr.project_id,
        noteable_type: 'MergeRequest',
        noteable_id: mr.id,
        discussion_id: String(++n).padStart(40, '0'),
        type: null,
        author_id: w.owner.id,
        body,
        system: attrs.system ?? 0,
        internal: attrs.internal ?? 0,
        position: null,
        resolved_at: null,
        resolved_by_id: null,
        created_at: attrs.at,
        updated_at: attrs.at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  const pub = await note(w.openMr, 'The Flux capacitor needs 1.21 gigawatts', { at: '2026-01-01T10:00:00.000Z' });
  const internal = await note(w.openMr, 'Internal: flux capacitor is plutonium-powered', { internal: 1, at: '2026-01-02T10:00:00.000Z' });
  await note(w.openMr, 'changed the flux capacitor title', { system: 1, at: '2026-01-03T10:00:00.000Z' });
  await note(w.secretMr, 'A secret flux capacitor', { at: '2026-01-03T10:00:00.000Z' });
  const at = nowIso();
  const commitNote = await ctx.c.db.kysely
    .insertInto('commit_notes')
    .values({
      project_id: w.open.id,
      commit_id: 'b'.repeat(40),
      author_id: w.owner.id,
      note: 'Flux capacitor wiring here',
      path: null,
      line: null,
      line_type: null,
      line_code: null,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

  const one = async (id: number) => json(await get(ctx, `/api/v4/projects/${w.open.id}/merge_requests/1/notes/${id}`));
  const author = { id: w.owner.id, username: 'doc', name: 'Emmett Brown', state: 'active', locked: false, avatar_url: null, web_url: `${EXTERNAL_URL}/doc` };
  const commitEntity = {
    id: commitNote.id,
    type: null,
    body: 'Flux capacitor wiring here',
    attachment: null,
    author,
    created_at: at,
    updated_at: at,
    system: false,
    noteable_id: null,
    noteable_type: 'Commit',
    project_id: w.open.id,
    resolvable: false,
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
    noteable_iid: null,
    commands_changes: {},
  };
  const url = `/api/v4/projects/${w.open.id}/search?scope=notes&search=flux%20capacitor`;
  const asReporter = await get(ctx, url, (await ctx.seed.token(reporter)).headers);
  assert.equal(asReporter.statusCode, 200);
  assert.deepEqual(json(asReporter), [commitEntity, await one(internal.id), await one(pub.id)]);
  assert.equal(asReporter.headers['x-total'], '3');

  // someone who reads the public project's merge requests but is no Reporter: no internal note
  const asOutsider = await get(ctx, url, w.outsiderH);
  assert.deepEqual(json(asOutsider), [commitEntity, await one(pub.id)]);
  assert.equal(asOutsider.headers['x-total'], '2');
  const paged = await get(ctx, `${url}&per_page=1&page=2`, w.outsiderH);
  assert.deepEqual(json(paged), [await one(pub.id)]);
  assert.equal(paged.headers['x-next-page'], '');
  assert.equal(paged.headers['x-prev-page'], '1');

  // a Guest of the private project reads neither its merge requests nor its code
  const secretUrl = `/api/v4/projects/${w.secret.id}/search?scope=notes&search=flux%20capacitor`;
  assert.deepEqual(json(await get(ctx, secretUrl, (await ctx.seed.token(guest)).headers)), []);
  assert.equal((await get(ctx, secretUrl, w.outsiderH)).statusCode, 404);
  assert.equal(json(await get(ctx, secretUrl, w.ownerH)).length, 1);
});

test("notes: comments on the project's issues, on the issues the caller may read; internal ones for Reporters and up", async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const reporter = await ctx.seed.user({ username: 'george' });
  const guest = await ctx.seed.user({ username: 'lorraine' });
  await ctx.seed.member({ project: w.open }, reporter, 20);
  await ctx.seed.member({ project: w.secret }, guest, 10);
  const post = async (url: string, payload: Record<string, unknown>) => {
    const r = await ctx.app.inject({ method: 'POST', url, headers: w.ownerH, payload });
    assert.equal(r.statusCode, 201, r.body);
    return json(r);
  };
  const issues = `/api/v4/projects/${w.open.id}/issues`;
  const plain = await post(issues, { title: 'Gigawatts' });
  const hidden = await post(issues, { title: 'Plutonium', confidential: true });
  const pub = await post(`${issues}/${plain.iid}/notes`, { body: 'The flux capacitor needs 1.21 gigawatts' });
  const internal = await post(`${issues}/${plain.iid}/notes`, { body: 'Internal: the flux capacitor runs on plutonium', internal: true });
  const onHidden = await post(`${issues}/${hidden.iid}/notes`, { body: 'Where to get plutonium for the flux capacitor' });
  // a system note ("changed title …") holds the term too, and is no comment
  assert.equal(
    (await ctx.app.inject({ method: 'PUT', url: `${issues}/${plain.iid}`, headers: w.ownerH, payload: { title: 'Flux capacitor gigawatts' } })).statusCode,
    200,
  );
  const secretIssue = await post(`/api/v4/projects/${w.secret.id}/issues`, { title: 'Circuits' });
  const secretNote = await post(`/api/v4/projects/${w.secret.id}/issues/${secretIssue.iid}/notes`, { body: 'Flux capacitor timing' });

  const one = async (project: ProjectRow, iid: number, id: number) => json(await get(ctx, `/api/v4/projects/${project.id}/issues/${iid}/notes/${id}`));
  const url = `/api/v4/projects/${w.open.id}/search?scope=notes&search=flux%20capacitor`;
  // a Reporter: every comment, the latest updated first, each as the issue's own notes show it
  const asReporter = await get(ctx, url, (await ctx.seed.token(reporter)).headers);
  assert.equal(asReporter.statusCode, 200);
  assert.deepEqual(json(asReporter), [
    await one(w.open, hidden.iid, onHidden.id),
    await one(w.open, plain.iid, internal.id),
    await one(w.open, plain.iid, pub.id),
  ]);
  assert.equal(json(asReporter)[2].noteable_iid, plain.iid);
  assert.equal(asReporter.headers['x-total'], '3');
  // someone who reads the public project's issues but is no member: neither internal notes nor a confidential issue's
  const asOutsider = await get(ctx, url, w.outsiderH);
  assert.deepEqual(json(asOutsider), [await one(w.open, plain.iid, pub.id)]);
  assert.equal(asOutsider.headers['x-total'], '1');
  // a Guest of the private project reads its issues (not its merge requests nor its code)
  const secretUrl = `/api/v4/projects/${w.secret.id}/search?scope=notes&search=flux%20capacitor`;
  assert.deepEqual(json(await get(ctx, secretUrl, (await ctx.seed.token(guest)).headers)), [await one(w.secret, secretIssue.iid, secretNote.id)]);
});

test('blobs and commits: git grep and git log in a real repository, at the default branch or a ref', async (t) => {
  const ctx = await buildTestApp(t);
  const owner = await ctx.seed.user({ username: 'doc' });
  const ownerH = (await ctx.seed.token(owner)).headers;
  const stranger = (await ctx.seed.token(await ctx.seed.user({ username: 'biff' }))).headers;
  const group = await ctx.seed.group({ path: 'hill-valley', visibility: 'public' });
  await ctx.seed.member({ group }, owner, 40);
  const { project, dir } = await ctx.seed.repoProject({ path: 'delorean', namespace: group, visibility: 'private' });
  const wt = workTree(t, dir);
  wt.write('README.md', '# DeLorean\n\nA time machine.\n');
  wt.write('lib/flux.rb', 'class Flux\n  # one\n  # two\n  def capacitor\n    1.21\n  end\nend\n');
  wt.write('docs/options.txt', 'Run it with\n-e --gigawatts\nand wait.\n');
  wt.write('bin/data.bin', Buffer.from([0, 1, 2, 0x66, 0x6c, 0x75, 0x78]));
  const first = wt.commit('Add the flux capacitor\n\nIt makes time travel possible.');
  wt.write('lib/flux.rb', 'class Flux\n  # one\n  # two\n  def capacitor\n    88\n  end\nend\n');
  const second = wt.commit('Reach 88 miles per hour');
  wt.checkout('future', true).write('hoverboard.md', 'Flux-free hoverboard\n');
  const third = wt.commit('Hoverboard without flux');
  wt.checkout('main').push();

  const search = (q: string, h = ownerH) => get(ctx, `/api/v4/projects/${project.id}/search?${q}`, h);
  const r = await search('scope=blobs&search=capacitor');
  assert.equal(r.statusCode, 200);
  assert.deepEqual(json(r), [
    {
      basename: 'lib/flux',
      data: '  # one\n  # two\n  def capacitor\n    88\n  end\n',
      path: 'lib/flux.rb',
      filename: 'lib/flux.rb',
      id: null,
      ref: 'main',
      startline: 2,
      project_id: project.id,
    },
  ]);
  assert.equal(r.headers['x-total'], '1');
  assert.equal(r.headers['x-total-pages'], '1');

  // found by path (the file's beginning, its blob id) before found by content; binary files are not searched
  const byPath = await search('scope=blobs&search=FLUX');
  const fluxBlob = wt.git(['rev-parse', 'main:lib/flux.rb']);
  assert.deepEqual(
    json(byPath).map((b: { path: string; startline: number; id: string | null }) => [b.path, b.startline, b.id]),
    [
      ['lib/flux.rb', 1, fluxBlob],
      ['lib/flux.rb', 1, null],
    ],
  );
  assert.equal(json(byPath)[0].data, 'class Flux\n  # one\n  # two\n  def capacitor\n    88\n  end\nend\n');

  // a term that starts with "-" is a term, never an option of git
  assert.deepEqual(json(await search(`scope=blobs&search=${encodeURIComponent('-e --gigawatts')}`)), [
    {
      basename: 'docs/options',
      data: 'Run it with\n-e --gigawatts\nand wait.\n',
      path: 'docs/options.txt',
      filename: 'docs/options.txt',
      id: null,
      ref: 'main',
      startline: 1,
      project_id: project.id,
    },
  ]);
  // another ref, and GitLab's filters
  assert.deepEqual(
    json(await search('scope=blobs&search=hoverboard&ref=future')).map((b: { path: string; ref: string }) => [b.path, b.ref]),
    [
      ['hoverboard.md', 'future'],
      ['hoverboard.md', 'future'],
    ],
  );
  assert.deepEqual(json(await search('scope=blobs&search=hoverboard')), []);
  assert.deepEqual(
    json(await search(`scope=blobs&search=${encodeURIComponent('time extension:md')}`)).map((b: { path: string }) => b.path),
    ['README.md'],
  );
  assert.deepEqual(json(await search(`scope=blobs&search=${encodeURIComponent('time -filename:readme.md')}`)), []);
  assert.deepEqual(
    json(await search(`scope=blobs&search=${encodeURIComponent('path:lib/')}`)).map((b: { path: string }) => b.path),
    ['lib/flux.rb'],
  );
  assert.deepEqual(json(await search('scope=blobs&search=flux&ref=no-such-branch')), []);
  assert.deepEqual(json(await search(`scope=blobs&search=flux&ref=${encodeURIComponent('--output=/tmp/x')}`)), []);

  // commits: by message (any case), newest first, as the commits API shows them without stats; a SHA names one
  const detail = async (sha: string) => {
    const { stats: _stats, ...rest } = json(await get(ctx, `/api/v4/projects/${project.id}/repository/commits/${sha}`, ownerH));
    return rest;
  };
  const commits = await search('scope=commits&search=FLUX');
  assert.deepEqual(json(commits), [await detail(first)]);
  assert.equal(commits.headers['x-total'], '1');
  assert.deepEqual(json(await search('scope=commits&search=flux&ref=future')), [await detail(third), await detail(first)]);
  assert.deepEqual(json(await search(`scope=commits&search=${second.slice(0, 10)}`)), [await detail(second)]);
  assert.deepEqual(json(await search(`scope=commits&search=${encodeURIComponent('--all')}`)), []);

  // pages: X-Total counts what was found
  const paged = await search('scope=commits&search=e&per_page=1');
  assert.deepEqual(json(paged), []);
  const pagedR = await search('scope=commits&search=es&per_page=1&page=2');
  assert.equal(pagedR.headers['x-total'], '2');
  assert.equal(pagedR.headers['x-page'], '2');
  assert.equal(pagedR.headers['x-prev-page'], '1');
  assert.deepEqual(json(pagedR), [await detail(first)]);

  // wiki pages and issues: none yet
  assert.deepEqual(json(await search('scope=wiki_blobs&search=flux')), []);
  assert.deepEqual(json(await search('scope=issues&search=flux')), []);

  // the private project's code is for members only
  assert.equal((await search('scope=blobs&search=flux', stranger)).statusCode, 404);
  const guest = await ctx.seed.user({ username: 'lorraine' });
  await ctx.seed.member({ project }, guest, 10);
  assert.deepEqual(json(await search('scope=blobs&search=flux', (await ctx.seed.token(guest)).headers)), []);
  assert.deepEqual(json(await search('scope=commits&search=flux', (await ctx.seed.token(guest)).headers)), []);
});

test('terms GitLab does not search: too short, a stop word alone, over-long words or queries', async (t) => {
  const w = await world(t);
  const { ctx } = w;
  for (const term of ['f', 'the', 'x'.repeat(100), `${'word '.repeat(65)}`, 'y'.repeat(4097), '   ']) {
    const r = await get(ctx, `/api/v4/search?scope=merge_requests&search=${encodeURIComponent(term)}`, w.ownerH);
    assert.equal(r.statusCode, 200, term.slice(0, 20));
    assert.deepEqual(json(r), [], term.slice(0, 20));
  }
  // a 99-character word is searched
  const ok = await get(ctx, `/api/v4/search?scope=merge_requests&search=${'x'.repeat(99)}`, w.ownerH);
  assert.deepEqual(json(ok), []);
  assert.equal(ok.statusCode, 200);
  // snippets: Hearth has none
  assert.deepEqual(json(await get(ctx, '/api/v4/search?scope=snippet_titles&search=flux', w.ownerH)), []);
  assert.deepEqual(json(await get(ctx, '/api/v4/search?scope=issues&search=flux', w.ownerH)), []);
  assert.deepEqual(json(await get(ctx, `/api/v4/groups/${w.group.id}/search?scope=issues&search=flux`, w.ownerH)), []);
});

test("search_rate_limit: searches a minute per user, then 429 with GitLab's body", async (t) => {
  const w = await world(t);
  const { ctx } = w;
  const set = await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { search_rate_limit: 2 } });
  assert.equal(set.statusCode, 200);
  assert.equal(json(set).search_rate_limit, 2);
  const url = '/api/v4/search?scope=projects&search=delorean';
  // the windows are minutes: not across the end of one
  if (Date.now() % 60_000 > 55_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
  assert.equal((await get(ctx, url, w.ownerH)).statusCode, 200);
  assert.equal((await get(ctx, `/api/v4/projects/${w.open.id}/search?scope=merge_requests&search=flux`, w.ownerH)).statusCode, 200);
  const third = await get(ctx, url, w.ownerH);
  assert.equal(third.statusCode, 429);
  assert.deepEqual(json(third), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
  assert.ok(Number(third.headers['retry-after']) >= 1);
  // another user counts on their own
  assert.equal((await get(ctx, url, w.outsiderH)).statusCode, 200);
});
