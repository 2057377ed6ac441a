// CI/CD variables end to end, against `hearth serve` as a real process: a committed .gitlab-ci.yml and no other
// setting makes a push create a pipeline; `hearth runner` runs its job with the instance's, the group's and the
// project's variables (the project's winning, a file variable as a file); a masked value — printed whole and
// printed in two halves with the log sent between them — never appears in the job log, in any answer to a
// Developer, or in the server's own log (at debug level).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, startHearth, TOKEN, tempDataDir } from '../helpers/process.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { cloneUrl } from '../helpers/server.ts';

const SECRET = 'Zx9-masked-S3cret-Value';
const CI_FILE = `job:
  script:
    - echo "level=$LEVEL instance=$INSTANCE_ONLY group=$GROUP_ONLY"
    - cat "$CONFIG_FILE"
    - echo "whole=$MASKED_SECRET"
    - printf 'split=%s' "\${MASKED_SECRET:0:9}"; sleep 2.5; printf '%s\\n' "\${MASKED_SECRET:9}"
    - echo "config=$CI_CONFIG_PATH source=$CI_PIPELINE_SOURCE"
`;

test('a committed .gitlab-ci.yml, variables of three levels, a masked value nowhere', async (t) => {
  const dataDir = tempDataDir(t);
  const p = await startHearth(t, { dataDir, env: { LOG_LEVEL: 'debug', HEARTH_JOB_REQUEST_TIMEOUT_MS: '500' } });
  const root = { 'private-token': TOKEN };
  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = root) => {
    const r = await fetch(`${p.base}/api/v4${url}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    return { status: r.status, text, json: /json/.test(r.headers.get('content-type') ?? '') ? JSON.parse(text) : null };
  };

  const group = (await api('POST', '/groups', { name: 'Vars', path: 'vars' })).json;
  const project = (await api('POST', '/projects', { name: 'app', path: 'app', namespace_id: group.id })).json;
  for (const [url, body] of [
    ['/admin/ci/variables', { key: 'INSTANCE_ONLY', value: 'from-instance' }],
    ['/admin/ci/variables', { key: 'LEVEL', value: 'instance' }],
    [`/groups/${group.id}/variables`, { key: 'LEVEL', value: 'group' }],
    [`/groups/${group.id}/variables`, { key: 'GROUP_ONLY', value: 'from-group' }],
    [`/projects/${project.id}/variables`, { key: 'LEVEL', value: 'project' }],
    [`/projects/${project.id}/variables`, { key: 'MASKED_SECRET', value: SECRET, masked: true, protected: true }],
    [`/projects/${project.id}/variables`, { key: 'CONFIG_FILE', value: 'line one\nline two\n', variable_type: 'file' }],
  ] as const) {
    const r = await api('POST', url, body);
    assert.equal(r.status, 201, `${url} ${r.text}`);
  }
  const dev = (await api('POST', '/users', { username: 'dev', email: 'dev@example.com', name: 'Dev', password: 'dev-password-123' })).json;
  assert.equal((await api('POST', `/projects/${project.id}/members`, { user_id: dev.id, access_level: 30 })).status, 201);
  const devToken = (await api('POST', `/users/${dev.id}/personal_access_tokens`, { name: 'dev', scopes: ['api'] })).json.token;
  const runner = (await api('POST', '/user/runners', { runner_type: 'instance_type', description: 'vars runner' })).json;

  // the push: .gitlab-ci.yml, no setting names it
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(p.base, 'vars/app', 'root', TOKEN), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write('.gitlab-ci.yml', CI_FILE);
  w.commit('CI');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);
  let pipeline: { id: number; source: string } | undefined;
  for (let i = 0; i < 600 && !pipeline; i++) {
    pipeline = (await api('GET', `/projects/${project.id}/pipelines`)).json[0];
    if (!pipeline) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(pipeline, 'a pipeline of the push');
  assert.equal(pipeline.source, 'push');

  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const cli = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'runner', '--url', p.base, '--once', '--builds-dir', buildsDir], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), HEARTH_RUNNER_TOKEN: runner.token },
    timeout: 180_000,
  }).catch((e) => e);
  assert.equal(cli.code ?? 0, 0, `${cli.stdout}\n${cli.stderr}`);

  const [job] = (await api('GET', `/projects/${project.id}/pipelines/${pipeline.id}/jobs`)).json;
  const trace = await api('GET', `/projects/${project.id}/jobs/${job.id}/trace`);
  assert.equal(job.status, 'success', trace.text);
  const log = trace.text;
  assert.match(log, /\nlevel=project instance=from-instance group=from-group\n/);
  assert.match(log, /\nline one\nline two\n/);
  assert.match(log, /\nwhole=\[MASKED\]\n/);
  assert.match(log, /\nsplit=\[MASKED\]\n/);
  assert.match(log, /\nconfig=\.gitlab-ci\.yml source=push\n/);

  // a Developer: no variables, and the job's answers hold no value
  const asDev = { 'private-token': devToken };
  const devVars = await api('GET', `/projects/${project.id}/variables`, undefined, asDev);
  assert.deepEqual([devVars.status, devVars.json], [403, { message: '403 Forbidden' }]);
  const devAnswers = [
    await api('GET', `/projects/${project.id}/jobs/${job.id}/trace`, undefined, asDev),
    await api('GET', `/projects/${project.id}/jobs/${job.id}`, undefined, asDev),
    await api('GET', `/projects/${project.id}/pipelines/${pipeline.id}/variables`, undefined, asDev),
    await api('GET', `/projects/${project.id}/variables/MASKED_SECRET`, undefined, asDev),
  ];
  assert.equal(devAnswers[0]!.status, 200);
  for (const a of devAnswers) assert.ok(!a.text.includes(SECRET) && !a.text.includes(SECRET.slice(9)), a.text);

  // nowhere in the log, the server's or the runner's, or the data on disk (sealed in the database)
  for (const [where, text] of [
    ['job log', log],
    ['server log', p.output()],
    ['runner log', `${cli.stdout}${cli.stderr}`],
  ] as const) {
    assert.ok(!text.includes(SECRET), `${where} holds the masked value`);
    assert.ok(!text.includes(SECRET.slice(9)), `${where} holds the second half of the masked value`);
  }
  for (const f of fs.readdirSync(dataDir).filter((n) => n.startsWith('hearth.sqlite3'))) {
    assert.ok(!fs.readFileSync(path.join(dataDir, f)).includes(SECRET), `${f} holds the value in clear`);
  }
});
