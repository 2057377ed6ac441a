// A hostile import archive against a real server (`node bin/hearth.js serve`, as the README starts it): a
// 1 MB .tar.gz whose relation file holds one line of over a gigabyte. The import fails with GitLab's
// message, once (its job is not taken again), the process lives, and nothing of it stays in DATA_DIR/tmp
// (nor of an import killed before the server started).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import SQLite from 'better-sqlite3';
import { Header } from 'tar';
import { startHearth, tempDataDir, TOKEN } from '../../helpers/process.ts';

/** One tar entry's header block. */
const header = (name: string, size: number) => {
  const block = Buffer.alloc(512);
  new Header({ path: name, size, mode: 0o644, type: 'File', mtime: new Date(0), uid: 0, gid: 0 }).encode(block, 0);
  return block;
};
const padding = (size: number) => Buffer.alloc((512 - (size % 512)) % 512);

/**
 * export.tar.gz with VERSION, tree/project.json and tree/project/labels.ndjson whose one line is a label
 * with a title of `mib` MiB. Built as a stream of gzip members (a valid gzip stream, as gunzip reads it): the
 * line's body is one compressed MiB of `a` repeated, so the archive stays about a kilobyte per MiB.
 */
function hugeLineArchive(mib: number): Buffer {
  const gz = (b: Buffer) => zlib.gzipSync(b, { level: 9 });
  const version = Buffer.from('0.2.4');
  const projectJson = Buffer.from(JSON.stringify({ description: 'huge line', visibility_level: 0 }));
  const head = Buffer.from('{"title":"');
  const tail = Buffer.from('","color":"#ff0000","type":"ProjectLabel"}\n');
  const MIB = 1 << 20;
  const lineBytes = head.length + mib * MIB + tail.length;
  const parts: Buffer[] = [];
  parts.push(gz(Buffer.concat([header('VERSION', version.length), version, padding(version.length)])));
  parts.push(gz(Buffer.concat([header('tree/project.json', projectJson.length), projectJson, padding(projectJson.length)])));
  parts.push(gz(Buffer.concat([header('tree/project/labels.ndjson', lineBytes), head])));
  const chunk = gz(Buffer.alloc(MIB, 0x61));
  for (let i = 0; i < mib; i++) parts.push(chunk);
  parts.push(gz(Buffer.concat([tail, padding(lineBytes), Buffer.alloc(1024)])));
  return Buffer.concat(parts);
}

test('an archive with a relation line over 1 GB: the import fails once with a message, the server lives, DATA_DIR/tmp is left empty', {
  timeout: 300_000,
}, async (t) => {
  const dataDir = tempDataDir(t, 'hearth-import-process-');
  // an import killed in an earlier life left its extracted archive
  fs.mkdirSync(path.join(dataDir, 'tmp', 'import-1-killed', 'archive', 'tree'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'tmp', 'import-1-killed', 'archive', 'tree', 'project.json'), '{}');
  // removed as the server starts, just after it listens: waited for as DATA_DIR/tmp changes
  const tmp = path.join(dataDir, 'tmp');
  const emptied = new Promise<void>((resolve) => {
    const watcher = fs.watch(tmp, () => {
      if (fs.readdirSync(tmp).length > 0) return;
      watcher.close();
      resolve();
    });
  });
  const server = await startHearth(t, { dataDir, env: { HEARTH_IN_PROCESS_WORKER: 'true', HEARTH_WORKER_POLL_MS: '20' } });
  const { child, port } = server;
  await emptied;
  assert.deepEqual(fs.readdirSync(tmp), []);

  const archive = hugeLineArchive(1024);
  assert.ok(archive.length < 1.5 * 1024 * 1024, `archive of ${archive.length} bytes`);

  const form = new FormData();
  form.set('path', 'huge-line');
  form.set('file', new Blob([new Uint8Array(archive)], { type: 'application/gzip' }), 'export.tar.gz');
  const res = await fetch(`http://127.0.0.1:${port}/api/v4/projects/import`, { method: 'POST', headers: { 'private-token': TOKEN }, body: form });
  assert.equal(res.status, 201, await res.clone().text());
  const { id } = (await res.json()) as { id: number };

  // the import's end, or the process's
  let status: { import_status: string; import_error: string | null } | null = null;
  const poll = (async () => {
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/api/v4/projects/${id}/import`, { headers: { 'private-token': TOKEN } });
      status = (await r.json()) as typeof status;
      if (status!.import_status === 'failed' || status!.import_status === 'finished') return 'ended';
      await new Promise((r) => setTimeout(r, 100));
    }
  })().catch((e) => `polling failed: ${e}`);
  const ended = await Promise.race([poll, server.exited.then(({ code }) => `the server exited (${code}): ${server.output().slice(-2000)}`)]);
  assert.equal(ended, 'ended');
  assert.deepEqual(
    { import_status: status!.import_status, import_error: status!.import_error },
    { import_status: 'failed', import_error: 'JSON exceeds 50 MB limit in labels.ndjson' },
  );

  // the process lives and answers
  assert.equal(child.exitCode, null);
  assert.equal((await fetch(`http://127.0.0.1:${port}/-/health`)).status, 200);
  // nothing of the import is left in DATA_DIR/tmp
  assert.deepEqual(fs.readdirSync(path.join(dataDir, 'tmp')), []);
  // its job ran once and is over: nothing left for another round to take
  const db = new SQLite(path.join(dataDir, 'hearth.sqlite3'), { readonly: true });
  t.after(() => db.close());
  const jobs = () => db.prepare("SELECT state, attempts FROM jobs WHERE kind = 'project_import'").all() as { state: string }[];
  while (jobs()[0]?.state === 'running') await new Promise((r) => setTimeout(r, 50)); // the job is released after the import's end
  assert.deepEqual(jobs(), [{ state: 'done', attempts: 1 }]);
  const labels = db.prepare('SELECT COUNT(*) AS n FROM labels WHERE project_id = ?').get(id);
  assert.deepEqual(labels, { n: 0 });
});
