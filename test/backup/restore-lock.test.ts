// `hearth backup restore --force` into the data directory of a running server is refused (it would replace
// the files under the server, and what the server acknowledged afterwards would be gone after its restart):
// serve holds DATA_DIR/locks/<host>-<pid>.json, restore names the process and changes nothing; allowed once
// the server stopped, and over the stale lock of a server killed with -9. Real processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { groupsOf, runHearth as hearth, startHearth, tempDataDir, TOKEN } from '../helpers/process.ts';

const createGroup = (base: string, name: string) =>
  fetch(`${base}/api/v4/groups`, {
    method: 'POST',
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ name, path: name.toLowerCase() }),
  });

const locks = (dataDir: string) => (fs.existsSync(path.join(dataDir, 'locks')) ? fs.readdirSync(path.join(dataDir, 'locks')).sort() : []);

test('backup restore is refused while serve holds the data directory, allowed after it stopped and over a stale lock', { timeout: 240_000 }, async (t) => {
  const dataDir = tempDataDir(t, 'hearth-restore-lock-');
  const archive = path.join(tempDataDir(t, 'hearth-restore-archive-'), 'backup.tar');
  const server = await startHearth(t, { dataDir });
  const lockFile = `${os.hostname()}-${server.pid}.json`;
  assert.deepEqual(locks(dataDir), [lockFile]);
  const lock = JSON.parse(fs.readFileSync(path.join(dataDir, 'locks', lockFile), 'utf8'));
  assert.deepEqual(Object.keys(lock), ['pid', 'host', 'command', 'since']);
  assert.deepEqual([lock.pid, lock.host, lock.command], [server.pid, os.hostname(), 'serve']);

  assert.equal((await createGroup(server.base, 'Before')).status, 201);
  const created = await hearth(dataDir, ['backup', 'create', '--output', archive]);
  assert.equal(created.code, 0, created.stderr);
  assert.equal((await createGroup(server.base, 'After')).status, 201);

  // refused: the message names the process; nothing changed (same database file, the server still has both groups)
  const inode = fs.statSync(path.join(dataDir, 'hearth.sqlite3')).ino;
  const refused = await hearth(dataDir, ['backup', 'restore', archive, '--force']);
  assert.deepEqual(refused, {
    code: 1,
    stdout: '',
    stderr: `hearth backup restore: ${dataDir} is in use by hearth serve (pid ${server.pid}, since ${lock.since}); stop it first (nothing was changed)\n`,
  });
  assert.equal(fs.statSync(path.join(dataDir, 'hearth.sqlite3')).ino, inode);
  assert.deepEqual(locks(dataDir), [lockFile]);
  const listed = await fetch(`${server.base}/api/v4/groups`, { headers: { 'private-token': TOKEN } });
  assert.deepEqual(((await listed.json()) as { path: string }[]).map((g) => g.path).sort(), ['after', 'before']);

  // the server stops: its lock goes with it, and the restore goes through
  server.child.kill('SIGTERM');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  assert.deepEqual(locks(dataDir), []);
  const restored = await hearth(dataDir, ['backup', 'restore', archive, '--force']);
  assert.equal(restored.code, 0, restored.stderr);
  assert.deepEqual(groupsOf(dataDir), ['before']);
  assert.deepEqual(locks(dataDir), []);

  // kill -9 leaves the lock behind; its process is gone, so it is stale: removed, said, and the restore goes through
  const killed = await startHearth(t, { dataDir });
  const since = JSON.parse(fs.readFileSync(path.join(dataDir, 'locks', `${os.hostname()}-${killed.pid}.json`), 'utf8')).since;
  assert.equal((await createGroup(killed.base, 'Lost')).status, 201);
  killed.child.kill('SIGKILL');
  await killed.exited;
  assert.deepEqual(locks(dataDir), [`${os.hostname()}-${killed.pid}.json`]);
  const overStale = await hearth(dataDir, ['backup', 'restore', archive, '--force']);
  assert.equal(overStale.code, 0, overStale.stderr);
  assert.ok(
    overStale.stderr.startsWith(`backup restore: removed the stale lock of hearth serve (pid ${killed.pid}, since ${since}): that process is gone\n`),
    overStale.stderr,
  );
  assert.deepEqual(groupsOf(dataDir), ['before']);
  assert.deepEqual(locks(dataDir), []);
});

test('serve does not start while a restore holds the data directory; worker neither', { timeout: 120_000 }, async (t) => {
  const dataDir = tempDataDir(t, 'hearth-restore-lock-');
  // a restore in progress: this test process stands for it
  fs.mkdirSync(path.join(dataDir, 'locks'));
  const since = new Date().toISOString();
  const holder = `${os.hostname()}-${process.pid}.json`;
  fs.writeFileSync(path.join(dataDir, 'locks', holder), JSON.stringify({ pid: process.pid, host: os.hostname(), command: 'backup restore', since }));
  for (const command of ['serve', 'worker']) {
    const r = await hearth(dataDir, [command]);
    assert.deepEqual(r, {
      code: 1,
      stdout: '',
      stderr: `hearth: ${dataDir} is being restored by hearth backup restore (pid ${process.pid}, since ${since}); start ${command} when it has finished\n`,
    });
  }
  assert.deepEqual(fs.readdirSync(dataDir), ['locks']);
  assert.deepEqual(locks(dataDir), [holder]);

  // a lock of another host (a shared volume) cannot be checked: it holds, and the message says which file to delete
  fs.rmSync(path.join(dataDir, 'locks', holder));
  const other = path.join(dataDir, 'locks', 'other-host-77.json');
  fs.writeFileSync(other, JSON.stringify({ pid: 77, host: 'other-host', command: 'worker', since }));
  const refused = await hearth(dataDir, ['backup', 'restore', path.join(dataDir, 'no-such.tar'), '--force']);
  assert.deepEqual(refused, {
    code: 1,
    stdout: '',
    stderr:
      `hearth backup restore: ${dataDir} is in use by hearth worker (pid 77 on other-host, since ${since}); stop it first (nothing was changed); ` +
      `a lock of another host cannot be checked from here: if that process is gone, delete ${other}\n`,
  });
  assert.deepEqual(locks(dataDir), ['other-host-77.json']);
});
