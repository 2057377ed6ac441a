// The runner's side of artifacts: POST /jobs/:id/artifacts (job token, size limit, zip checks, one row
// per type, expiry) and GET /jobs/:id/artifacts (own token or a running job of the same pipeline), and
// the dependencies of a job payload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { seedPipeline } from '../../helpers/ci.ts';
import { multipart } from '../../helpers/files.ts';
import { startTestServer } from '../../helpers/server.ts';
import type { ProjectRow } from '../../../src/db/schema.ts';
import { finishJob, jobWithArchive, makeZip, runJob, upload } from '../../helpers/ci-artifacts.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-artifacts-runner', () => {
  let ctx: TestApp;
  let project: ProjectRow;
  const DAY = 86_400_000;

  const cleanups: (() => unknown)[] = [];

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    project = await ctx.seed.project({ path: 'app' });
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  async function rows(jobId: number) {
    return ctx.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
  }

  async function blob(key: string): Promise<Buffer | null> {
    const s = await ctx.c.store.get(key);
    return s ? buffer(s) : null;
  }

  const near = (iso: string | null, ms: number) => iso !== null && Math.abs(Date.parse(iso) - (Date.now() + ms)) < 60_000;

  test('upload: 201 "201", one row with size and SHA-256, the bytes in the store, expiry from the default (30 days); the job expiry too', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'build' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    const zip = makeZip([{ name: 'out/a.txt', data: 'hello' }]);
    const res = await upload(ctx.app, jobs[0]!.id, token, zip);
    assert.equal(res.statusCode, 201);
    assert.equal(res.body, '"201"');
    const [row, ...more] = await rows(jobs[0]!.id);
    assert.equal(more.length, 0);
    assert.deepEqual(
      { ...row!, id: 0, created_at: '', expire_at: '', store_key: '' },
      {
        id: 0,
        project_id: project.id,
        job_id: jobs[0]!.id,
        file_type: 'archive',
        file_format: 'zip',
        file_name: 'artifacts.zip',
        size: zip.length,
        file_sha256: createHash('sha256').update(zip).digest('hex'),
        store_key: '',
        expire_at: '',
        created_at: '',
      },
    );
    assert.match(row!.store_key, new RegExp(`^artifacts/${project.id}/${jobs[0]!.id}/archive-[0-9a-f]{16}\\.zip$`));
    assert.ok(near(row!.expire_at, 30 * DAY), row!.expire_at ?? 'null');
    assert.ok((await blob(row!.store_key))!.equals(zip));
    const job = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[0]!.id).executeTakeFirstOrThrow();
    assert.equal(job.artifacts_expire_at, row!.expire_at);

    // the same bytes again: 201, nothing new; other bytes for the same type: 400 as GitLab's unique index
    assert.equal((await upload(ctx.app, jobs[0]!.id, token, zip)).statusCode, 201);
    assert.equal((await rows(jobs[0]!.id)).length, 1);
    const other = await upload(ctx.app, jobs[0]!.id, token, makeZip([{ name: 'b', data: 'x' }]));
    assert.equal(other.statusCode, 400);
    assert.deepEqual(other.json(), { message: 'another artifact of the same type already exists' });
    assert.equal((await rows(jobs[0]!.id)).length, 1);

    // another type of the same job: a row of its own; expire_in given
    const junit = await upload(
      ctx.app,
      jobs[0]!.id,
      token,
      Buffer.from('gzipped'),
      'artifact_format=gzip&artifact_type=junit&expire_in=1%20week',
      'junit.xml.gz',
    );
    assert.equal(junit.statusCode, 201);
    const [, j] = await rows(jobs[0]!.id);
    assert.deepEqual([j!.file_type, j!.file_format, j!.file_name, j!.size], ['junit', 'gzip', 'junit.xml.gz', 7]);
    assert.match(j!.store_key, /\/junit-[0-9a-f]{16}\.gz$/);
    assert.ok(near(j!.expire_at, 7 * DAY));
  });

  test('upload: expire_in "never" and "0" never expire; "2 hrs 30 min"; an unreadable one is 400 and nothing is stored', async () => {
    for (const [expire, ms] of [
      ['never', null],
      ['0', null],
      ['2 hrs 30 min', 2.5 * 3600_000],
      ['3600', 3600_000],
    ] as const) {
      const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'build' }]);
      const token = await runJob(ctx.c, jobs[0]!);
      const res = await upload(ctx.app, jobs[0]!.id, token, makeZip([{ name: 'a', data: 'a' }]), `expire_in=${encodeURIComponent(expire)}`);
      assert.equal(res.statusCode, 201, expire);
      const [row] = await rows(jobs[0]!.id);
      if (ms === null) assert.equal(row!.expire_at, null, expire);
      else assert.ok(near(row!.expire_at, ms), expire);
    }
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'build' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    const bad = await upload(ctx.app, jobs[0]!.id, token, makeZip([{ name: 'a', data: 'a' }]), 'expire_in=soon');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'expire_in is invalid' });
    assert.deepEqual(await rows(jobs[0]!.id), []);
  });

  test("upload authentication: wrong, missing or another job's token and an unknown job are 403; a finished job 403 with Job-Status; nothing stored", async () => {
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'a' }, { name: 'b' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    const tokenB = await runJob(ctx.c, jobs[1]!);
    const zip = makeZip([{ name: 'a', data: 'a' }]);
    for (const [id, tok] of [
      [jobs[0]!.id, 'glcbt-wrong'],
      [jobs[0]!.id, null],
      [jobs[0]!.id, tokenB],
      [999_999, token],
    ] as const) {
      const res = await upload(ctx.app, id, tok, zip);
      assert.equal(res.statusCode, 403, `${id} ${tok}`);
      assert.deepEqual(res.json(), { message: '403 Forbidden' });
    }
    // the token as the `token` query parameter works as the header does
    const byParam = await upload(ctx.app, jobs[1]!.id, null, zip, `token=${tokenB}`);
    assert.equal(byParam.statusCode, 201);

    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'success' }).where('id', '=', jobs[0]!.id).execute();
    const done = await upload(ctx.app, jobs[0]!.id, token, zip);
    assert.equal(done.statusCode, 403);
    assert.deepEqual(done.json(), { message: '403 Forbidden - Job is not processing on runner' });
    assert.equal(done.headers['job-status'], 'success');
    assert.deepEqual(await rows(jobs[0]!.id), []);
  });

  test('upload parameters: no file 400 "file is missing"; unknown artifact_type/artifact_format 400 (Grape values)', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'a' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    const none = await upload(ctx.app, jobs[0]!.id, token, null);
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { error: 'file is missing' });
    const json = await ctx.app.inject({ method: 'POST', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts`, headers: { 'job-token': token }, payload: {} });
    assert.equal(json.statusCode, 400);
    assert.deepEqual(json.json(), { error: 'file is missing' });
    const type = await upload(ctx.app, jobs[0]!.id, token, Buffer.from('x'), 'artifact_type=bogus');
    assert.equal(type.statusCode, 400);
    assert.deepEqual(type.json(), { error: 'artifact_type does not have a valid value' });
    const format = await upload(ctx.app, jobs[0]!.id, token, Buffer.from('x'), 'artifact_format=rar');
    assert.equal(format.statusCode, 400);
    assert.deepEqual(format.json(), { error: 'artifact_format does not have a valid value' });
    assert.deepEqual(await rows(jobs[0]!.id), []);
  });

  test('archives are checked: not a zip, `..`, absolute names and symbolic links out of the archive are 400; a link inside is fine', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'a' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    const cases: [Buffer, string][] = [
      [Buffer.from('not a zip at all'), 'invalid zip archive: '],
      [makeZip([{ name: '../evil.sh', data: 'x' }]), 'invalid '],
      [makeZip([{ name: 'ok/../../evil.sh', data: 'x' }]), 'invalid '],
      [makeZip([{ name: '/etc/passwd', data: 'x' }]), 'invalid '],
      [makeZip([{ name: 'link', data: '../../etc/passwd', symlink: true }]), 'symbolic link out of the archive: link'],
      [makeZip([{ name: 'd/link', data: '/etc/passwd', symlink: true }]), 'symbolic link out of the archive: d/link'],
    ];
    for (const [zip, reason] of cases) {
      const res = await upload(ctx.app, jobs[0]!.id, token, zip);
      assert.equal(res.statusCode, 400, reason);
      assert.ok(res.json().message.startsWith(`400 Bad request - ${reason}`), res.body);
    }
    assert.deepEqual(await rows(jobs[0]!.id), []);
    const files = await ctx.c.db.kysely.selectFrom('ci_job_artifacts').select('id').execute();
    const inside = await upload(
      ctx.app,
      jobs[0]!.id,
      token,
      makeZip([
        { name: 'd/f', data: 'x' },
        { name: 'd/link', data: 'f', symlink: true },
        { name: 'up', data: 'd/../d/f', symlink: true },
      ]),
    );
    assert.equal(inside.statusCode, 201);
    assert.equal((await ctx.c.db.kysely.selectFrom('ci_job_artifacts').select('id').execute()).length, files.length + 1);
  });

  test('size limit max_artifacts_size: over it 413 {"message":"413 Request Entity Too Large"} (streamed or refused by its length), nothing stored; at it fine', async () => {
    const put = await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { max_artifacts_size: 1 } });
    assert.equal(put.statusCode, 200);
    try {
      const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'a' }, { name: 'b' }]);
      const token = await runJob(ctx.c, jobs[0]!);
      for (const size of [1024 * 1024 + 1, 3 * 1024 * 1024]) {
        const res = await upload(ctx.app, jobs[0]!.id, token, Buffer.alloc(size, 1), 'artifact_format=gzip&artifact_type=junit');
        assert.equal(res.statusCode, 413, String(size));
        assert.deepEqual(res.json(), { message: '413 Request Entity Too Large' });
      }
      assert.deepEqual(await rows(jobs[0]!.id), []);
      const ok = await upload(ctx.app, jobs[0]!.id, token, Buffer.alloc(1024 * 1024, 1), 'artifact_format=gzip&artifact_type=junit');
      assert.equal(ok.statusCode, 201);
    } finally {
      await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { max_artifacts_size: 100 } });
    }
  });

  test('settings: default_artifacts_expire_in must be a duration; a new default applies to the next upload', async () => {
    const bad = await ctx.app.inject({
      method: 'PUT',
      url: '/api/v4/application/settings',
      headers: ctx.root,
      payload: { default_artifacts_expire_in: 'whenever' },
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { message: { default_artifacts_expire_in: ['is not a correct duration'] } });
    const zero = await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { max_artifacts_size: 0 } });
    assert.equal(zero.statusCode, 400);
    const put = await ctx.app.inject({
      method: 'PUT',
      url: '/api/v4/application/settings',
      headers: ctx.root,
      payload: { default_artifacts_expire_in: '2 days' },
    });
    assert.equal(put.json().default_artifacts_expire_in, '2 days');
    try {
      const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'a' }]);
      await jobWithArchive(ctx.app, ctx.c, jobs[0]!, makeZip([{ name: 'a', data: 'a' }]));
      assert.ok(near((await rows(jobs[0]!.id))[0]!.expire_at, 2 * DAY));
    } finally {
      await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { default_artifacts_expire_in: '30 days' } });
    }
  });

  test('runner download GET /jobs/:id/artifacts: own running token, or a running job of the same pipeline; others 403; no archive 404', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, {}, [
      { name: 'build', stage: 'build', stage_idx: 0 },
      { name: 'bare', stage: 'build', stage_idx: 0 },
      { name: 'test', stage: 'test', stage_idx: 1 },
    ]);
    const other = await seedPipeline(ctx.c, project, {}, [{ name: 'test' }]);
    const zip = makeZip([{ name: 'bin/app', data: 'binary' }]);
    const ownToken = await runJob(ctx.c, jobs[0]!);
    assert.equal((await upload(ctx.app, jobs[0]!.id, ownToken, zip)).statusCode, 201);
    const own = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts`, headers: { 'job-token': ownToken } });
    assert.equal(own.statusCode, 200);
    assert.ok(own.rawPayload.equals(zip));
    assert.equal(own.headers['content-disposition'], `attachment; filename="artifacts.zip"; filename*=UTF-8''artifacts.zip`);
    await finishJob(ctx.c, jobs[0]!);

    const consumer = await runJob(ctx.c, jobs[2]!);
    const dep = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts?token=${consumer}&direct_download=true` });
    assert.equal(dep.statusCode, 200);
    assert.ok(dep.rawPayload.equals(zip));
    assert.equal(dep.headers['content-type'], 'application/octet-stream');

    const stranger = await runJob(ctx.c, other.jobs[0]!);
    for (const headers of [{ 'job-token': stranger }, { 'job-token': ownToken }, { 'job-token': 'glcbt-nope' }, {}]) {
      const res = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts`, headers });
      assert.equal(res.statusCode, 403, JSON.stringify(headers));
      assert.deepEqual(res.json(), { message: '403 Forbidden' });
    }
    const missing = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[1]!.id}/artifacts`, headers: { 'job-token': consumer } });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Not Found' });
    const unknown = await ctx.app.inject({ method: 'GET', url: '/api/v4/jobs/999999/artifacts', headers: { 'job-token': consumer } });
    assert.equal(unknown.statusCode, 403);

    // the payload's dependencies: the earlier stage's jobs, the archive only where there is one
    const t2 = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[2]!.id).executeTakeFirstOrThrow();
    assert.deepEqual(await ctx.c.ci.artifacts.forDependencies(t2, consumer), [
      { id: jobs[0]!.id, name: 'build', token: consumer, artifacts_file: { filename: 'artifacts.zip', size: zip.length } },
      { id: jobs[1]!.id, name: 'bare', token: consumer },
    ]);
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ options: JSON.stringify({ script: ['x'], dependencies: ['bare'] }) })
      .where('id', '=', jobs[2]!.id)
      .execute();
    const withDeps = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[2]!.id).executeTakeFirstOrThrow();
    assert.deepEqual(await ctx.c.ci.artifacts.forDependencies(withDeps, consumer), [{ id: jobs[1]!.id, name: 'bare', token: consumer }]);
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ options: JSON.stringify({ script: ['x'], needs: [{ job: 'build', artifacts: true }] }) })
      .where('id', '=', jobs[2]!.id)
      .execute();
    const withNeeds = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[2]!.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      (await ctx.c.ci.artifacts.forDependencies(withNeeds, consumer)).map((d) => d.name),
      ['build'],
    );
  });

  test('over a real socket: an upload streamed in chunks, its download, and oversized uploads answered 413 without waiting for the whole body', async (t) => {
    const srv = await startTestServer(t);
    await srv.c.settings.save({ max_artifacts_size: 1 });
    const p = await srv.seed.project({ path: 'sock' });
    const { jobs } = await seedPipeline(srv.c, p, {}, [{ name: 'a' }, { name: 'b' }]);
    const token = await runJob(srv.c, jobs[0]!);
    const send = (body: Buffer, parts = 16) => {
      const mp = multipart({ file: body }, 'artifacts.zip');
      const size = Math.ceil(mp.payload.length / parts);
      const stream = (async function* () {
        for (let i = 0; i < mp.payload.length; i += size) yield mp.payload.subarray(i, i + size);
      })();
      return fetch(`${srv.base}/api/v4/jobs/${jobs[0]!.id}/artifacts?artifact_format=zip&artifact_type=archive`, {
        method: 'POST',
        headers: { ...mp.headers, 'job-token': token, 'content-length': String(mp.payload.length) },
        body: stream as unknown as BodyInit,
        duplex: 'half',
      } as RequestInit);
    };
    for (const size of [1024 * 1024 + 100_000, 5 * 1024 * 1024]) {
      const res = await send(makeZip([{ name: 'big.bin', data: Buffer.alloc(size, 3) }]));
      assert.equal(res.status, 413, String(size));
      assert.deepEqual(await res.json(), { message: '413 Request Entity Too Large' });
    }
    const zip = makeZip([{ name: 'ok.bin', data: Buffer.alloc(900_000, 4) }]);
    const ok = await send(zip);
    assert.equal(ok.status, 201);
    assert.equal(await ok.text(), '"201"');
    const back = await fetch(`${srv.base}/api/v4/jobs/${jobs[0]!.id}/artifacts`, { headers: { 'job-token': token } });
    assert.equal(back.status, 200);
    assert.ok(Buffer.from(await back.arrayBuffer()).equals(zip));
    assert.equal((await srv.c.db.kysely.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', jobs[0]!.id).execute()).length, 1);
  });
});
