// Git answers named by commit ids never change, so reading them again spawns no git: a page of the commits
// list of a ref (resolved to its commit each time, so a moved branch lists its new commits), a merge request's
// commits and changes, a commit's diff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../../helpers/build-app.ts';
import { workTree } from '../../../helpers/git.ts';
import { gitCommands } from '../../../../src/metrics/registry.ts';
import { KEPT_DIFF_MAX_CHARS } from '../../../../src/domain/repository/compare.ts';

/** git processes started so far in this process */
const gitStarted = async () => (await gitCommands.get()).values.reduce((n, v) => n + v.value, 0);

test('the commits list, a merge request’s commits and changes and a commit’s diff cost git once', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const dev = await seed.user({ name: 'Mae Maintainer' });
  const { project, dir } = await seed.repoProject({ visibility: 'public', path: 'kept' });
  await seed.member({ project }, dev, 40);
  const headers = (await seed.token(dev)).headers;
  const wt = workTree(t, dir);
  wt.write('README.md', '# hi\n').commit('Initial');
  wt.write('src/a.txt', 'a\n').commit('Second');
  wt.checkout('feature', true);
  const head = wt.write('f.txt', 'f\n').write('README.md', '# hi there\n').commit('Feature work');
  wt.checkout('main');
  wt.push();
  const P = `/api/v4/projects/${project.id}`;
  const mr = await app.inject({
    method: 'POST',
    url: `${P}/merge_requests`,
    headers,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Feature' },
  });
  assert.equal(mr.statusCode, 201, mr.body);
  await c.merges.idle();

  const urls = [
    `${P}/repository/commits?ref_name=main`,
    `${P}/repository/commits?ref_name=main&path=src`,
    `${P}/merge_requests/1/commits`,
    `${P}/merge_requests/1/changes`,
    `${P}/merge_requests/1/diffs`,
    `${P}/repository/commits/${head}/diff`,
  ];
  for (const url of urls) {
    const first = await app.inject({ method: 'GET', url, headers });
    assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
    await c.merges.idle();
    const before = await gitStarted();
    const again = await app.inject({ method: 'GET', url, headers });
    await c.merges.idle();
    assert.equal((await gitStarted()) - before, 0, `git processes of ${url} read again`);
    assert.equal(again.body, first.body, url);
  }
  assert.deepEqual(
    JSON.parse((await app.inject({ method: 'GET', url: `${P}/merge_requests/1/commits`, headers })).body).map((x: { title: string }) => x.title),
    ['Feature work'],
  );
  assert.deepEqual(
    JSON.parse((await app.inject({ method: 'GET', url: `${P}/merge_requests/1/changes`, headers })).body).changes.map((x: { new_path: string }) => x.new_path),
    ['README.md', 'f.txt'],
  );

  // a branch that moves lists its new commit: the ref is resolved on every request, the page kept by commit id
  const moved = await app.inject({
    method: 'POST',
    url: `${P}/repository/commits`,
    headers,
    payload: { branch: 'main', commit_message: 'Third', actions: [{ action: 'create', file_path: 'src/b.txt', content: 'b\n' }] },
  });
  assert.equal(moved.statusCode, 201, moved.body);
  for (const [url, titles] of [
    [`${P}/repository/commits?ref_name=main`, ['Third', 'Second', 'Initial']],
    [`${P}/repository/commits?ref_name=main&path=src`, ['Third', 'Second']],
  ] as const) {
    const r = await app.inject({ method: 'GET', url, headers });
    assert.deepEqual(
      JSON.parse(r.body).map((x: { title: string }) => x.title),
      titles,
      url,
    );
  }
});

test('a diff whose patches pass the kept size is computed again on each read, not kept', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const owner = await seed.user({ name: 'Oona Owner' });
  const { project, dir } = await seed.repoProject({ visibility: 'public', path: 'big-diff' });
  await seed.member({ project }, owner, 40);
  const headers = (await seed.token(owner)).headers;
  const wt = workTree(t, dir);
  wt.write('README.md', '# hi\n').commit('Initial');
  // 12 files of 190 lines of 1,000 characters: each patch under diff_max_patch_bytes, together past the kept size
  for (let f = 0; f < 12; f++) wt.write(`big/${f}.txt`, Array.from({ length: 190 }, (_, l) => `${String(l).padStart(4, '0')}${'x'.repeat(995)}\n`).join(''));
  const sha = wt.commit('Big');
  wt.push();
  const url = `/api/v4/projects/${project.id}/repository/commits/${sha}/diff?per_page=100`;
  const diffs = async () => (await gitCommands.get()).values.find((v) => v.labels.command === 'diff')?.value ?? 0;
  const first = await app.inject({ method: 'GET', url, headers });
  assert.equal(first.statusCode, 200, first.body);
  const files = JSON.parse(first.body) as { diff: string; too_large: boolean }[];
  assert.equal(files.length, 12);
  assert.ok(files.reduce((n, f) => n + f.diff.length, 0) > KEPT_DIFF_MAX_CHARS);
  const before = await diffs();
  const again = await app.inject({ method: 'GET', url, headers });
  assert.equal(again.body, first.body);
  assert.equal((await diffs()) - before, 1, 'the diff ran again');
});
