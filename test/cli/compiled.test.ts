// The compiled build as an administrator runs it: `npm start` in a copy of the package whose node_modules
// has no tsx and no esbuild (as after `npm ci` and deleting them), so nothing can fall back to the
// TypeScript loader. It serves the API, web pages with highlighting (the worker thread too) and git over
// HTTP; then SIGTERM to npm drains a request in flight, and npm, node and every child exit, status 0.
// dist/ is the one `npm ci` built when it is current; else CI builds one in the copy and elsewhere the test is skipped.
// Both databases: the process under test is the build and the command line; the server runs on SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { currentBuild, sourceState } from '../../bin/source-state.js';

const run = promisify(execFile);
const ROOT = path.resolve('.');
const TOKEN = 'glpat-compiled-build-root';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A copy of the package: package.json, bin/, src/ (times kept), dist/; node_modules links every package but the loader's. */
async function packageWithoutLoader(dir: string): Promise<void> {
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  fs.copyFileSync(path.join(ROOT, 'tsconfig.build.json'), path.join(dir, 'tsconfig.build.json'));
  for (const d of ['bin', 'src']) fs.cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true, preserveTimestamps: true });
  const nm = path.join(dir, 'node_modules');
  fs.mkdirSync(nm);
  const skip = new Set(['tsx', 'esbuild', '@esbuild', '.bin', '.package-lock.json']);
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (!skip.has(name)) fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(nm, name));
  }
  if (distIsCurrent()) {
    fs.cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
    // the copies' times are not the originals' to the sub-millisecond: dist/ is current for the copy of src/ as it is for src/
    const built = JSON.parse(fs.readFileSync(path.join(dir, 'dist', 'build.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'dist', 'build.json'), JSON.stringify({ ...built, ...sourceState(path.join(dir, 'src')) }));
  } else {
    await run(process.execPath, [path.join(dir, 'bin', 'build.js')], { cwd: dir });
  }
}

/** dist/ built after the last change under src/ (as `npm ci` leaves it). */
function distIsCurrent(): boolean {
  return currentBuild(ROOT) !== null;
}

/** Processes (of this user) whose environment names `dataDir`: the server and anything it started. */
function processesOf(dataDir: string): number[] {
  const found: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DATA_DIR=${dataDir}`)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

test('npm start without tsx and esbuild: compiled code serves the API, highlighted pages, git; SIGTERM drains and exits 0', async (t) => {
  // CI (npm ci) has a current dist/; on a developer's machine after an edit, building a copy takes minutes
  if (!distIsCurrent() && !process.env.CI) {
    t.skip('dist/ is older than src/: `npm run build` first (CI builds it, or builds a copy)');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-compiled-'));
  const dataDir = path.join(dir, 'data');
  let npm: ChildProcess | null = null;
  t.after(() => {
    for (const pid of processesOf(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await packageWithoutLoader(dir);
  // the loader really is out of reach from the copy
  await assert.rejects(run(process.execPath, ['--input-type=module', '-e', "await import('tsx/esm/api')"], { cwd: dir }), /ERR_MODULE_NOT_FOUND/);
  await assert.rejects(run(process.execPath, ['--input-type=module', '-e', "await import('esbuild')"], { cwd: dir }), /ERR_MODULE_NOT_FOUND/);

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  for (const k of Object.keys(env)) if (k.startsWith('npm_') || k === 'NODE_OPTIONS' || k === 'HEARTH_DEV') delete env[k];
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    EXTERNAL_URL: base,
    DATABASE_URL: '',
    HEARTH_SSH_PORT: '0',
    HEARTH_ROOT_TOKEN: TOKEN,
    LOG_LEVEL: 'debug', // each request is logged as it starts: the shutdown below waits for that
  });
  const started = Date.now();
  npm = spawn('npm', ['start', '--silent'], { cwd: dir, env });
  let log = '';
  npm.stdout!.on('data', (d) => (log += d));
  npm.stderr!.on('data', (d) => (log += d));
  let ready = false;
  for (let i = 0; i < 600 && !ready && npm.exitCode === null; i++) {
    ready = await fetch(`${base}/-/readiness`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(ready, `the server did not start (exit ${npm.exitCode}):\n${log}`);
  t.diagnostic(`npm start to ready: ${Date.now() - started} ms`);
  // one node under npm, running dist/main.js (not the sources)
  const pids = processesOf(dataDir);
  const cmdlines = pids.map((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' '));
  assert.ok(
    cmdlines.some((c) => c.endsWith('bin/hearth.js serve')),
    cmdlines.join('\n'),
  );
  assert.ok(!log.includes('tsx is not installed'), log);

  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const version = await api('GET', '/version');
  assert.deepEqual(version, { status: 200, body: { version: '17.0.0', revision: 'hearth' } });
  const project = await api('POST', '/projects', { name: 'built', visibility: 'public' });
  assert.equal(project.status, 201, JSON.stringify(project.body));
  const big = Array.from({ length: 3000 }, (_, i) => `export const v${i} = ${i}; // line ${i}`).join('\n');
  const commit = await api('POST', `/projects/${project.body.id}/repository/commits`, {
    branch: 'main',
    commit_message: 'two files',
    actions: [
      { action: 'create', file_path: 'small.ts', content: 'export function hello(): string {\n  return "<b>";\n}\n' },
      { action: 'create', file_path: 'big.ts', content: big },
    ],
  });
  assert.equal(commit.status, 201, JSON.stringify(commit.body));

  // web pages: the JSX runtime of dist/, highlighting on the event loop and on the worker thread
  const small = await fetch(`${base}/root/built/-/blob/main/small.ts`);
  assert.equal(small.status, 200);
  const smallHtml = await small.text();
  assert.match(smallHtml, /class="hljs-keyword"/);
  assert.match(smallHtml, /&quot;&lt;b&gt;&quot;|"&lt;b&gt;"/);
  let bigHtml = '';
  for (let i = 0, deadline = Date.now() + 60_000; !/hljs-keyword/.test(bigHtml) && (i === 0 || Date.now() < deadline); i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    const r = await fetch(`${base}/root/built/-/blob/main/big.ts`);
    assert.equal(r.status, 200);
    bigHtml = await r.text();
  }
  assert.match(bigHtml, /hljs-keyword/, 'the highlighting worker of dist/ highlighted the big file');
  const css = /href="(\/-\/assets\/[^"]+\.css)"/.exec(smallHtml);
  assert.ok(css, 'the page links its stylesheet');
  assert.equal((await fetch(`${base}${css[1]}`)).status, 200);

  // git over HTTP (async: the server is another process, but the test's event loop keeps reading its log)
  const clone = path.join(dir, 'clone');
  await run('git', ['clone', '-q', `http://root:${TOKEN}@127.0.0.1:${port}/root/built.git`, clone]);
  assert.deepEqual(fs.readdirSync(clone).sort(), ['.git', 'big.ts', 'small.ts']);

  // SIGTERM while a request is in flight: its headers are in, its body comes after the signal
  const body = JSON.stringify({ name: 'during-shutdown' });
  /** the server's "incoming request" lines for POST /api/v4/projects (written once its headers are read) */
  const projectRequests = () => log.split('\n').filter((l) => l.includes('"msg":"incoming request"') && l.includes('"url":"/api/v4/projects"')).length;
  const requestsBefore = projectRequests();
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  let answer = '';
  sock.on('data', (d) => (answer += d));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(
    `POST /api/v4/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nPrivate-Token: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
  );
  for (const deadline = Date.now() + 60_000; projectRequests() === requestsBefore && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
  assert.equal(projectRequests(), requestsBefore + 1, `the server read the headers:\n${log}`);
  const npmExit = exited(npm);
  npm.kill('SIGTERM');
  for (const deadline = Date.now() + 60_000; !log.includes('stopping serve') && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
  assert.ok(log.includes('stopping serve'), `npm forwarded SIGTERM to the server:\n${log}`);
  // new connections are refused now; the one in flight finishes
  await assert.rejects(new Promise((resolve, reject) => net.connect(port, '127.0.0.1').once('connect', resolve).once('error', reject)), /ECONNREFUSED/);
  sock.write(body.slice(0, 5));
  await new Promise((r) => setTimeout(r, 200));
  sock.write(body.slice(5)); // no FIN: a half-closed client loses its answer (Node aborts the request)
  await closed;
  assert.match(answer, /^HTTP\/1\.1 201 Created\r\n/);
  assert.match(answer, /"name":"during-shutdown"/);
  assert.deepEqual(await npmExit, { code: 0, signal: null });
  for (const deadline = Date.now() + 30_000; processesOf(dataDir).length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesOf(dataDir), [], 'no process of the server is left');
});
