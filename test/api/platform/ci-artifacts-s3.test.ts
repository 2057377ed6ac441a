// Artifacts on an S3-compatible bucket (a real s3rver started here): upload, download streamed through
// Hearth, one file by ranged reads, 302 to a presigned URL with direct download, delete and expiry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { seedPipeline } from '../../helpers/ci.ts';
import { startS3, type S3Server } from '../../helpers/blob-store-s3rver.ts';
import { jobWithArchive, makeZip, runJob } from '../../helpers/ci-artifacts.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-artifacts-s3', () => {
  let s3: S3Server;
  const cleanups: (() => unknown)[] = [];

  before(async () => {
    s3 = await startS3('artifacts');
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    await s3.stop();
  });

  async function app(directDownload: boolean): Promise<TestApp> {
    return buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) }, { blobStore: s3.config({ directDownload }) });
  }

  // many entries and a large one: the central directory is read through the block cache, the big entry streamed
  const entries = Array.from({ length: 300 }, (_, i) => ({ name: `files/f${i}.txt`, data: `file ${i}\n` }));
  const big = Buffer.alloc(700_000, 7);
  const ZIP = makeZip([...entries, { name: 'big.bin', data: big }]);

  test('S3 store, proxied: upload, archive download, single files by ranged reads, delete removes the object', async () => {
    const ctx = await app(false);
    const project = await ctx.seed.project({ path: 's3p' });
    const { jobs } = await seedPipeline(ctx.c, project, { status: 'success' }, [{ name: 'build' }]);
    await jobWithArchive(ctx.app, ctx.c, jobs[0]!, ZIP);
    const [row] = await ctx.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobs[0]!.id).execute();
    assert.deepEqual(await ctx.c.store.stat(row!.store_key), { size: ZIP.length });

    const res = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts`, headers: ctx.root });
    assert.equal(res.statusCode, 200);
    assert.ok(res.rawPayload.equals(ZIP));
    assert.equal(res.headers['content-length'], String(ZIP.length));
    for (const i of [0, 150, 299]) {
      const one = await ctx.app.inject({
        method: 'GET',
        url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts/files/f${i}.txt`,
        headers: ctx.root,
      });
      assert.equal(one.statusCode, 200);
      assert.equal(one.body, `file ${i}\n`);
    }
    const b = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts/big.bin`, headers: ctx.root });
    assert.ok(b.rawPayload.equals(big));
    const raw = await ctx.app.inject({
      method: 'GET',
      url: `/api/v4/projects/${project.id}/jobs/artifacts/main/raw/files/f7.txt?job=build`,
      headers: ctx.root,
    });
    assert.deepEqual([raw.statusCode, raw.body, raw.headers['content-type']], [200, 'file 7\n', 'text/plain; charset=utf-8']);

    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts`, headers: ctx.root });
    assert.equal(del.statusCode, 204);
    assert.equal(await ctx.c.store.stat(row!.store_key), null);
  });

  test("S3 store with direct download: 302 to a presigned URL that serves the archive; the runner's download too when it asks; single files still proxied; expiry removes the object", async () => {
    const ctx = await app(true);
    const project = await ctx.seed.project({ path: 's3d' });
    const { jobs } = await seedPipeline(ctx.c, project, { status: 'success' }, [
      { name: 'build', stage_idx: 0 },
      { name: 'test', stage_idx: 1 },
    ]);
    await jobWithArchive(ctx.app, ctx.c, jobs[0]!, ZIP);
    const res = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts`, headers: ctx.root });
    assert.equal(res.statusCode, 302);
    const location = String(res.headers.location);
    assert.ok(location.startsWith(`${s3.endpoint}/artifacts/artifacts/${project.id}/${jobs[0]!.id}/archive-`), location);
    const fetched = await fetch(location);
    assert.equal(fetched.status, 200);
    assert.ok(Buffer.from(await fetched.arrayBuffer()).equals(ZIP));
    assert.equal(fetched.headers.get('content-disposition'), `attachment; filename="artifacts.zip"; filename*=UTF-8''artifacts.zip`);

    const token = await runJob(ctx.c, jobs[1]!);
    const proxied = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts`, headers: { 'job-token': token } });
    assert.equal(proxied.statusCode, 200);
    assert.ok(proxied.rawPayload.equals(ZIP));
    const direct = await ctx.app.inject({ method: 'GET', url: `/api/v4/jobs/${jobs[0]!.id}/artifacts?direct_download=true`, headers: { 'job-token': token } });
    assert.equal(direct.statusCode, 302);
    assert.ok(String(direct.headers.location).startsWith(s3.endpoint));

    const one = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts/files/f3.txt`, headers: ctx.root });
    assert.deepEqual([one.statusCode, one.body], [200, 'file 3\n']);

    const [row] = await ctx.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobs[0]!.id).execute();
    await ctx.c.db.kysely.updateTable('ci_job_artifacts').set({ expire_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', row!.id).execute();
    await ctx.c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify({ keep_latest_artifact: false }) })
      .where('id', '=', project.id)
      .execute();
    assert.equal(await ctx.c.ci.artifacts.removeExpired(), 1);
    assert.equal(await ctx.c.store.stat(row!.store_key), null);
  });
});
