// python-gitlab against a running server: project.protectedbranches (create with a wildcard, list, get,
// PATCH allow_force_push through its HTTP layer, delete) and project.protectedtags (create, list, get, delete); then a real
// `git push` to a branch the wildcard protects is refused with GitLab's message (skipped without
// python-gitlab unless CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { bareGit, runGit, tmpDir, WorkTree } from '../helpers/git.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = `
import sys, json, gitlab
base, token, pid = sys.argv[1:4]
gl = gitlab.Gitlab(base, private_token=token)
project = gl.projects.get(int(pid))
out = {}
pb = project.protectedbranches.create({'name': '*-stable', 'push_access_level': 40, 'merge_access_level': 30})
out['created'] = [pb.name, [a['access_level'] for a in pb.push_access_levels], [a['access_level_description'] for a in pb.merge_access_levels], pb.allow_force_push]
tmp = project.protectedbranches.create({'name': 'tmp', 'allowed_to_push': [{'access_level': 30}], 'code_owner_approval_required': True})
out['tmp'] = [[a['access_level'] for a in tmp.push_access_levels], tmp.code_owner_approval_required]
try:
    project.protectedbranches.create({'name': '*-stable'})
    out['again'] = 'created'
except gitlab.exceptions.GitlabCreateError as e:
    out['again'] = [e.response_code, e.error_message]
out['list'] = sorted(b.name for b in project.protectedbranches.list(get_all=True))
got = project.protectedbranches.get('*-stable')
# this python-gitlab has no save() for protected branches: its HTTP layer sends GitLab's PATCH
patched = gl.http_request('patch', '/projects/%s/protected_branches/%s' % (pid, gitlab.utils.EncodedId(got.name)), post_data={'allow_force_push': True}).json()
out['saved'] = [patched['allow_force_push'], project.protectedbranches.get('*-stable').allow_force_push]
project.protectedbranches.delete('tmp')
out['after_delete'] = sorted(b.name for b in project.protectedbranches.list(get_all=True))
try:
    project.protectedbranches.get('tmp')
    out['missing'] = 'found'
except gitlab.exceptions.GitlabGetError as e:
    out['missing'] = e.response_code

pt = project.protectedtags.create({'name': 'v*', 'create_access_level': 40})
out['tag'] = [pt.name, [a['access_level_description'] for a in pt.create_access_levels]]
project.protectedtags.create({'name': 'rc-*'})
out['tags'] = sorted(t.name for t in project.protectedtags.list(get_all=True))
out['tag_get'] = project.protectedtags.get('v*').name
project.protectedtags.get('rc-*').delete()
out['tags_after'] = [t.name for t in project.protectedtags.list(get_all=True)]
print(json.dumps(out))
`;

test('python-gitlab: project.protectedbranches and project.protectedtags; a push to a wildcard-protected branch is refused', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed } = srv;
  const group = await seed.group();
  const { project, dir: bare } = await seed.repoProject({ namespace: group, path: 'py-protect' });
  const maintainer = await seed.user({ password: 'pass-maint-1' });
  const developer = await seed.user({ password: 'pass-dev-1' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  const { token } = await seed.token(maintainer);
  const full = `${group.full_path}/${project.path}`;

  // main and 1-stable exist before the rule
  const m = tmpDir(t);
  await runGit(m, ['clone', '-q', cloneUrl(srv.base, full, maintainer.username, 'pass-maint-1'), 'w']);
  const mw = new WorkTree(path.join(m, 'w'));
  mw.git(['checkout', '-q', '-B', 'main']);
  mw.write('a', '1').commit('one');
  await runGit(mw.dir, ['push', '-q', 'origin', 'main', 'main:1-stable']);

  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, srv.base, token, String(project.id)]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.deepEqual(JSON.parse(out.stdout), {
    created: ['*-stable', [40], ['Developers + Maintainers'], false],
    tmp: [[30], true],
    again: [409, "Protected branch '*-stable' already exists"],
    list: ['*-stable', 'main', 'tmp'],
    saved: [true, true],
    after_delete: ['*-stable', 'main'],
    missing: 404,
    tag: ['v*', ['Maintainers']],
    tags: ['rc-*', 'v*'],
    tag_get: 'v*',
    tags_after: ['v*'],
  });

  // a Developer's push to 1-stable: refused by the wildcard, with GitLab's message
  const d = tmpDir(t);
  await runGit(d, ['clone', '-q', cloneUrl(srv.base, full, developer.username, 'pass-dev-1'), 'w']);
  const dw = new WorkTree(path.join(d, 'w'));
  dw.git(['checkout', '-q', '1-stable']);
  dw.write('b', '2').commit('two');
  const before = bareGit(bare, ['rev-parse', '1-stable']).trim();
  await assert.rejects(runGit(dw.dir, ['push', 'origin', '1-stable']), /You are not allowed to push code to protected branches on this project\./);
  assert.equal(bareGit(bare, ['rev-parse', '1-stable']).trim(), before);
});
