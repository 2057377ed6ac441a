// Project export archives on an S3-compatible bucket (a real s3rver started here): stored there, the
// download streamed through Hearth, or a 302 to a presigned URL with direct download; expiry removes the
// object.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { startS3, type S3Server } from '../../helpers/blob-store-s3rver.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('project-export-s3', () => {
  let s3: S3Server;
  const cleanups: (() => unknown)[] = [];

  before(async () => {
    s3 = await startS3('exports');
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    await s3.stop();
  });

  async function exported(directDownload: boolean): Promise<{ ta: TestApp; projectId: number; key: string; fileName: string }> {
    const ta = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) }, { blobStore: s3.config({ directDownload }) });
    const { project } = await ta.seed.repoProject({ path: `s3-${directDownload}` });
    const commit = await ta.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/files/README.md`,
      headers: ta.root,
      payload: { branch: 'main', content: 'hi\n', commit_message: 'first' },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    const r = await ta.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/export`, headers: ta.root });
    assert.equal(r.statusCode, 202);
    await ta.c.importExport.exports.idle();
    const row = await ta.c.db.kysely.selectFrom('project_exports').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'finished', row.error ?? '');
    assert.deepEqual(await ta.c.store.stat(row.store_key!), { size: Number(row.size) });
    return { ta, projectId: project.id, key: row.store_key!, fileName: row.file_name! };
  }

  test('S3 store, proxied: the archive streamed with its headers; expiry removes the object', async () => {
    const { ta, projectId, key, fileName } = await exported(false);
    const dl = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${projectId}/export/download`, headers: ta.root });
    assert.equal(dl.statusCode, 200);
    assert.equal(dl.headers['content-type'], 'application/gzip');
    assert.equal(dl.headers['content-disposition'], `attachment; filename="${fileName}"`);
    assert.equal(Number(dl.headers['content-length']), dl.rawPayload.length);
    assert.deepEqual([...dl.rawPayload.subarray(0, 2)], [0x1f, 0x8b]);

    await ta.c.db.kysely
      .updateTable('project_exports')
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .execute();
    assert.equal(await ta.c.importExport.exports.removeExpired(), 1);
    await ta.c.worker.drain();
    assert.equal(await ta.c.store.stat(key), null);
  });

  test('S3 store with direct download: 302 to a presigned URL that serves the archive', async () => {
    const { ta, projectId, fileName } = await exported(true);
    const dl = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${projectId}/export/download`, headers: ta.root });
    assert.equal(dl.statusCode, 302);
    const location = dl.headers.location as string;
    assert.ok(location.startsWith('http://127.0.0.1:'), location);
    const res = await fetch(location);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/gzip');
    assert.ok(res.headers.get('content-disposition')?.includes(fileName));
    const body = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...body.subarray(0, 2)], [0x1f, 0x8b]);
  });
});
