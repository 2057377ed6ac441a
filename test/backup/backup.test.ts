// hearth backup create / restore: a server populated through the APIs is backed up (the CLI, a process of
// its own, as an administrator runs it) while a writer pushes, restored into a fresh data directory and
// database, and compared with the original through the APIs and git. Also: a corrupt archive and a
// non-empty target are refused with nothing changed, and a kill -9 during create leaves no archive under
// the final name. Runs on SQLite, and on PostgreSQL with DATABASE_URL_TEST.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import * as tar from 'tar';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { createDb } from '../../src/db/connect.ts';
import { buildApp } from '../../src/app.ts';
import { BackupError, createBackup } from '../../src/backup/create.ts';
import { restoreBackup } from '../../src/backup/restore.ts';
import { runBackupCommand } from '../../src/backup/cli.ts';
import { EXTERNAL_URL, ROOT_TOKEN, type TestApp } from '../helpers/build-app.ts';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { runGit, tmpDir } from '../helpers/git.ts';
import { AS_ROOT, poComponent } from '../helpers/translation.ts';

const BIN = path.resolve('bin/hearth.js');
const PG_URL = process.env.DATABASE_URL_TEST || null;
const quiet = { write: () => true, isTTY: false };

/** The environment of the CLI for the data of `ctx` (its PostgreSQL schema through the URL's options). */
function cliEnv(ctx: TestApp): NodeJS.ProcessEnv {
  const url = PG_URL && ctx.pgSchema ? `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${ctx.pgSchema}`)}` : '';
  return { ...process.env, DATA_DIR: ctx.dataDir, DATABASE_URL: url, LOG_LEVEL: 'silent', HEARTH_ROOT_TOKEN: '', HEARTH_ROOT_PASSWORD: '' };
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function freshSchema(t: { after(fn: () => unknown): void }): Promise<string | undefined> {
  if (!PG_URL) return undefined;
  const schema = `bk_${crypto.randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  t.after(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });
  return schema;
}

async function tablesIn(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL! });
  await client.connect();
  const r = await client.query('select count(*)::int as n from information_schema.tables where table_schema = $1', [schema]);
  await client.end();
  return r.rows[0].n;
}

function targetConfig(dataDir: string) {
  return loadConfig({ DATA_DIR: dataDir, EXTERNAL_URL, LOG_LEVEL: 'silent' }, { databaseUrl: PG_URL });
}

async function json(app: TestApp['app'], url: string, headers: Record<string, string>) {
  const res = await app.inject({ method: 'GET', url, headers });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json();
}

async function lsRemote(url: string): Promise<string> {
  return (await runGit(os.tmpdir(), ['ls-remote', url])).stdout;
}

test('backup create while a writer pushes, restore into a fresh target, compare through the API and git', async (t) => {
  let mark = Date.now();
  const phase = (name: string) => {
    t.diagnostic(`${name}: ${Date.now() - mark} ms`);
    mark = Date.now();
  };
  const src = await startTestServer(t);
  const root = src.root;
  const post = async (url: string, payload: unknown, status = 201) => {
    const res = await src.app.inject({ method: 'POST', url, headers: root, payload: payload as object });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json();
  };
  // ---- populate through the APIs
  const user = await post('/api/v4/users', { email: 'ada@example.com', username: 'ada', name: 'Ada', password: 'correct-horse-9', skip_confirmation: true });
  const pat = await post(`/api/v4/users/${user.id}/personal_access_tokens`, { name: 'ci', scopes: ['api'] });
  const alpha = await post('/api/v4/projects', { name: 'alpha', initialize_with_readme: true });
  const empty = await post('/api/v4/projects', { name: 'empty' });
  const writer = await post('/api/v4/projects', { name: 'writer', initialize_with_readme: true });
  await post('/api/v4/hooks', { url: 'http://hooks.example/system', push_events: true });
  await post(`/api/v4/projects/${alpha.id}/hooks`, { url: 'http://hooks.example/alpha', push_events: true, token: 'hook-secret' });
  const settings = await src.app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { signup_enabled: false, default_projects_limit: 7 },
  });
  assert.equal(settings.statusCode, 200, settings.body);
  await poComponent(t, src);
  // a branch and a tag pushed to alpha over HTTP
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(src.base, alpha.path_with_namespace, 'root', ROOT_TOKEN), 'alpha']);
  const alphaDir = path.join(work, 'alpha');
  fs.writeFileSync(path.join(alphaDir, 'feature.txt'), 'feature\n');
  await runGit(alphaDir, ['checkout', '-q', '-b', 'feature']);
  await runGit(alphaDir, ['add', '.']);
  await runGit(alphaDir, ['commit', '-q', '-m', 'Feature']);
  await runGit(alphaDir, ['tag', 'v1.0']);
  await runGit(alphaDir, ['push', '-q', 'origin', 'feature', 'v1.0']);
  // blobs (uploads, artifacts, exports live there): one large enough that writing the archive takes a while
  const blob = path.join(src.config.blobStore.kind === 'local' ? src.config.blobStore.dir : '', 'test', 'large.bin');
  fs.mkdirSync(path.dirname(blob), { recursive: true });
  fs.writeFileSync(blob, crypto.randomBytes(24 * 1024 * 1024));

  phase('populate');
  // ---- backup create (the CLI) while a writer pushes to `writer` in a loop
  await runGit(work, ['clone', '-q', cloneUrl(src.base, writer.path_with_namespace, 'root', ROOT_TOKEN), 'writer']);
  const writerDir = path.join(work, 'writer');
  let writing = true;
  let pushes = 0;
  const loop = (async () => {
    for (let i = 0; writing; i++) {
      fs.writeFileSync(path.join(writerDir, 'counter.txt'), `${i}\n`);
      await runGit(writerDir, ['commit', '-q', '-a', '-m', `Write ${i}`]).catch(async () => {
        await runGit(writerDir, ['add', '.']);
        await runGit(writerDir, ['commit', '-q', '-m', `Write ${i}`]);
      });
      await runGit(writerDir, ['push', '-q', 'origin', 'main']);
      pushes++;
    }
  })();
  // and commits through the API to its branch `api` (journaled as pushes are: held off by the fence too)
  let apiCommits = 0;
  const apiLoop = (async () => {
    for (let i = 0; writing; i++) {
      await post(`/api/v4/projects/${writer.id}/repository/commits`, {
        branch: 'api',
        ...(i === 0 ? { start_branch: 'main' } : {}),
        commit_message: `API write ${i}`,
        actions: [{ action: i === 0 ? 'create' : 'update', file_path: 'api.txt', content: `${i}\n` }],
      });
      apiCommits++;
    }
  })();
  while (pushes < 2 || apiCommits < 2) await new Promise((r) => setTimeout(r, 20));
  const archive = path.join(tmpDir(t), 'hearth.tar');
  const pushesBefore = pushes;
  const apiCommitsBefore = apiCommits;
  const created = await cli(['backup', 'create', '--output', archive], cliEnv(src));
  const pushesDuring = pushes - pushesBefore;
  const apiCommitsDuring = apiCommits - apiCommitsBefore;
  writing = false;
  await loop;
  await apiLoop;
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /backup create: done, \d+\/\d+, \d+ repositories, writes held off/);
  assert.match(created.stderr, new RegExp(`backup create: ${archive.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes\\)`));
  assert.ok(fs.existsSync(archive) && !fs.existsSync(`${archive}.partial`));
  assert.deepEqual(
    fs.readdirSync(path.dirname(archive)).filter((f) => f.startsWith('.')),
    [],
    'no staging directory left',
  );
  t.diagnostic(`pushes while the backup ran: ${pushesDuring}, API commits: ${apiCommitsDuring}`);

  phase('backup create');
  // ---- restore into a fresh data directory and database
  const target = path.join(tmpDir(t), 'data');
  const schema = await freshSchema(t);
  const cfg = targetConfig(target);
  const lines: string[] = [];
  const manifest = await restoreBackup(cfg, archive, { db: { pgSchema: schema }, out: { write: (s: string) => lines.push(s), isTTY: false } });
  assert.match(lines.join(''), /backup verify: done, \d+\/\d+, every checksum matches/);
  assert.equal(manifest.dialect, PG_URL ? 'postgres' : 'sqlite');
  assert.deepEqual(
    Object.keys(manifest.files).filter((m) => m.startsWith('db/') && !m.endsWith('.jsonl')),
    PG_URL ? ['db/sequences.json'] : ['db/hearth.sqlite3'],
  );
  assert.ok(manifest.counts.users >= 2 && manifest.counts.projects >= 4, JSON.stringify(manifest.counts));
  const c2 = await createContainer(cfg, { db: { pgSchema: schema }, log: pino({ level: 'silent' }) });
  await c2.pushes.recover({ scanAll: true });
  const app2 = await buildApp(c2);
  t.after(async () => {
    await app2.close();
    await c2.close();
  });
  await app2.listen({ port: 0, host: '127.0.0.1' });
  const addr = app2.server.address();
  const base2 = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;

  phase('restore and start');
  // users (root's token is a restored hash: it still authenticates), the user's token, hooks, settings
  const strip = (list: { username: string; last_activity_on?: unknown }[]) => list.filter((u) => u.username !== 'root');
  assert.deepEqual(strip(await json(app2, '/api/v4/users?per_page=100', root)), strip(await json(src.app, '/api/v4/users?per_page=100', root)));
  assert.deepEqual(await json(app2, '/api/v4/user', { 'private-token': pat.token }), await json(src.app, '/api/v4/user', { 'private-token': pat.token }));
  assert.deepEqual(await json(app2, '/api/v4/hooks', root), await json(src.app, '/api/v4/hooks', root));
  assert.deepEqual(await json(app2, `/api/v4/projects/${alpha.id}/hooks`, root), await json(src.app, `/api/v4/projects/${alpha.id}/hooks`, root));
  assert.deepEqual(await json(app2, '/api/v4/application/settings', root), await json(src.app, '/api/v4/application/settings', root));
  const others = (list: { id: number }[]) => list.filter((p) => p.id !== writer.id);
  assert.deepEqual(
    others(await json(app2, '/api/v4/projects?per_page=100&order_by=id', root)),
    others(await json(src.app, '/api/v4/projects?per_page=100&order_by=id', root)),
  );
  // translations: the component's translations and units, and its mirror
  for (const url of ['/api/components/hello/po/translations/', '/api/translations/hello/po/cs/units/']) {
    assert.deepEqual(await json(app2, url, AS_ROOT), await json(src.app, url, AS_ROOT));
  }
  assert.ok(fs.readdirSync(path.join(target, 'repositories', '@translation')).some((f) => f.endsWith('.git')));
  // blobs and host keys, byte for byte
  assert.ok(fs.readFileSync(path.join(cfg.blobStore.kind === 'local' ? cfg.blobStore.dir : '', 'test', 'large.bin')).equals(fs.readFileSync(blob)));

  // git: every repository of a project answers the same refs (the writer's: see below), and clones
  const projects = (await json(src.app, '/api/v4/projects?per_page=100&order_by=id', root)) as { id: number; path_with_namespace: string }[];
  assert.ok(projects.length >= 4);
  for (const p of projects) {
    if (p.id === writer.id) continue;
    assert.equal(
      await lsRemote(cloneUrl(base2, p.path_with_namespace, 'root', ROOT_TOKEN)),
      await lsRemote(cloneUrl(src.base, p.path_with_namespace, 'root', ROOT_TOKEN)),
      p.path_with_namespace,
    );
  }
  assert.equal(await lsRemote(cloneUrl(base2, empty.path_with_namespace, 'root', ROOT_TOKEN)), '');
  assert.match(await lsRemote(cloneUrl(base2, alpha.path_with_namespace, 'root', ROOT_TOKEN)), /refs\/heads\/feature\n[\s\S]*refs\/tags\/v1\.0\n/);
  // the writer's pushes: each wholly in or wholly out — the restored branch is one the writer pushed, and
  // the newest push event of the restored database names exactly that commit
  const clone2 = path.join(tmpDir(t), 'writer');
  await runGit(os.tmpdir(), ['clone', '-q', cloneUrl(base2, writer.path_with_namespace, 'root', ROOT_TOKEN), clone2]);
  await runGit(clone2, ['fsck', '--strict']);
  const head2 = (await runGit(clone2, ['rev-parse', 'HEAD'])).stdout.trim();
  await runGit(writerDir, ['merge-base', '--is-ancestor', head2, 'HEAD']);
  const events = (await json(app2, `/api/v4/projects/${writer.id}/events?action=pushed&per_page=100`, root)) as {
    push_data: { commit_to: string; ref: string };
  }[];
  assert.equal(events.find((e) => e.push_data.ref === 'main')?.push_data.commit_to, head2);
  // the API commits likewise: the restored `api` branch is the one the newest `api` push event names
  const apiHead = (await lsRemote(cloneUrl(base2, writer.path_with_namespace, 'root', ROOT_TOKEN))).match(/^([0-9a-f]{40})\trefs\/heads\/api$/m)?.[1];
  assert.equal(events.find((e) => e.push_data.ref === 'api')?.push_data.commit_to, apiHead);
  // the restored server takes pushes
  fs.writeFileSync(path.join(clone2, 'after.txt'), 'after\n');
  await runGit(clone2, ['add', '.']);
  await runGit(clone2, ['commit', '-q', '-m', 'After restore']);
  await runGit(clone2, ['push', '-q', 'origin', 'main']);

  phase('compare');
  // ---- a non-empty target is refused without --force, and nothing changes
  const usersBefore = await c2.db.kysely.selectFrom('users').select('id').execute();
  await assert.rejects(restoreBackup(cfg, archive, { db: { pgSchema: schema }, out: quiet }), (e: Error) => {
    assert.ok(e instanceof BackupError);
    assert.match(
      e.message,
      PG_URL
        ? /^the database is not empty \(it has users or projects\); use --force to replace its contents$/
        : /hearth\.sqlite3 exists; use --force to replace it$/,
    );
    return true;
  });
  assert.deepEqual(await c2.db.kysely.selectFrom('users').select('id').execute(), usersBefore);

  // ---- a corrupt archive (a member changed, the manifest kept) is refused before anything changes
  const unpacked = tmpDir(t);
  await tar.x({ file: archive, cwd: unpacked });
  const member = Object.keys(manifest.files).find((m) => m.startsWith('db/'))!;
  const bytes = fs.readFileSync(path.join(unpacked, member));
  bytes[Math.floor(bytes.length / 2)] ^= 0xff;
  fs.writeFileSync(path.join(unpacked, member), bytes);
  const corrupt = path.join(tmpDir(t), 'corrupt.tar');
  await tar.c({ file: corrupt, cwd: unpacked }, fs.readdirSync(unpacked));
  const target3 = path.join(tmpDir(t), 'data3');
  const schema3 = await freshSchema(t);
  await assert.rejects(restoreBackup(targetConfig(target3), corrupt, { db: { pgSchema: schema3 }, out: quiet }), {
    message: `${corrupt} is corrupt: ${member} does not match its checksum`,
  });
  assert.equal(fs.existsSync(target3), false);
  assert.deepEqual(fs.readdirSync(path.dirname(target3)), []);
  if (schema3) assert.equal(await tablesIn(schema3), 0);
  // a truncated archive
  const truncated = path.join(path.dirname(corrupt), 'truncated.tar');
  fs.writeFileSync(truncated, fs.readFileSync(archive).subarray(0, 20_000));
  await assert.rejects(
    restoreBackup(targetConfig(target3), truncated, { db: { pgSchema: schema3 }, out: quiet }),
    /^Error: .*truncated\.tar (is not a readable backup archive|is corrupt)/,
  );
  assert.equal(fs.existsSync(target3), false);

  // ---- --force: a target with something in it is refused without, restored with it
  fs.mkdirSync(target3);
  fs.writeFileSync(path.join(target3, 'stale.txt'), 'x');
  await assert.rejects(restoreBackup(targetConfig(target3), archive, { db: { pgSchema: schema3 }, out: quiet }), {
    message: `${target3} is not empty (stale.txt); use --force to replace its contents`,
  });
  if (schema3) assert.equal(await tablesIn(schema3), 0);
  await restoreBackup(targetConfig(target3), archive, { force: true, db: { pgSchema: schema3 }, out: quiet });
  const db3 = createDb({ databaseUrl: PG_URL, dataDir: target3, pgSchema: schema3 });
  const users3 = await db3.kysely.selectFrom('users').select('id').orderBy('id').execute();
  await db3.close();
  assert.equal(users3.length, manifest.counts.users);

  phase('refusals and --force');
  // ---- kill -9 during create: no archive under the final name (once early, once while the archive is written)
  // both at once (each waits for the other's fence): the CLI's start is most of the time
  const killedDirs = await Promise.all(
    (['first progress line', 'archive being written'] as const).map(async (when) => {
      const out = path.join(tmpDir(t), 'killed.tar');
      const child = spawn(process.execPath, [BIN, 'backup', 'create', '--output', out], { env: cliEnv(src), stdio: ['ignore', 'ignore', 'pipe'] });
      const exited = new Promise<string | null>((r) => child.once('exit', (_code, signal) => r(signal)));
      if (when === 'first progress line') await new Promise((r) => child.stderr.once('data', r));
      else {
        child.stderr.resume();
        while (!fs.existsSync(`${out}.partial`) && child.exitCode === null) await new Promise((r) => setTimeout(r, 1));
      }
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL', `killed at ${when}`);
      assert.equal(fs.existsSync(out), false, `no archive under the final name (${when})`);
      return path.dirname(out);
    }),
  );
  // the next create removes what the killed ones left (their staging directories and partial files)
  const again = await cli(['backup', 'create', '--output', path.join(killedDirs[1], 'killed.tar')], cliEnv(src));
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(fs.readdirSync(killedDirs[1]), ['killed.tar']);
  phase('kill -9 and create again');
});

test('backup create refuses a data directory without a database, and creates nothing', async (t) => {
  const dir = path.join(tmpDir(t), 'none');
  await assert.rejects(createBackup(loadConfig({ DATA_DIR: dir }, { databaseUrl: null }), { out: quiet }), {
    message: `no database at ${dir}/hearth.sqlite3: DATA_DIR is not a Hearth data directory (set DATABASE_URL for PostgreSQL)`,
  });
  assert.equal(fs.existsSync(dir), false);
});

test('backup command line: usage and refusals', async () => {
  const err: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => err.push(String(s)) > 0) as typeof process.stderr.write;
  try {
    assert.equal(await runBackupCommand(undefined, []), 2);
    assert.equal(await runBackupCommand('dump', []), 2);
    assert.equal(await runBackupCommand('create', ['--out', 'x']), 2);
    assert.equal(await runBackupCommand('restore', []), 2);
    assert.equal(await runBackupCommand('restore', ['a.tar', 'b.tar']), 2);
  } finally {
    process.stderr.write = write;
  }
  const usage = 'usage: hearth backup create [--output FILE]\n       hearth backup restore FILE [--force]\n';
  assert.deepEqual(err, [
    `hearth backup: missing command (create or restore)\n${usage}`,
    `hearth backup: unknown command "dump"\n${usage}`,
    `hearth backup: unknown option "--out" for create\n${usage}`,
    `hearth backup: restore takes exactly one FILE\n${usage}`,
    `hearth backup: restore takes exactly one FILE\n${usage}`,
  ]);
});
