// End to end with the real python-gitlab: a CI file pushed over HTTP, its job run by `hearth runner`
// (in-process), then python-gitlab reads and manages what it made: project.jobs.get(id).artifacts(),
// .artifact(path), project.artifacts.download(ref, job), .keep_artifacts(), .delete_artifacts(),
// gl.runners.list(), gl.runners_all.list(), runner.save() (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { Runner } from '../../src/runner/runner.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const CI_FILE = `build:
  script:
    - mkdir -p out
    - echo "made by $CI_JOB_NAME" > out/result.txt
  artifacts:
    paths: [out/]
    expire_in: 1 week
`;

const SCRIPT = `
import sys, json, hashlib, gitlab
base, admin_token, user_token, pid, jid, rid = sys.argv[1:7]
pid, jid, rid = int(pid), int(jid), int(rid)
gl = gitlab.Gitlab(base, private_token=user_token)
admin = gitlab.Gitlab(base, private_token=admin_token)
out = {}
project = gl.projects.get(pid)
job = project.jobs.get(jid)
out['job'] = [job.name, job.status, job.artifacts_file['filename'], job.artifacts_file['size']]
out['expire_before_keep'] = job.artifacts_expire_at is not None
data = job.artifacts()
out['zip_sha256'] = hashlib.sha256(data).hexdigest()
out['one'] = job.artifact('out/result.txt').decode()
out['by_ref_sha256'] = hashlib.sha256(project.artifacts.download('main', 'build')).hexdigest()
job.keep_artifacts()
out['expire_after_keep'] = project.jobs.get(jid).artifacts_expire_at

out['runners'] = [[r.id, r.description, r.runner_type] for r in gl.runners.list(get_all=True)]
out['runners_all'] = sorted([[r.id, r.runner_type] for r in admin.runners_all.list(get_all=True)])
r = gl.runners.get(rid)
r.description = 'renamed by python'
r.tag_list = ['py', 'e2e']
r.save()
r2 = gl.runners.get(rid)
out['after_save'] = [r2.description, sorted(r2.tag_list)]

job.delete_artifacts()
try:
    job.artifacts()
    out['after_delete'] = 'still there'
except gitlab.exceptions.GitlabGetError as e:
    out['after_delete'] = e.response_code
print(json.dumps(out))
`;

test('python-gitlab on what hearth runner made: job artifacts, keep, delete; runners list, all, save', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c } = srv;
  const owner = await seed.user({ username: 'py-owner' });
  const group = await seed.group({ path: 'py-group' });
  const { project } = await seed.repoProject({ namespace: group, path: 'py-app', visibility: 'private' });
  await seed.member({ group }, owner, 40);
  const { token } = await seed.token(owner, { scopes: ['api'] });

  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(srv.base, `${group.full_path}/${project.path}`, owner.username, token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write('.service-ci.yml', CI_FILE).commit('CI');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);

  // a project runner created by the Maintainer (POST /user/runners)
  const res = await fetch(`${srv.base}/api/v4/user/runners`, {
    method: 'POST',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ runner_type: 'project_type', project_id: project.id, description: 'py runner' }),
  });
  const created = (await res.json()) as { id: number; token: string };
  assert.equal(res.status, 201, JSON.stringify(created));

  // wait for the pipeline's job, then run it
  const end = Date.now() + 60_000; // bounds a hang only
  let job: { id: number } | undefined;
  while (!job && Date.now() < end) {
    job = await c.db.kysely.selectFrom('ci_builds').select('id').where('project_id', '=', project.id).where('status', '=', 'pending').executeTakeFirst();
    if (!job) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(job, 'the push made a pending job');
  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const runner = new Runner({ url: srv.base, token: created.token, once: true, buildsDir, log: () => {} });
  await runner.run();
  assert.deepEqual(runner.results, [{ id: job.id, result: { state: 'success', exitCode: 0 } }]);
  const zip = await fetch(`${srv.base}/api/v4/projects/${project.id}/jobs/${job.id}/artifacts`, { headers: { 'private-token': token } });
  assert.equal(zip.status, 200);
  const bytes = Buffer.from(await zip.arrayBuffer());

  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, srv.base, ROOT_TOKEN, token, String(project.id), String(job.id), String(created.id)]).catch(
    (e) => e,
  );
  assert.equal(out.stderr ?? '', '', out.stdout);
  const got = JSON.parse(out.stdout);
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  assert.deepEqual(got, {
    job: ['build', 'success', 'artifacts.zip', bytes.length],
    expire_before_keep: true,
    zip_sha256: sha,
    one: 'made by build\n',
    by_ref_sha256: sha,
    expire_after_keep: null,
    runners: [[created.id, 'py runner', 'project_type']],
    runners_all: [[created.id, 'project_type']],
    after_save: ['renamed by python', ['e2e', 'py']],
    after_delete: 404,
  });
  // the server's side: no archive left, the log kept, the runner renamed
  const rows = await c.db.kysely.selectFrom('ci_job_artifacts').select('file_type').where('job_id', '=', job.id).execute();
  assert.deepEqual(
    rows.map((r) => r.file_type),
    [],
  );
  const runnerRow = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
  assert.deepEqual([runnerRow.description, JSON.parse(runnerRow.tag_list).sort()], ['renamed by python', ['e2e', 'py']]);
  const trace = await fetch(`${srv.base}/api/v4/projects/${project.id}/jobs/${job.id}/trace`, { headers: { 'private-token': token } });
  assert.match(await trace.text(), /Job succeeded/);
  // this process's keep-alive sockets go now, not at the server's keep-alive timeout when the app closes
  srv.app.server.closeAllConnections();
});
