// POST /projects/import-relation and GET /projects/:id/relation-imports (GitLab lib/api/project_import.rb,
// Projects::ImportExport::RelationImportService / RelationImportWorker / RelationImportTracker).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { multipart } from '../../helpers/files.ts';
import { seedRichProject, type RichProject } from '../../helpers/import-export.ts';
import { writeTree } from '../../../src/domain/import-export/tree/index.ts';
import { SIZE_MESSAGE } from '../../../src/domain/import-export/archive/extract.ts';
import { IN_PROGRESS, RELATION_IMPORT_JOB } from '../../../src/domain/import-export/import/relation-import.service.ts';
import { queuedJob } from '../../../src/jobs/job-row.ts';
import { nowIso } from '../../../src/lib/time.ts';

const URL = '/api/v4/projects/import-relation';

/** The rich project's tree, exported (writeTree), with VERSION: a .tar.gz of what Hearth itself writes. */
async function exportArchive(ta: TestApp, rich: RichProject, extra: (dir: string) => void = () => {}): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(ta.dataDir, 'export-src-'));
  const out = `${dir}.tar.gz`;
  try {
    await writeTree(ta.c.importExport.relationImports.deps, rich.project, dir);
    fs.writeFileSync(path.join(dir, 'VERSION'), '0.2.4');
    extra(dir);
    await tar.c({ gzip: true, cwd: dir, file: out, portable: true }, fs.readdirSync(dir));
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { force: true });
  }
}

async function post(ta: TestApp, headers: Record<string, string>, fields: Record<string, string>, archive: Buffer | null, filename = 'export.tar.gz') {
  const body = multipart(archive ? { ...fields, file: archive } : fields, filename);
  return ta.app.inject({ method: 'POST', url: URL, headers: { ...headers, ...body.headers }, payload: body.payload });
}

async function list(ta: TestApp, id: number | string, headers: Record<string, string>) {
  await ta.c.importExport.relationImports.idle();
  return ta.app.inject({ method: 'GET', url: `/api/v4/projects/${encodeURIComponent(String(id))}/relation-imports`, headers });
}

const fullPath = (rich: RichProject) => `${rich.group.path}/${rich.project.path}`;
const count = async (ta: TestApp, table: 'issues' | 'milestones' | 'merge_requests' | 'ci_pipelines', projectId: number) =>
  Number(
    (
      await ta.c.db.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('project_id', '=', projectId)
        .executeTakeFirstOrThrow()
    ).n,
  );
const rows = (ta: TestApp) => ta.c.db.kysely.selectFrom('relation_imports').selectAll().orderBy('id').execute();
const tmpLeft = (ta: TestApp) => (fs.existsSync(path.join(ta.dataDir, 'tmp')) ? fs.readdirSync(path.join(ta.dataDir, 'tmp')) : []);

async function blobDeletionKeys(ta: TestApp): Promise<string[]> {
  const jobs = await ta.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'blob_delete').execute();
  return jobs.flatMap((j) => (JSON.parse(j.payload) as { keys: string[] }).keys);
}

test('import-relation: created → started → finished; the entity; the list; the archive queued for deletion', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  // a second project of the maintainer's, empty
  const target = await ta.seed.project({ namespace: rich.group, path: 'target' });
  await ta.seed.member({ project: target }, rich.maintainer, 40);

  // the status the job sees when it fetches the archive
  const svc = ta.c.importExport.relationImports;
  const store = svc.deps.store;
  const original = store.get.bind(store);
  const seen: string[] = [];
  store.get = async (key, range) => {
    if (key.startsWith('relation-imports/')) seen.push((await rows(ta)).at(-1)!.status);
    return original(key, range);
  };
  t.after(() => {
    store.get = original;
  });

  const r = await post(ta, rich.tokens.maintainer, { path: `${rich.group.path}/target`, relation: 'issues' }, archive);
  assert.equal(r.statusCode, 201, r.body);
  const body = r.json();
  assert.deepEqual(body, { id: body.id, project_path: `${rich.group.path}/target`, relation: 'issues', status: 'created' });
  assert.equal(typeof body.id, 'number');

  const l = await list(ta, target.id, rich.tokens.maintainer);
  assert.equal(l.statusCode, 200);
  const [row] = await rows(ta);
  assert.deepEqual(seen, ['started']);
  assert.deepEqual(l.json(), [
    { id: body.id, project_path: `${rich.group.path}/target`, relation: 'issues', status: 'finished', created_at: row.created_at, updated_at: row.updated_at },
  ]);
  assert.equal(row.error, null);
  assert.equal(row.user_id, rich.maintainer.id);
  assert.equal(row.store_key, null);
  // the archive: stored under relation-imports/<project>/, queued for deletion once used
  const keys = await blobDeletionKeys(ta);
  assert.equal(keys.length, 1);
  assert.match(keys[0], new RegExp(`^relation-imports/${target.id}/[0-9a-f-]{36}\\.tar\\.gz$`));
  const job = await ta.c.db.kysely.selectFrom('jobs').selectAll().where('kind', '=', RELATION_IMPORT_JOB).executeTakeFirstOrThrow();
  assert.equal(job.state, 'done');
  assert.deepEqual(JSON.parse(job.payload), { relation_import_id: body.id });

  // the issue came over; nothing else did
  assert.equal(await count(ta, 'issues', target.id), 1);
  const issue = await ta.c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', target.id).executeTakeFirstOrThrow();
  assert.equal(issue.iid, rich.issue.iid);
  assert.equal(issue.title, rich.issue.title);
  assert.equal(await count(ta, 'merge_requests', target.id), 0);
  assert.equal(await count(ta, 'ci_pipelines', target.id), 0);
  assert.deepEqual(tmpLeft(ta), []);
});

test('import-relation: a re-import skips the items already there (issues, milestones, merge requests, pipelines)', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  const target = await ta.seed.project({ namespace: rich.group, path: 'again' });
  const tpath = `${rich.group.path}/again`;

  const expected = { issues: 1, milestones: 2, merge_requests: 3, ci_pipelines: 1 } as const;
  for (const relation of ['milestones', 'issues', 'merge_requests', 'ci_pipelines'] as const) {
    for (let round = 0; round < 2; round++) {
      const r = await post(ta, ta.root, { path: tpath, relation }, archive);
      assert.equal(r.statusCode, 201, `${relation} ${round}: ${r.body}`);
      await ta.c.importExport.relationImports.idle();
      const row = (await rows(ta)).at(-1)!;
      assert.equal(row.status, 'finished', `${relation} ${round}: ${row.error}`);
      assert.equal(await count(ta, relation, target.id), expected[relation], `${relation} after round ${round}`);
    }
  }
  // into the exported project itself: everything is there already
  const before = { issues: await count(ta, 'issues', rich.project.id), milestones: await count(ta, 'milestones', rich.project.id) };
  for (const relation of ['issues', 'milestones'] as const) {
    const r = await post(ta, rich.tokens.owner, { path: fullPath(rich), relation }, archive);
    assert.equal(r.statusCode, 201, r.body);
    await ta.c.importExport.relationImports.idle();
    assert.equal((await rows(ta)).at(-1)!.status, 'finished');
  }
  assert.equal(await count(ta, 'issues', rich.project.id), before.issues);
  assert.equal(await count(ta, 'milestones', rich.project.id), before.milestones);

  const l = await list(ta, target.id, ta.root);
  assert.deepEqual(
    l.json().map((x: any) => [x.relation, x.status]),
    [
      ['milestones', 'finished'],
      ['milestones', 'finished'],
      ['issues', 'finished'],
      ['issues', 'finished'],
      ['merge_requests', 'finished'],
      ['merge_requests', 'finished'],
      ['ci_pipelines', 'finished'],
      ['ci_pipelines', 'finished'],
    ],
  );
  assert.deepEqual(
    l.json().map((x: any) => x.id),
    [...l.json().map((x: any) => x.id)].sort((a: number, b: number) => a - b),
    'oldest first',
  );
});

test('import-relation: one at a time per project (409), a stale one does not block, a project import does', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  const k = ta.c.db.kysely;
  const now = nowIso();
  const base = { project_id: rich.project.id, user_id: rich.owner.id, relation: 'issues', store_key: null, error: null, updated_at: now };
  for (const status of ['created', 'started']) {
    const held = await k
      .insertInto('relation_imports')
      .values({ ...base, status, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const r = await post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'milestones' }, archive);
    assert.equal(r.statusCode, 409, r.body);
    assert.deepEqual(r.json(), { message: IN_PROGRESS });
    await k.updateTable('relation_imports').set({ status: 'failed' }).where('id', '=', held.id).execute();
  }
  // nothing stored for the refused ones
  assert.equal((await rows(ta)).length, 2);
  assert.equal(await k.selectFrom('jobs').select('id').where('kind', '=', RELATION_IMPORT_JOB).executeTakeFirst(), undefined);
  assert.deepEqual(tmpLeft(ta), []);

  // older than a day (RelationImportTracker#stale?): no longer in the way
  await k
    .insertInto('relation_imports')
    .values({ ...base, status: 'started', created_at: new Date(Date.now() - 25 * 3600_000).toISOString() })
    .execute();
  const ok = await post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'milestones' }, archive);
  assert.equal(ok.statusCode, 201, ok.body);
  await ta.c.importExport.relationImports.idle();

  // the project's own import scheduled (Project#any_import_in_progress?)
  await k
    .insertInto('project_imports')
    .values({
      project_id: rich.project.id,
      user_id: rich.owner.id,
      source: 'file',
      status: 'scheduled',
      correlation_id: 'c1',
      created_at: now,
      updated_at: now,
    })
    .execute();
  const r = await post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'issues' }, archive);
  assert.equal(r.statusCode, 409, r.body);
  assert.deepEqual(r.json(), { message: IN_PROGRESS });
});

test('import-relation: two requests at once, both past the first check: one is created, the other refused and its archive removed', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  // both requests store their archive before either writes its row
  const store = ta.c.importExport.relationImports.deps.store;
  const original = { putFile: store.putFile.bind(store), delete: store.delete.bind(store) };
  const stored: string[] = [];
  const deleted: string[] = [];
  let release!: () => void;
  const both = new Promise<void>((r) => (release = r));
  store.putFile = async (key, file, opts) => {
    await original.putFile(key, file, opts);
    stored.push(key);
    if (stored.length === 2) release();
    await both;
  };
  store.delete = async (key) => {
    deleted.push(key);
    return original.delete(key);
  };
  t.after(() => Object.assign(store, original));

  const [a, b] = await Promise.all([
    post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'issues' }, archive),
    post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'milestones' }, archive),
  ]);
  await ta.c.importExport.relationImports.idle();
  const [won, lost] = a.statusCode === 201 ? [a, b] : [b, a];
  assert.equal(won.statusCode, 201, won.body);
  assert.equal(lost.statusCode, 409, lost.body);
  assert.deepEqual(lost.json(), { message: IN_PROGRESS });
  const all = await rows(ta);
  assert.equal(all.length, 1);
  assert.equal(all[0].id, won.json().id);
  assert.equal(all[0].status, 'finished');
  // the refused request's archive: removed at once; the other's: queued for deletion once used
  assert.equal(stored.length, 2);
  const queued = await blobDeletionKeys(ta);
  assert.equal(queued.length, 1);
  const refusedKey = stored.find((k) => !queued.includes(k));
  assert.deepEqual(deleted, [refusedKey]);
  assert.equal(await store.stat(refusedKey!), null);
  assert.deepEqual(tmpLeft(ta), []);
});

test('import-relation: a bad archive fails the import (error kept, archive queued for deletion, nothing left in tmp)', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const target = await ta.seed.project({ namespace: rich.group, path: 'bad' });
  const tpath = `${rich.group.path}/bad`;
  const good = await exportArchive(ta, rich);

  const symlinked = await exportArchive(ta, rich, (dir) => fs.symlinkSync('/etc/passwd', path.join(dir, 'tree', 'project', 'evil.ndjson')));
  const noVersion = await exportArchive(ta, rich, (dir) => fs.rmSync(path.join(dir, 'VERSION')));
  const otherVersion = await exportArchive(ta, rich, (dir) => fs.writeFileSync(path.join(dir, 'VERSION'), '0.1.8'));
  const noRelation = await exportArchive(ta, rich, (dir) => fs.rmSync(path.join(dir, 'tree', 'project', 'issues.ndjson')));
  const cases: Array<[Buffer, string | RegExp]> = [
    [Buffer.from('not an archive'), /^Invalid file: not a valid gzip archive/],
    [good.subarray(0, Math.floor(good.length / 2)), /^Invalid file: not a valid gzip archive \(unexpected end of file\)$/],
    [symlinked, 'Invalid file: "tree/project/evil.ndjson" is a symbolic link'],
    [noVersion, 'The archive does not follow the export structure: VERSION is missing'],
    [otherVersion, 'Import version mismatch: Required 0.2.4 but was 0.1.8'],
    [noRelation, 'The archive does not follow the export structure: tree/project/issues.ndjson is missing'],
  ];
  for (const [archive, message] of cases) {
    const r = await post(ta, ta.root, { path: tpath, relation: 'issues' }, archive);
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(r.json().status, 'created');
    await ta.c.importExport.relationImports.idle();
    const row = (await rows(ta)).at(-1)!;
    assert.equal(row.status, 'failed');
    if (typeof message === 'string') assert.equal(row.error, message);
    else assert.match(row.error!, message);
    assert.equal(row.store_key, null);
    assert.deepEqual(tmpLeft(ta), []);
  }
  assert.equal(await count(ta, 'issues', target.id), 0);
  assert.equal((await blobDeletionKeys(ta)).length, cases.length);
  const l = await list(ta, target.id, ta.root);
  assert.deepEqual(
    l.json().map((x: any) => x.status),
    cases.map(() => 'failed'),
  );
  // the error is not part of the entity
  assert.deepEqual(Object.keys(l.json()[0]).sort(), ['created_at', 'id', 'project_path', 'relation', 'status', 'updated_at']);
});

test('import-relation: the decompressed size limit (max_decompressed_archive_size) fails the import', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const big = await exportArchive(ta, rich, (dir) => fs.writeFileSync(path.join(dir, 'filler.bin'), Buffer.alloc(3 * 1024 * 1024)));
  const s = await ta.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ta.root, payload: { max_decompressed_archive_size: 1 } });
  assert.equal(s.statusCode, 200, s.body);
  const r = await post(ta, rich.tokens.owner, { path: fullPath(rich), relation: 'issues' }, big);
  assert.equal(r.statusCode, 201, r.body);
  await ta.c.importExport.relationImports.idle();
  const row = (await rows(ta)).at(-1)!;
  assert.equal(row.status, 'failed');
  assert.equal(row.error, SIZE_MESSAGE);
  assert.deepEqual(tmpLeft(ta), []);
});

test('import-relation: who may (Maintainer+), what is refused (params, sources, file name, projects)', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  const outsider = (await ta.seed.token(await ta.seed.user())).headers;
  const p = fullPath(rich);

  let r = await post(ta, rich.tokens.developer, { path: p, relation: 'issues' }, archive);
  assert.equal(r.statusCode, 403, r.body);
  assert.deepEqual(r.json(), { message: 'You are not authorized to perform this action' });
  r = await post(ta, outsider, { path: p, relation: 'issues' }, archive);
  assert.equal(r.statusCode, 404, r.body);
  assert.deepEqual(r.json(), { message: 'Project not found' });
  for (const path of ['nobody/nothing', String(rich.project.id), `${rich.project.id}`, '2147483648', `${p}/deeper`]) {
    r = await post(ta, ta.root, { path, relation: 'issues' }, archive);
    assert.equal(r.statusCode, 404, `${path}: ${r.body}`);
    assert.deepEqual(r.json(), { message: 'Project not found' });
  }
  r = await post(ta, {}, { path: p, relation: 'issues' }, archive);
  assert.equal(r.statusCode, 401, r.body);
  assert.deepEqual(r.json(), { message: '401 Unauthorized' });

  r = await post(ta, rich.tokens.owner, { path: p, relation: 'labels' }, archive);
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'relation does not have a valid value' });
  r = await post(ta, rich.tokens.owner, {}, null);
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'path is missing, file is missing, relation is missing' });
  r = await post(ta, rich.tokens.owner, { path: p, relation: 'issues', file: 'text' }, null);
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'file is invalid' });
  r = await post(ta, rich.tokens.owner, { path: p, relation: 'issues' }, archive, 'export.zip');
  assert.equal(r.statusCode, 422);
  assert.deepEqual(r.json(), { error: 'You need to upload a GitLab project export archive (ending in .gz).' });

  const s = await ta.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ta.root, payload: { import_sources: ['github'] } });
  assert.equal(s.statusCode, 200, s.body);
  r = await post(ta, rich.tokens.owner, { path: p, relation: 'issues' }, archive);
  assert.equal(r.statusCode, 403, r.body);
  assert.deepEqual(r.json(), { message: '403 Forbidden' });

  assert.deepEqual(await rows(ta), []);
  assert.deepEqual(tmpLeft(ta), []);
});

test('relation-imports list: admin_project, 404 for those who may not see the project, ids past int4', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const outsider = (await ta.seed.token(await ta.seed.user())).headers;
  let r = await list(ta, rich.project.id, rich.tokens.maintainer);
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), []);
  r = await list(ta, fullPath(rich), rich.tokens.owner);
  assert.equal(r.statusCode, 200);
  r = await list(ta, rich.project.id, rich.tokens.developer);
  assert.equal(r.statusCode, 403);
  assert.deepEqual(r.json(), { message: '403 Forbidden - Project' });
  for (const [id, headers] of [
    [rich.project.id, outsider],
    ['2147483648', ta.root],
    ['99999999999999999999', ta.root],
    ['nobody/nothing', ta.root],
  ] as const) {
    r = await list(ta, id, headers);
    assert.equal(r.statusCode, 404, `${id}: ${r.body}`);
    assert.deepEqual(r.json(), { message: '404 Project Not Found' });
  }
  r = await list(ta, rich.project.id, {});
  assert.equal(r.statusCode, 401);
});

test('relation imports: the worker round runs what another process left, and takes over one whose lease ran out', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const archive = await exportArchive(ta, rich);
  const target = await ta.seed.project({ namespace: rich.group, path: 'left' });
  const k = ta.c.db.kysely;
  const now = nowIso();
  const svc = ta.c.importExport.relationImports;

  // queued by a process that died before running it
  await svc.deps.store.put(`relation-imports/${target.id}/left.tar.gz`, archive);
  const left = await k
    .insertInto('relation_imports')
    .values({
      project_id: target.id,
      user_id: rich.owner.id,
      relation: 'issues',
      status: 'created',
      store_key: `relation-imports/${target.id}/left.tar.gz`,
      error: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await k
    .insertInto('jobs')
    .values(queuedJob(RELATION_IMPORT_JOB, { relation_import_id: left.id }))
    .execute();
  assert.equal(await svc.runQueued(), 1);
  assert.equal((await k.selectFrom('relation_imports').select('status').where('id', '=', left.id).executeTakeFirstOrThrow()).status, 'finished');
  assert.equal(await count(ta, 'issues', target.id), 1);

  // started by a worker that died: its lease ran out
  await svc.deps.store.put(`relation-imports/${target.id}/taken.tar.gz`, archive);
  const taken = await k
    .insertInto('relation_imports')
    .values({
      project_id: target.id,
      user_id: rich.owner.id,
      relation: 'milestones',
      status: 'started',
      store_key: `relation-imports/${target.id}/taken.tar.gz`,
      error: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await k
    .insertInto('jobs')
    .values({
      ...queuedJob(RELATION_IMPORT_JOB, { relation_import_id: taken.id }),
      state: 'running',
      attempts: 1,
      locked_by: 'gone',
      locked_until: new Date(Date.now() - 1000).toISOString(),
    })
    .execute();
  assert.equal(await svc.runQueued(), 1);
  assert.equal((await k.selectFrom('relation_imports').select('status').where('id', '=', taken.id).executeTakeFirstOrThrow()).status, 'finished');
  assert.equal(await count(ta, 'milestones', target.id), 2);

  // taken over too often: given up
  const stuck = await k
    .insertInto('relation_imports')
    .values({
      project_id: target.id,
      user_id: rich.owner.id,
      relation: 'issues',
      status: 'started',
      store_key: null,
      error: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await k
    .insertInto('jobs')
    .values({
      ...queuedJob(RELATION_IMPORT_JOB, { relation_import_id: stuck.id }),
      state: 'running',
      attempts: 3,
      locked_by: 'gone',
      locked_until: new Date(Date.now() - 1000).toISOString(),
    })
    .execute();
  assert.equal(await svc.runQueued(), 0); // not run again
  const row = await k.selectFrom('relation_imports').selectAll().where('id', '=', stuck.id).executeTakeFirstOrThrow();
  assert.equal(row.status, 'failed');
  assert.equal(row.error, 'The import was interrupted too many times');
  const job = await k
    .selectFrom('jobs')
    .selectAll()
    .where('payload', '=', JSON.stringify({ relation_import_id: stuck.id }))
    .executeTakeFirstOrThrow();
  assert.deepEqual([job.state, job.attempts, job.last_error, job.locked_by], ['failed', 3, 'The job was interrupted too many times', null]);
  assert.equal(await svc.runQueued(), 0);
});
