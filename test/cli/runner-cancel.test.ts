// The runner and a job that ends early: canceled through the API while its script runs (the trace
// PATCH answers Job-Status and the script is killed), a step timeout, and `hearth runner` stopping
// on SIGTERM without taking jobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { seedPipeline, seedRunner } from '../helpers/ci.ts';
import { workTree } from '../helpers/git.ts';
import { Runner } from '../../src/runner/runner.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a job canceled while it runs: the script is killed, the runner moves on; a job past its timeout fails', async (t) => {
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { c, seed } = srv;
  const owner = await seed.user();
  const { project, dir } = await seed.repoProject({ owner, namespace: await seed.namespaceOf(owner) });
  await seed.member({ project }, owner, 50);
  const { headers } = await seed.token(owner);
  const wt = workTree(t, dir);
  const sha = wt.write('README.md', 'x\n').commit('init');
  wt.push();
  const { token } = await seedRunner(c, { projects: [project] });
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-marker-')), 'after');
  t.after(() => fs.rmSync(path.dirname(marker), { recursive: true, force: true }));
  const { jobs } = await seedPipeline(c, project, { sha, ref: 'main', status: 'pending', user_id: owner.id }, [
    { name: 'slow', options: { script: ['echo started', 'sleep 60', `touch ${marker}`] } },
  ]);
  const job = jobs[0]!;

  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const runnerLog: string[] = [];
  const runner = new Runner({ url: srv.base, token, once: true, buildsDir, log: (l) => runnerLog.push(l), traceIntervalMs: 200 });
  const started = Date.now();
  const running = runner.run();
  await until('the script to start', async () => {
    const r = await srv.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${job.id}/trace`, headers });
    if (Date.now() - started > 100_000) throw new Error(`${r.statusCode} ${r.body} ${runnerLog.join('\n')} ${JSON.stringify(runner.results)}`);
    return r.statusCode === 200 && r.body.includes('started\n');
  });
  const cancel = await srv.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/${job.id}/cancel`, headers });
  assert.equal(cancel.statusCode, 201, cancel.body);
  const canceledAt = Date.now();
  await running;
  // the sleep was killed: it would have taken a minute (the bound leaves a loaded machine its time)
  assert.ok(Date.now() - canceledAt < 45_000, `the sleep was killed (${Date.now() - canceledAt} ms)`);
  assert.deepEqual(runner.results, [{ id: job.id, result: { state: 'failed', failureReason: 'job_canceled' } }]);
  const row = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
  assert.equal(row.status, 'canceled');
  assert.ok(!fs.existsSync(marker), 'the rest of the script never ran');
  assert.deepEqual(fs.readdirSync(buildsDir), ['.runner_system_id']);

  // a job whose runner timeout is 2 seconds
  await c.db.kysely.updateTable('ci_runners').set({ maximum_timeout: 2 }).execute();
  const timed = await seedPipeline(c, project, { sha, ref: 'main', status: 'pending', user_id: owner.id }, [
    { name: 'too-slow', options: { script: ['sleep 60'] } },
  ]);
  const r2 = new Runner({ url: srv.base, token, once: true, buildsDir, log: () => {} });
  const t0 = Date.now();
  await r2.run();
  const after = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', timed.jobs[0]!.id).executeTakeFirstOrThrow();
  assert.deepEqual([after.status, after.failure_reason], ['failed', 'job_execution_timeout']);
  assert.ok(Date.now() - t0 < 45_000, `ended after ${Date.now() - t0} ms, not after the minute of the script`);
  const trace = await srv.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${after.id}/trace`, headers });
  assert.match(trace.body, /ERROR: Job failed: execution took longer than 2s seconds/);
  // this process's keep-alive sockets go now, not at the server's keep-alive timeout when the app closes
  srv.app.server.closeAllConnections();
});

test('hearth runner: stops on SIGTERM; refuses a missing token; a wrong token is an error', async (t) => {
  const srv = await startTestServer(t);
  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const { token } = await seedRunner(srv.c);
  const run = (args: string[], env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'runner', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: os.tmpdir(), ...env },
    });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    const done = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    return { child, done, stderr: () => stderr };
  };

  const r = run(['--url', srv.base, '--token', token, '--builds-dir', buildsDir]);
  // it polls (jobs/request long-polls): then SIGTERM
  await until('the first contact', async () => {
    const row = await srv.c.db.kysely.selectFrom('ci_runners').select('contacted_at').executeTakeFirstOrThrow();
    return row.contacted_at;
  });
  r.child.kill('SIGTERM');
  const out = await r.done;
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stderr, /stopping/);

  const missing = await run(['--url', srv.base, '--config', path.join(buildsDir, 'none.json')]).done;
  assert.deepEqual([missing.code, missing.stderr], [1, 'hearth: --token (or HEARTH_RUNNER_TOKEN, or `hearth runner register`) is required\n']);
  const bad = await run(['--url', srv.base, '--once', '--builds-dir', buildsDir], { HEARTH_RUNNER_TOKEN: 'glrt-wrong' }).done;
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Checking for jobs\.\.\. forbidden \(check the runner token\)/);
  const usage = await run(['--bogus']).done;
  // a usage error: one line naming the option, the command's usage, exit status 2
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^hearth runner: unknown option --bogus\nusage: hearth runner \[--url URL\]/);
});

test('hearth runner register: checks a runner token, keeps it in a 0600 config file that a bare `hearth runner` reads', async (t) => {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 0 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-register-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { token, runner } = await seedRunner(srv.c);
  const hearth = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'runner', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: dir, ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => (stdout += b));
      child.stderr.on('data', (b) => (stderr += b));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const config = path.join(dir, 'runner.json');
  // the token from the environment, as the README shows it first
  const ok = await hearth(['register', '--url', srv.base, '--config', config, '--builds-dir', dir], { HEARTH_RUNNER_TOKEN: token });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, `runner ${runner.id} registered with ${srv.base}; its token is in ${config}\nstart it with: hearth runner --config ${config}\n`);
  assert.deepEqual(JSON.parse(fs.readFileSync(config, 'utf8')), { url: srv.base, token });
  assert.equal(fs.statSync(config).mode & 0o777, 0o600);
  const once = await hearth(['--config', config, '--once', '--builds-dir', dir]);
  assert.equal(once.code, 0, once.stderr);
  assert.doesNotMatch(once.stderr, /forbidden|failed/);
  // a token the server does not know: nothing written
  const other = path.join(dir, 'other.json');
  const bad = await hearth(['register', '--url', srv.base, '--token', 'glrt-wrong', '--config', other, '--builds-dir', dir]);
  assert.deepEqual([bad.code, bad.stderr], [1, 'hearth: the server does not know this runner token\n']);
  assert.equal(fs.existsSync(other), false);
});
