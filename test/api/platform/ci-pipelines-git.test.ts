// Pipelines from real git pushes over HTTP: one push of a branch, another branch and a tag creates one
// pipeline each (source push, before_sha), a deletion none, a head commit with [skip ci] none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { runGit, tmpDir } from '../../helpers/git.ts';

test('git pushes over HTTP create pipelines', async (t) => {
  const s = await startTestServer(t);
  const g = await s.seed.group({ path: 'gitci', name: 'GitCI' });
  const { project } = await s.seed.repoProject({ namespace: g, path: 'app' });
  const url = cloneUrl(s.base, 'gitci/app', 'root', ROOT_TOKEN);
  const work = tmpDir(t);
  await runGit(work, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(work, '.service-ci.yml'), 'build:\n  script: make\ntagged:\n  script: release\n  only: [tags]\n');
  await runGit(work, ['add', '.']);
  await runGit(work, ['commit', '-q', '-m', 'ci']);
  const first = (await runGit(work, ['rev-parse', 'HEAD'])).stdout.trim();
  await runGit(work, ['branch', 'feature']);
  await runGit(work, ['tag', '-a', 'v1', '-m', 'v1']);
  await runGit(work, ['push', '-q', url, 'main', 'feature', 'v1']);
  const rows = () => s.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  let pipelines = await rows();
  assert.deepEqual(pipelines.map((p) => [p.ref, p.tag, p.sha, p.source, p.before_sha, p.status]).sort(), [
    ['feature', 0, first, 'push', '0000000000000000000000000000000000000000', 'pending'],
    ['main', 0, first, 'push', '0000000000000000000000000000000000000000', 'pending'],
    ['v1', 1, first, 'push', '0000000000000000000000000000000000000000', 'pending'],
  ]);
  const tagged = pipelines.find((p) => p.ref === 'v1')!;
  const jobs = await s.c.db.kysely.selectFrom('ci_builds').select(['name', 'status']).where('pipeline_id', '=', tagged.id).orderBy('id').execute();
  assert.deepEqual(jobs, [
    { name: 'build', status: 'pending' },
    { name: 'tagged', status: 'pending' },
  ]);

  // an update: before_sha is the old head; [skip ci] skips; a deletion creates nothing
  fs.writeFileSync(path.join(work, 'a.txt'), 'a');
  await runGit(work, ['add', '.']);
  await runGit(work, ['commit', '-q', '-m', 'more']);
  await runGit(work, ['push', '-q', url, 'main']);
  fs.writeFileSync(path.join(work, 'b.txt'), 'b');
  await runGit(work, ['add', '.']);
  await runGit(work, ['commit', '-q', '-m', 'docs only [skip ci]']);
  await runGit(work, ['push', '-q', url, 'main:feature']);
  await runGit(work, ['push', '-q', url, ':v1']);
  pipelines = await rows();
  assert.equal(pipelines.length, 4);
  assert.deepEqual([pipelines[3].ref, pipelines[3].before_sha], ['main', first]);
});
