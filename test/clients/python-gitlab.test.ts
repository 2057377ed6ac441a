// The real python-gitlab client against a running server, checked against git on the same
// repository (skipped where python-gitlab is not installed: `apt-get install python3-gitlab`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { workTree } from '../helpers/git.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { startSink } from '../helpers/sink.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

test('python-gitlab: tree, blobs, archives, compare, contributors, merge base, branches, commits and files agree with git', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base } = await startTestServer(t, {}, { selfUrl: true });
  const group = await seed.group();
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private' });
  const wt = workTree(t, dir);
  wt.write('README.md', '# Readme\n');
  for (let d = 0; d < 3; d++) for (let f = 0; f < 6; f++) wt.write(`dir${d}/sub/file${f}.txt`, `file ${d}/${f}\n`);
  wt.commit('Initial');
  wt.checkout('feature', true)
    .write('dir0/feature.txt', 'feature\n')
    .commit('Feature work', { author: { name: 'Bob', email: 'bob@example.com' } });
  wt.checkout('main').write('dir1/main.txt', 'main\n').commit('Main work');
  wt.write('README.md', '# Readme v2\n').commit('Readme again', { author: { name: 'Bob', email: 'bob@example.com' } });
  wt.push();
  const out = await promisify(execFile)(PYTHON, [
    path.join(import.meta.dirname, 'python_gitlab_repository.py'),
    base,
    ROOT_TOKEN,
    String(project.id),
    dir,
  ]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});

test('python-gitlab: system hooks list, create, get, test and delete', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { base, c } = await startTestServer(t, {}, { selfUrl: true });
  await c.worker.drain();
  const sink = await startSink(t);
  const out = await promisify(execFile)(PYTHON, [path.join(import.meta.dirname, 'python_gitlab_hooks.py'), base, ROOT_TOKEN, sink.url]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
  // the test delivery reached the sink with the token
  assert.equal(sink.received.length, 1);
  assert.equal(sink.received[0].url, '/py');
  assert.equal(sink.received[0].headers['x-service-token'], 'py-secret');
  assert.equal(sink.received[0].json.event_name, 'project_create');
});
