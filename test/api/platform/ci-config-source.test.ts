// Which CI file a pipeline reads: the project's ci_config_path, else the instance's default_ci_config_path, else
// .gitlab-ci.yml, else .service-ci.yml; `file@group/project:ref` and `include: project` read another project's file
// at a ref, only when the pipeline's user may read that project's code (GitLab's messages otherwise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, ROOT_TOKEN } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';

test('the CI file: project setting, instance default, .gitlab-ci.yml, .service-ci.yml; include: project with access', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const root = { 'private-token': ROOT_TOKEN };
  const g = await seed.group({ path: 'grp' });
  const { project, dir } = await seed.repoProject({ namespace: g, path: 'app', visibility: 'private' });
  const { project: tools, dir: toolsDir } = await seed.repoProject({ namespace: g, path: 'tools', visibility: 'private' });
  const dev = await seed.user({ username: 'dev' });
  await seed.member({ project }, dev, 30);
  const devHeaders = (await seed.token(dev)).headers;

  const tw = workTree(t, toolsDir);
  tw.write('templates/build.yml', 'include: common.yml\n.build:\n  script: make\n').write('common.yml', 'variables: { FROM: tools }\n').commit('v1');
  tw.tag('v1').push('HEAD:main', 'v1');
  tw.write('templates/build.yml', '.build:\n  script: make v2\n').commit('v2');
  tw.push('HEAD:main');

  const w = workTree(t, dir);
  w.write('.service-ci.yml', 'service:\n  script: x\n').commit('service');
  w.push('HEAD:main');

  const run = async (headers: Record<string, string> = root, ref = 'main') => {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/pipeline`, headers, payload: { ref } });
    if (r.statusCode !== 201) return { status: r.statusCode, body: JSON.parse(r.body) };
    const jobs = await c.db.kysely.selectFrom('ci_builds').select('name').where('pipeline_id', '=', JSON.parse(r.body).id).orderBy('id').execute();
    return { status: 201, jobs: jobs.map((j) => j.name), body: JSON.parse(r.body) };
  };
  const setProject = (ci_config_path: string) =>
    app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: root, payload: { ci_config_path } });

  assert.deepEqual((await run()).jobs, ['service']);
  w.write('.gitlab-ci.yml', 'gitlab:\n  script: x\n').commit('gitlab');
  w.push('HEAD:main');
  assert.deepEqual((await run()).jobs, ['gitlab']);

  // the instance's default, then the project's own path over it
  w.write('ci/instance.yml', 'instance:\n  script: x\n').write('ci/project.yml', 'project:\n  script: x\n').commit('more');
  w.push('HEAD:main');
  const settings = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { default_ci_config_path: 'ci/instance.yml' },
  });
  assert.equal(settings.statusCode, 200);
  assert.deepEqual((await run()).jobs, ['instance']);
  assert.equal((await setProject('ci/project.yml')).statusCode, 200);
  assert.deepEqual((await run()).jobs, ['project']);
  // a configured path that does not exist: no fallback
  await setProject('ci/missing.yml');
  assert.deepEqual(await run(), { status: 400, body: { message: { base: ['Missing CI config file'] } } });

  // another project's file as the CI file, at a tag; its local include is that project's
  await setProject('templates/build.yml@grp/tools:v1');
  w.write('unused.yml', 'x: 1\n').commit('unused');
  w.push('HEAD:main');
  const ext = await run();
  assert.deepEqual(ext, { status: 400, body: { message: { base: ['jobs config should contain at least one visible job'] } } });
  await setProject('');
  await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { default_ci_config_path: '' } });
  w.write(
    '.gitlab-ci.yml',
    "include:\n  - project: grp/tools\n    ref: v1\n    file: templates/build.yml\njob:\n  extends: .build\n  script: [make, '$FROM']\n",
  ).commit('include tools');
  w.push('HEAD:main');
  const included = await run();
  assert.deepEqual(included.jobs, ['job']);
  const job = await c.db.kysely.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', included.body.id).executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(job.yaml_variables), [{ key: 'FROM', value: 'tools', public: true }]);

  // a Developer of the project who may not read tools (on a branch of theirs): GitLab's message, no pipeline
  w.push('HEAD:feature');
  const before = await c.db.kysely
    .selectFrom('ci_pipelines')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.deepEqual(await run(devHeaders, 'feature'), {
    status: 400,
    body: {
      message: {
        base: ['Project `grp/tools` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.'],
      },
    },
  });
  await seed.member({ project: tools }, dev, 20);
  assert.deepEqual((await run(devHeaders, 'feature')).jobs, ['job']);
  // a ref the other project lacks
  w.write('.gitlab-ci.yml', 'include:\n  - project: grp/tools\n    ref: v9\n    file: templates/build.yml\njob:\n  script: x\n').commit('v9');
  w.push('HEAD:main');
  assert.deepEqual(await run(), { status: 400, body: { message: { base: ['Project `grp/tools` reference `v9` does not exist!'] } } });
  const after = await c.db.kysely
    .selectFrom('ci_pipelines')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(after.n), Number(before.n) + 1);
  assert.equal(tools.id > 0, true);
});
