// Crash safety of pushes: a server killed (SIGKILL) after git moved a ref and before the push's events
// were written delivers those events after a restart, once; a server killed while git waited to move a
// ref leaves the ref where it was and no event; the quarantine folder of a killed push is removed at
// start. Real processes (`node bin/hearth.js serve`), real `git push`, a real port; SQLite, and
// PostgreSQL (a fresh database) when DATABASE_URL_TEST is set.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startSink, type Sink } from '../helpers/sink.ts';
import { fixtureEnv } from '../helpers/git.ts';
import { freePort, kill9, startHearth, tempDataDir, TOKEN, until } from '../helpers/process.ts';
import { RepositoryStore } from '../../src/git/storage.ts';

/** `git push`, started in the background: resolves with its exit code and output. */
function gitPush(cwd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['push', ...args], { cwd, env: fixtureEnv() });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    child.on('close', (code) => resolve({ code, out }));
  });
}

const pushesOf = (sink: Sink, ref?: string) =>
  sink.received.filter(
    (r) => ['push', 'tag_push', 'repository_update'].includes(r.json?.event_name) && (ref === undefined || r.json.ref === ref || r.json.refs?.includes(ref)),
  );

async function scenario(t: TestContext, databaseUrl: string): Promise<void> {
  const dataDir = tempDataDir(t, 'hearth-push-crash-');
  const sink = await startSink(t);
  const port = await freePort();
  /** a life of the server on this DATA_DIR, database and port, with a fault's pause (or none) */
  const startServer = (fault?: string) =>
    startHearth(t, {
      dataDir,
      port,
      env: { DATABASE_URL: databaseUrl, HEARTH_IN_PROCESS_WORKER: 'true', HEARTH_WORKER_POLL_MS: '20', ...(fault ? { HEARTH_TEST_FAULT: fault } : {}) },
    });
  const api = (method: string, url: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  // first life: the push stops after receive-pack moved the ref, before its events are written
  const first = await startServer('pause-before-push-events');
  assert.equal(
    (await api('POST', '/hooks', { url: `${sink.url}/push`, push_events: true, tag_push_events: true, repository_update_events: true })).status,
    201,
  );
  const created = await api('POST', '/projects', { name: 'Crash', path: 'crash' });
  assert.equal(created.status, 201);
  const project = (await created.json()) as { id: number; path_with_namespace: string };
  const bare = path.join(dataDir, 'repositories/default', RepositoryStore.diskPath(project.id));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-push-crash-wt-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const g = (args: string[]) =>
    execFileSync('git', args, {
      cwd: work,
      env: fixtureEnv({ GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' }),
    })
      .toString()
      .trim();
  g(['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(work, 'README.md'), '# crash\n');
  g(['add', '.']);
  g(['commit', '-q', '-m', 'first']);
  const sha = g(['rev-parse', 'HEAD']);
  const url = `http://root:${TOKEN}@127.0.0.1:${port}/${project.path_with_namespace}.git`;

  const pushing = gitPush(work, [url, 'main']);
  await first.waitForLine((l) => l.msg === 'hearth test fault: pause-before-push-events: paused');
  await kill9(first);
  const killed = await pushing;
  assert.notEqual(killed.code, 0, killed.out);
  // the ref moved and is visible; no event was written, none delivered
  assert.equal(execFileSync('git', ['--git-dir', bare, 'rev-parse', 'refs/heads/main']).toString().trim(), sha);
  assert.equal(pushesOf(sink).length, 0);
  // what a push killed during its upload leaves in the repository
  fs.mkdirSync(path.join(bare, 'objects/tmp_objdir-incoming-Kq3x9Z/pack'), { recursive: true });
  fs.writeFileSync(path.join(bare, 'objects/tmp_objdir-incoming-Kq3x9Z/pack/tmp_pack_aB3dE1'), 'PACK');

  // second life: the journal is replayed at start; the events of the visible ref change are delivered
  const second = await startServer('pause-before-ref-update');
  await until('the replayed events', () => pushesOf(sink).length >= 2);
  // deliveries of one hook may arrive in either order (each is sent on its own)
  const events = pushesOf(sink).map((r) => r.json);
  const push = events.find((e) => e.event_name === 'push');
  const update = events.find((e) => e.event_name === 'repository_update');
  assert.equal(events.length, 2);
  assert.equal(push.event_name, 'push');
  assert.equal(push.ref, 'refs/heads/main');
  assert.equal(push.after, sha);
  assert.equal(push.user_username, 'root');
  assert.equal(push.project.path_with_namespace, project.path_with_namespace);
  assert.equal(update.event_name, 'repository_update');
  assert.deepEqual(update.changes, [{ before: '0'.repeat(40), after: sha, ref: 'refs/heads/main' }]);
  assert.deepEqual(
    fs.readdirSync(path.join(bare, 'objects')).filter((n) => n.includes('incoming')),
    [],
  );
  // nothing left to push
  const again = await gitPush(work, [url, 'main']);
  assert.equal(again.code, 0, again.out);
  assert.match(again.out, /Everything up-to-date/);

  // killed while git waits to move a ref (the update is journaled, not yet made): the ref stays
  g(['checkout', '-q', '-b', 'feature']);
  fs.writeFileSync(path.join(work, 'f.txt'), 'f\n');
  g(['add', '.']);
  g(['commit', '-q', '-m', 'feature']);
  const feature = g(['rev-parse', 'HEAD']);
  const pushing2 = gitPush(work, [url, 'feature']);
  await second.waitForLine((l) => l.msg === 'hearth test fault: pause-before-ref-update: paused');
  await kill9(second);
  assert.notEqual((await pushing2).code, 0);
  // receive-pack outlives the server for a moment: its hook finds the server gone and aborts
  await until('receive-pack to give up', () => !fs.existsSync(path.join(bare, 'refs/heads/feature.lock')));
  assert.equal(fs.existsSync(path.join(bare, 'refs/heads/feature')), false);

  // third life: no event for the update that never happened; the push goes through again
  const third = await startServer();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(pushesOf(sink, 'refs/heads/feature').length, 0);
  const retried = await gitPush(work, [url, 'feature']);
  assert.equal(retried.code, 0, retried.out);
  assert.doesNotMatch(retried.out, /Everything up-to-date/);
  await until('the feature events', () => pushesOf(sink, 'refs/heads/feature').length >= 2);
  assert.equal(pushesOf(sink, 'refs/heads/feature').find((r) => r.json.event_name === 'push')!.json.after, feature);
  // each event once, under its own Idempotency-Key
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(
    pushesOf(sink)
      .map((r) => [r.json.event_name, r.json.ref ?? r.json.refs.join()])
      .sort((a, b) => (a[1] === b[1] ? 0 : a[1] === 'refs/heads/main' ? -1 : 1) || (a[0] === 'push' ? -1 : 1)),
    [
      ['push', 'refs/heads/main'],
      ['repository_update', 'refs/heads/main'],
      ['push', 'refs/heads/feature'],
      ['repository_update', 'refs/heads/feature'],
    ],
  );
  assert.equal(new Set(pushesOf(sink).map((r) => r.headers['idempotency-key'])).size, 4);
  await kill9(third);
}

test('push killed after the ref moved, before its events (SQLite): delivered once after a restart', { timeout: 300_000 }, async (t) => {
  await scenario(t, '');
});

test('push killed after the ref moved, before its events (PostgreSQL): delivered once after a restart', {
  timeout: 300_000,
  skip: !process.env.DATABASE_URL_TEST && 'DATABASE_URL_TEST is not set',
}, async (t) => {
  const base = process.env.DATABASE_URL_TEST!;
  const name = 'hearth_push_crash_' + crypto.randomBytes(5).toString('hex');
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  t.after(async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });
  const u = new URL(base);
  u.pathname = '/' + name;
  await scenario(t, u.toString());
});
