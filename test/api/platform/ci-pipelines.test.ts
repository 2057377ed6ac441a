// Pipelines: a CI file pushed through the commits API creates a pipeline and its jobs; stages, needs,
// when, rules/only/except, child pipelines, invalid files; every pipeline route with its filters,
// permissions and bad input.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { ciProject, suiteApp } from '../../helpers/ci.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-pipelines', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
  const ctx = suiteApp();
  let n = 0;

  /** A private project of its own group with one user per level (tokens in `as`). */
  function setup() {
    n++;
    return ciProject(ctx, {
      group: { path: `grp${n}`, name: `Grp${n}` },
      members: { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 },
      username: (role) => `${role}${n}`,
    });
  }

  async function commit(
    url: string,
    headers: Record<string, string>,
    files: Record<string, string>,
    opts: { branch?: string; message?: string; start?: string } = {},
  ) {
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers,
      payload: {
        branch: opts.branch ?? 'main',
        ...(opts.start ? { start_branch: opts.start } : {}),
        commit_message: opts.message ?? 'ci',
        actions: Object.entries(files).map(([file_path, content]) => ({ action: 'create', file_path, content })),
      },
    });
    assert.equal(r.statusCode, 201, r.body);
    return json(r).id as string;
  }

  const pipelines = (projectId: number) => ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const jobsOf = (pipelineId: number) => ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).orderBy('id').execute();
  const statuses = async (pipelineId: number) => Object.fromEntries((await jobsOf(pipelineId)).filter((j) => !j.retried).map((j) => [j.name, j.status]));
  async function setStatus(pipelineId: number, name: string, status: string) {
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ status })
      .where('pipeline_id', '=', pipelineId)
      .where('name', '=', name)
      .where('retried', '=', 0)
      .execute();
    await ctx.c.ci.pipelines.process(pipelineId);
  }
  const pipelineStatus = async (id: number) =>
    (await ctx.c.db.kysely.selectFrom('ci_pipelines').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

  const STAGED = `
stages: [build, test, deploy]
variables:
  GLOBAL: g
default:
  image: node:20
  tags: [docker]
build:
  stage: build
  script: make
  variables: { LOCAL: l }
test:
  stage: test
  script: [make test]
  artifacts: { paths: [out/], expire_in: 1 week }
deploy:
  stage: deploy
  script: make deploy
  environment: { name: production, url: https://example.com }
cleanup:
  stage: deploy
  script: make clean
  when: on_failure
`;

  test('a push of a CI file creates a pipeline with its jobs; stages move on as jobs finish', async () => {
    const { project, as, users, url, web } = await setup();
    const sha = await commit(url, as.maintainer, { '.service-ci.yml': STAGED });
    const [p] = await pipelines(project.id);
    assert.ok(p);
    assert.equal(p.sha, sha);
    assert.equal(p.source, 'push');
    assert.equal(p.ref, 'main');
    assert.equal(p.user_id, users.maintainer.id);
    assert.equal(p.status, 'pending');
    const jobs = await jobsOf(p.id);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.stage, j.stage_idx, j.status, j.when, j.allow_failure]),
      [
        ['build', 'build', 1, 'pending', 'on_success', 0],
        ['test', 'test', 2, 'created', 'on_success', 0],
        ['deploy', 'deploy', 3, 'created', 'on_success', 0],
        ['cleanup', 'deploy', 3, 'created', 'on_failure', 0],
      ],
    );
    assert.deepEqual(JSON.parse(jobs[0].options), { script: ['make'], image: { name: 'node:20' } });
    assert.deepEqual(JSON.parse(jobs[0].yaml_variables), [
      { key: 'GLOBAL', value: 'g', public: true },
      { key: 'LOCAL', value: 'l', public: true },
    ]);
    assert.deepEqual(JSON.parse(jobs[0].tag_list), ['docker']);
    assert.deepEqual(JSON.parse(jobs[1].options).artifacts, { paths: ['out/'], expire_in: '1 week' });
    assert.equal(jobs[2].environment, 'production');
    assert.deepEqual(JSON.parse(jobs[2].options).environment, { name: 'production', url: 'https://example.com', action: 'start' });

    // the list and the detail
    const list = await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: as.reporter });
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['x-total'], '1');
    assert.deepEqual(json(list), [
      {
        id: p.id,
        iid: p.iid,
        project_id: project.id,
        sha,
        ref: 'main',
        status: 'pending',
        source: 'push',
        created_at: p.created_at,
        updated_at: json(list)[0].updated_at,
        web_url: `${web}/-/pipelines/${p.id}`,
        name: null,
      },
    ]);
    const one = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}`, headers: as.reporter }));
    assert.match(one.committed_at, ISO);
    assert.deepEqual(one, {
      id: p.id,
      iid: p.iid,
      project_id: project.id,
      sha,
      ref: 'main',
      status: 'pending',
      source: 'push',
      created_at: p.created_at,
      updated_at: one.updated_at,
      web_url: `${web}/-/pipelines/${p.id}`,
      before_sha: '0000000000000000000000000000000000000000',
      tag: false,
      yaml_errors: null,
      user: {
        id: users.maintainer.id,
        username: users.maintainer.username,
        name: users.maintainer.name,
        state: 'active',
        locked: false,
        avatar_url: null,
        web_url: `${EXTERNAL_URL}/${users.maintainer.username}`,
      },
      started_at: null,
      finished_at: null,
      committed_at: one.committed_at,
      duration: null,
      queued_duration: null,
      coverage: null,
      detailed_status: {
        icon: 'status_pending',
        text: 'Pending',
        label: 'pending',
        group: 'pending',
        tooltip: 'pending',
        has_details: true,
        details_path: `/grp${n}/app/-/pipelines/${p.id}`,
        illustration: null,
        favicon: '/assets/ci_favicons/favicon_status_pending.png',
      },
      name: null,
      archived: false,
    });

    await setStatus(p.id, 'build', 'running');
    assert.equal(await pipelineStatus(p.id), 'running');
    await setStatus(p.id, 'build', 'success');
    assert.deepEqual(await statuses(p.id), { build: 'success', test: 'pending', deploy: 'created', cleanup: 'created' });
    await setStatus(p.id, 'test', 'failed');
    assert.deepEqual(await statuses(p.id), { build: 'success', test: 'failed', deploy: 'skipped', cleanup: 'pending' });
    await setStatus(p.id, 'cleanup', 'success');
    const done = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    assert.equal(done.status, 'failed');
    assert.match(done.finished_at ?? '', ISO);

    // retry: the failed job gets a new row, the skipped one runs again
    const retry = await ctx.app.inject({ method: 'POST', url: `${url}/pipelines/${p.id}/retry`, headers: as.developer });
    assert.equal(retry.statusCode, 201);
    assert.equal(json(retry).status, 'running');
    assert.equal('name' in json(retry), false);
    assert.equal(json(retry).detailed_status.text, 'Running');
    const after = await jobsOf(p.id);
    assert.deepEqual(
      after.map((j) => [j.name, j.status, j.retried]),
      [
        ['build', 'success', 0],
        ['test', 'failed', 1],
        ['deploy', 'created', 0],
        ['cleanup', 'success', 0],
        ['test', 'pending', 0],
      ],
    );
    // jobs of the pipeline: retried ones on request
    const pj = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs`, headers: as.reporter }));
    assert.deepEqual(
      pj.map((j: any) => [j.name, j.status]),
      [
        ['build', 'success'],
        ['deploy', 'created'],
        ['cleanup', 'success'],
        ['test', 'pending'],
      ],
    );
    assert.equal(pj[0].pipeline.id, p.id);
    const withRetried = json(
      await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs?include_retried=true&scope[]=failed`, headers: as.reporter }),
    );
    assert.deepEqual(
      withRetried.map((j: any) => [j.name, j.status]),
      [['test', 'failed']],
    );
    const badScope = await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs?scope=nope`, headers: as.reporter });
    assert.equal(badScope.statusCode, 400);
    assert.deepEqual(json(badScope), { error: 'scope does not have a valid value' });

    // cancel
    const cancel = await ctx.app.inject({ method: 'POST', url: `${url}/pipelines/${p.id}/cancel`, headers: as.developer });
    assert.equal(cancel.statusCode, 200);
    assert.equal(json(cancel).status, 'canceled');
    assert.deepEqual(await statuses(p.id), { build: 'success', test: 'canceled', deploy: 'canceled', cleanup: 'success' });

    // permissions: guests of a private project see nothing, reporters may not write, only owners delete
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: as.guest })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines` })).statusCode, 404);
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/pipelines/${p.id}/retry`, headers: as.reporter })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${url}/pipelines/${p.id}`, headers: as.maintainer })).statusCode, 403);
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/999999`, headers: as.reporter })), { message: '404 Not found' });
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/99999999999`, headers: as.reporter })), { message: '404 Not found' });
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/abc`, headers: as.reporter })).statusCode, 400);
    const stale = await ctx.app.inject({
      method: 'DELETE',
      url: `${url}/pipelines/${p.id}`,
      headers: { ...as.owner, 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' },
    });
    assert.equal(stale.statusCode, 412);
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?name=x`, headers: as.reporter })), []);
    // an artifact of one of its jobs goes with it, blob included
    const key = `test/pipeline-${p.id}.zip`;
    await ctx.c.store.put(key, Buffer.from('zip'));
    await ctx.c.db.kysely
      .insertInto('ci_job_artifacts')
      .values({
        project_id: project.id,
        job_id: jobs[0].id,
        file_type: 'archive',
        file_format: 'zip',
        file_name: 'a.zip',
        size: 3,
        store_key: key,
        created_at: p.created_at,
      })
      .execute();
    const del = await ctx.app.inject({ method: 'DELETE', url: `${url}/pipelines/${p.id}`, headers: as.owner });
    assert.equal(del.statusCode, 204);
    assert.deepEqual(await pipelines(project.id), []);
    assert.deepEqual(await jobsOf(p.id), []);
    assert.equal(await ctx.c.store.stat(key), null);
    assert.deepEqual(await ctx.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('store_key', '=', key).execute(), []);
  });

  test('needs run a job as soon as its needs are done; rules, only and except pick the jobs of a ref', async () => {
    const { project, as, url } = await setup();
    const ci = `
stages: [build, test, deploy]
a:
  stage: build
  script: a
b:
  stage: build
  script: b
after_a:
  stage: test
  needs: [a]
  script: x
main_only:
  stage: deploy
  script: d
  rules:
    - if: '$CI_COMMIT_BRANCH == "main"'
      when: manual
other_branches:
  stage: deploy
  script: o
  only: [branches]
  except: [main]
tags_only:
  stage: deploy
  script: t
  only: [tags]
regex:
  stage: deploy
  script: r
  rules:
    - if: '$CI_COMMIT_REF_NAME =~ /^feat/'
`;
    await commit(url, as.maintainer, { '.service-ci.yml': ci });
    const [p] = await pipelines(project.id);
    assert.deepEqual(await statuses(p.id), { a: 'pending', b: 'pending', after_a: 'created', main_only: 'created' });
    const manual = (await jobsOf(p.id)).find((j) => j.name === 'main_only')!;
    assert.equal(manual.when, 'manual');
    assert.equal(manual.allow_failure, 0);
    await setStatus(p.id, 'a', 'success');
    assert.deepEqual(await statuses(p.id), { a: 'success', b: 'pending', after_a: 'pending', main_only: 'created' });
    await setStatus(p.id, 'after_a', 'success');
    await setStatus(p.id, 'b', 'success');
    assert.deepEqual(await statuses(p.id), { a: 'success', b: 'success', after_a: 'success', main_only: 'manual' });
    assert.equal(await pipelineStatus(p.id), 'manual');

    await commit(url, as.maintainer, { 'f.txt': 'x' }, { branch: 'feature', start: 'main' });
    const feature = (await pipelines(project.id)).at(-1)!;
    assert.equal(feature.ref, 'feature');
    assert.deepEqual(await statuses(feature.id), { a: 'pending', b: 'pending', after_a: 'created', other_branches: 'created', regex: 'created' });

    // API: ref filters and tags
    const tag = await ctx.app.inject({ method: 'POST', url: `${url}/repository/tags`, headers: as.maintainer, payload: { tag_name: 'v1', ref: 'main' } });
    assert.equal(tag.statusCode, 201, tag.body);
    const tagged = (await pipelines(project.id)).at(-1)!;
    assert.equal(tagged.tag, 1);
    assert.equal(tagged.ref, 'v1');
    assert.deepEqual(await statuses(tagged.id), { a: 'pending', b: 'pending', after_a: 'created', tags_only: 'created' });

    const byRef = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?ref=feature`, headers: as.reporter }));
    assert.deepEqual(
      byRef.map((x: any) => x.id),
      [feature.id],
    );
    const tagsScope = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?scope=tags`, headers: as.reporter }));
    assert.deepEqual(
      tagsScope.map((x: any) => x.id),
      [tagged.id],
    );
    const branchesScope = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?scope=branches&sort=asc`, headers: as.reporter }));
    assert.deepEqual(
      branchesScope.map((x: any) => x.id),
      [p.id, feature.id],
    );
    const manualStatus = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?status=manual`, headers: as.reporter }));
    assert.deepEqual(
      manualStatus.map((x: any) => x.id),
      [p.id],
    );
    const latest = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/latest?ref=feature`, headers: as.reporter }));
    assert.equal(latest.id, feature.id);
    assert.equal(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/latest`, headers: as.reporter })).id, p.id);
    // none at the ref's head: GitLab's authorize! on nil
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/latest?ref=nope`, headers: as.reporter })), {
      message: '403 Forbidden',
    });
    const badStatus = await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?status=nope`, headers: as.reporter });
    assert.equal(badStatus.statusCode, 400);
    const badDate = await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?updated_after=nope`, headers: as.reporter });
    assert.deepEqual(json(badDate), { error: 'updated_after is invalid' });
  });

  test('an invalid CI file is a failed pipeline with its errors; [ci skip] and files without jobs create none', async () => {
    const { project, as, url } = await setup();
    await commit(url, as.maintainer, { '.service-ci.yml': 'build:\n  script: make\n  foo: 1\n' });
    let [p] = await pipelines(project.id);
    assert.equal(p.status, 'failed');
    assert.equal(p.failure_reason, 'config_error');
    assert.equal(p.yaml_errors, 'jobs:build config contains unknown keys: foo');
    assert.deepEqual(await jobsOf(p.id), []);
    const errs = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?yaml_errors=true`, headers: as.reporter }));
    assert.deepEqual(
      errs.map((x: any) => x.id),
      [p.id],
    );

    await commit(url, as.maintainer, { 'other.txt': 'x' }, { message: 'docs [ci skip]' });
    assert.equal((await pipelines(project.id)).length, 1);

    // a YAML syntax error
    await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: as.maintainer,
      payload: { branch: 'main', commit_message: 'broken', actions: [{ action: 'update', file_path: '.service-ci.yml', content: 'a: b\n c: d\n' }] },
    });
    [, p] = await pipelines(project.id);
    assert.equal(p.yaml_errors, '(<unknown>): did not find expected key while parsing a block mapping at line 1 column 4');
    // the API saves no pipeline for an invalid file: its errors are the answer
    const invalid = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline`, headers: as.maintainer, payload: { ref: 'main' } });
    assert.equal(invalid.statusCode, 400);
    assert.deepEqual(json(invalid), { message: { base: ['(<unknown>): did not find expected key while parsing a block mapping at line 1 column 4'] } });
    assert.equal((await pipelines(project.id)).length, 2);

    // the API: no jobs for this ref, missing file, unknown ref, permissions
    await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: as.maintainer,
      payload: {
        branch: 'main',
        commit_message: 'only tags',
        actions: [{ action: 'update', file_path: '.service-ci.yml', content: 'x:\n  script: x\n  only: [tags]\n' }],
      },
    });
    assert.equal((await pipelines(project.id)).length, 2);
    const none = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=main`, headers: as.maintainer });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(json(none), {
      message: { base: ['Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.'] },
    });
    const dev = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=main`, headers: as.developer });
    assert.deepEqual(json(dev), { message: { base: ['Insufficient permissions to create a new pipeline'] } });
    const noRef = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=nope`, headers: as.maintainer });
    assert.deepEqual(json(noRef), { message: { base: ['Reference not found'] } });
    const missing = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline`, headers: as.maintainer });
    assert.deepEqual(json(missing), { error: 'ref is missing' });
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=main`, headers: as.reporter })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=main` })).statusCode, 401);
    await commit(url, as.maintainer, { 'z.txt': 'z' }, { branch: 'bare', start: 'main' });
    await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: as.maintainer,
      payload: { branch: 'bare', commit_message: 'no ci', actions: [{ action: 'delete', file_path: '.service-ci.yml' }] },
    });
    const noFile = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline?ref=bare`, headers: as.maintainer });
    assert.deepEqual(json(noFile), { message: { base: ['Missing CI config file'] } });
  });

  test('POST /pipeline with variables; a trigger job creates a child pipeline that its status follows (strategy: depend)', async () => {
    const { project, as, url } = await setup();
    const ci = `
workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "api"
build:
  stage: build
  script: make
  rules:
    - if: $DEPLOY == "yes"
child:
  stage: test
  trigger:
    include: ci/child.yml
    strategy: depend
`;
    await commit(url, as.maintainer, { '.service-ci.yml': ci, 'ci/child.yml': 'inner:\n  script: echo inner\n' });
    assert.deepEqual(await pipelines(project.id), []); // workflow: api only
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/pipeline`,
      headers: as.maintainer,
      payload: { ref: 'main', variables: [{ key: 'DEPLOY', value: 'yes' }] },
    });
    assert.equal(r.statusCode, 201, r.body);
    const p = json(r);
    assert.equal(p.source, 'api');
    assert.equal(p.status, 'pending');
    const vars = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/variables`, headers: as.developer }));
    assert.deepEqual(vars, [{ variable_type: 'env_var', key: 'DEPLOY', value: 'yes' }]);
    await setStatus(p.id, 'build', 'success');
    const all = await pipelines(project.id);
    assert.equal(all.length, 2);
    const child = all[1];
    const bridge = (await jobsOf(p.id)).find((j) => j.name === 'child')!;
    assert.equal(bridge.type, 'bridge');
    assert.equal(bridge.status, 'running');
    assert.equal(child.source, 'parent_pipeline');
    assert.equal(child.parent_pipeline_id, p.id);
    assert.equal(child.parent_job_id, bridge.id);
    assert.deepEqual(await statuses(child.id), { inner: 'pending' });
    const bridges = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/bridges`, headers: as.reporter }));
    assert.equal(bridges.length, 1);
    assert.equal(bridges[0].downstream_pipeline.id, child.id);
    // child pipelines are not listed unless asked for
    const listed = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: as.reporter }));
    assert.deepEqual(
      listed.map((x: any) => x.id),
      [p.id],
    );
    const children = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?source=parent_pipeline`, headers: as.reporter }));
    assert.deepEqual(
      children.map((x: any) => x.id),
      [child.id],
    );

    // the latest pipeline of a branch is never a child pipeline
    const branches = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines?scope=branches`, headers: as.reporter }));
    assert.deepEqual(
      branches.map((x: any) => x.id),
      [p.id],
    );
    await setStatus(child.id, 'inner', 'failed');
    assert.equal(await pipelineStatus(child.id), 'failed');
    assert.equal((await jobsOf(p.id)).find((j) => j.name === 'child')!.status, 'failed');
    assert.equal(await pipelineStatus(p.id), 'failed');
  });

  test('CI lint: content, includes, jobs; the project file', async () => {
    const { as, url, web } = await setup();
    const sha = await commit(url, as.maintainer, {
      '.service-ci.yml': 'include: ci/base.yml\nbuild:\n  extends: .base\n  script: make\n',
      'ci/base.yml': '.base:\n  tags: [t]\n',
    });
    const ok = await ctx.app.inject({
      method: 'POST',
      url: `${url}/ci/lint`,
      headers: as.developer,
      payload: { content: 'a:\n  script: x\n', include_jobs: true },
    });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(json(ok), {
      valid: true,
      errors: [],
      warnings: [],
      merged_yaml: '---\na:\n  script: x\n',
      includes: [],
      jobs: [
        {
          name: 'a',
          stage: 'test',
          before_script: [],
          script: ['x'],
          after_script: [],
          tag_list: [],
          environment: null,
          when: 'on_success',
          allow_failure: false,
          only: { refs: ['branches', 'tags'] },
          except: null,
          needs: null,
        },
      ],
    });
    const bad = await ctx.app.inject({
      method: 'POST',
      url: `${url}/ci/lint`,
      headers: as.developer,
      payload: { content: 'a:\n  stage: nope\n  script: x\n' },
    });
    assert.deepEqual(json(bad), {
      valid: false,
      errors: ['a job: chosen stage does not exist; available stages are .pre, build, test, deploy, .post'],
      warnings: [],
      merged_yaml: '---\na:\n  stage: nope\n  script: x\n',
      includes: [],
    });
    const syntax = json(await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers: as.developer, payload: { content: 'a: b\n c: d\n' } }));
    assert.deepEqual(syntax, {
      valid: false,
      errors: ['(<unknown>): did not find expected key while parsing a block mapping at line 1 column 4'],
      warnings: [],
      merged_yaml: null,
      includes: [],
    });
    const empty = json(await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers: as.developer, payload: { content: '' } }));
    assert.deepEqual(empty, { valid: false, errors: ['Please provide content of .gitlab-ci.yml'], warnings: [], merged_yaml: null, includes: [] });
    // dry_run: the jobs a pipeline of the ref would get
    const dry = json(
      await ctx.app.inject({
        method: 'POST',
        url: `${url}/ci/lint`,
        headers: as.developer,
        payload: {
          content: 'a:\n  script: x\n  only: [tags]\nb:\n  script: y\nc:\n  script: z\n  needs: [b]\n  when: manual\n',
          dry_run: true,
          include_jobs: true,
          ref: 'main',
        },
      }),
    );
    assert.deepEqual(
      dry.jobs.map((j: any) => j.name),
      ['b', 'c'],
    );
    assert.deepEqual(dry.jobs[1], {
      name: 'c',
      stage: 'test',
      before_script: [],
      script: ['z'],
      after_script: [],
      tag_list: [],
      environment: null,
      when: 'manual',
      allow_failure: true,
      only: { refs: ['branches', 'tags'] },
      except: null,
      needs: [{ name: 'b' }],
    });
    const both = await ctx.app.inject({ method: 'GET', url: `${url}/ci/lint?sha=main&content_ref=main`, headers: as.developer });
    assert.deepEqual(json(both), { error: 'sha, content_ref are mutually exclusive' });
    const noCommit = await ctx.app.inject({ method: 'GET', url: `${url}/ci/lint?content_ref=nope`, headers: as.developer });
    assert.deepEqual(json(noCommit), { message: '404 Commit Not Found' });
    const file = json(await ctx.app.inject({ method: 'GET', url: `${url}/ci/lint`, headers: as.developer }));
    assert.equal(file.valid, true);
    assert.deepEqual(file.includes, [
      {
        type: 'local',
        location: 'ci/base.yml',
        blob: `${web}/-/blob/${sha}/ci/base.yml`,
        raw: `${web}/-/raw/${sha}/ci/base.yml`,
        extra: {},
        context_project: `grp${n}/app`,
        context_sha: sha,
      },
    ]);
    assert.equal(file.merged_yaml, '---\n.base:\n  tags:\n    - t\nbuild:\n  tags:\n    - t\n  script: make\n');
    const noContent = await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers: as.developer, payload: {} });
    assert.equal(noContent.statusCode, 400);
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers: as.reporter, payload: { content: 'a: 1' } })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/ci/lint`, headers: as.guest })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/ci/lint`, headers: as.reporter })).statusCode, 200);
  });

  test('a public project: anyone reads its pipelines; public_jobs=false hides the jobs, builds_access_level=private or disabled everything', async () => {
    const g = await ctx.seed.group({ path: `pubgrp${++n}`, visibility: 'public' });
    const { project } = await ctx.seed.repoProject({ namespace: g, path: 'app', visibility: 'public' });
    const url = `/api/v4/projects/${project.id}`;
    await commit(url, ctx.root, { '.service-ci.yml': 'a: { script: x }\n' });
    const [p] = await pipelines(project.id);
    const stranger = (await ctx.seed.token(await ctx.seed.user({ username: `stranger${n}` }))).headers;
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines` })).statusCode, 200);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs`, headers: stranger })).statusCode, 200);
    // a stranger may not write
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/pipelines/${p.id}/cancel`, headers: stranger })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/variables`, headers: stranger })).statusCode, 403);
    const put = async (body: Record<string, unknown>) => {
      const r = await ctx.app.inject({ method: 'PUT', url, headers: ctx.root, payload: body });
      assert.equal(r.statusCode, 200, r.body);
    };
    await put({ public_jobs: false });
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs` })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}`, headers: stranger })).statusCode, 200);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${p.id}/jobs`, headers: ctx.root })).statusCode, 200);
    await put({ builds_access_level: 'private' });
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: stranger })), { message: '403 Forbidden' });
    await put({ builds_access_level: 'disabled' });
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: stranger })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/pipelines`, headers: ctx.root })).statusCode, 200);
  });

  test('POST /pipeline: bad variables, a tag ref, a project without repository access', async () => {
    const { project, as, url } = await setup();
    await commit(url, as.maintainer, { '.service-ci.yml': 'a: { script: x, only: [tags] }\nb: { script: x, rules: [{ if: $CI_COMMIT_TAG }] }\n' });
    assert.deepEqual(await pipelines(project.id), []);
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: `${url}/repository/tags`, headers: as.maintainer, payload: { tag_name: 'v1', ref: 'main' } })).statusCode,
      201,
    );
    assert.equal((await pipelines(project.id)).length, 1);
    const bad = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline`, headers: as.maintainer, payload: { ref: 'v1', variables: 'x' } });
    assert.equal(bad.statusCode, 400);
    const badItem = await ctx.app.inject({
      method: 'POST',
      url: `${url}/pipeline`,
      headers: as.maintainer,
      payload: { ref: 'v1', variables: [{ key: 'A', value: 'b', variable_type: 'nope' }] },
    });
    assert.equal(badItem.statusCode, 400);
    assert.deepEqual(json(bad), { error: 'variables is invalid' });
    assert.deepEqual(json(badItem), { error: 'variables[0][variable_type] does not have a valid value' });
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/pipeline`,
      headers: as.maintainer,
      payload: { ref: 'v1', variables: [{ key: 'A', value: 'b', variable_type: 'file' }] },
    });
    assert.equal(r.statusCode, 201, r.body);
    const body = json(r);
    assert.deepEqual([body.ref, body.tag, body.source, body.status, 'name' in body], ['v1', true, 'api', 'pending', false]);
    const vars = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${body.id}/variables`, headers: as.developer }));
    assert.deepEqual(vars, [{ variable_type: 'file', key: 'A', value: 'b' }]);
    const jobs = await jobsOf(body.id);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.tag, j.ref]),
      [
        ['a', 1, 'v1'],
        ['b', 1, 'v1'],
      ],
    );
    // another project's pipeline id is not found here
    const other = await setup();
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${other.url}/pipelines/${body.id}`, headers: ctx.root })), { message: '404 Not found' });
  });
});
