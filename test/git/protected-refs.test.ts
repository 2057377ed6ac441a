// Protected branches and tags over a real `git push` (GitLab's Gitlab::Checks::BranchCheck and
// TagCheck): a wildcard rule refuses a Developer with GitLab's message, the most permissive matching
// rule wins, force pushes follow allow_force_push, protected tags refuse creation, update and deletion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestServer, cloneUrl } from '../helpers/server.ts';
import { bareGit, WorkTree, pushEvents, runGit as git, tmpDir as tmp } from '../helpers/git.ts';

async function setup(t: any) {
  const s = await startTestServer(t);
  const group = await s.seed.group();
  const { project, dir: bare } = await s.seed.repoProject({ namespace: group });
  const maintainer = await s.seed.user({ password: 'pass-maint-1' });
  const developer = await s.seed.user({ password: 'pass-dev-1' });
  await s.seed.member({ project }, maintainer, 40);
  await s.seed.member({ project }, developer, 30);
  const mHeaders = (await s.seed.token(maintainer)).headers;
  const full = `${group.full_path}/${project.path}`;
  const clone = async (user: { username: string }, password: string) => {
    const dir = tmp(t);
    await git(dir, ['clone', '-q', cloneUrl(s.base, full, user.username, password), 'w']);
    const wt = new WorkTree(path.join(dir, 'w'));
    wt.git(['config', 'user.name', user.username]);
    wt.git(['config', 'user.email', `${user.username}@example.com`]);
    return wt;
  };
  const api = (method: string, url: string, payload?: object) =>
    fetch(`${s.base}/api/v4/projects/${project.id}${url}`, {
      method,
      headers: { ...mHeaders, 'content-type': 'application/json' },
      body: payload ? JSON.stringify(payload) : undefined,
    });
  return { ...s, project, bare, maintainer, developer, clone, api };
}

test('a push to a branch matching a wildcard protected branch is refused for a Developer with GitLab message; Maintainers push; the most permissive rule wins', async (t) => {
  const s = await setup(t);
  const m = await s.clone(s.maintainer, 'pass-maint-1');
  m.git(['checkout', '-q', '-b', 'main']);
  const one = m.write('a', '1').commit('one');
  await git(m.dir, ['push', '-q', 'origin', 'main', 'main:1-stable']);

  const res = await s.api('POST', '/protected_branches', { name: '*-stable', push_access_level: 40, merge_access_level: 40 });
  assert.equal(res.status, 201);

  const d = await s.clone(s.developer, 'pass-dev-1');
  d.git(['checkout', '-q', '1-stable']);
  d.write('b', '2').commit('two');
  // an update of 1-stable
  await assert.rejects(git(d.dir, ['push', 'origin', '1-stable']), /remote: You are not allowed to push code to protected branches on this project\./);
  assert.equal(bareGit(s.bare, ['rev-parse', '1-stable']).trim(), one);
  // the creation of 2-stable (no merge right either)
  await assert.rejects(git(d.dir, ['push', 'origin', 'HEAD:2-stable']), /remote: You are not allowed to create protected branches on this project\./);
  // a branch the wildcard does not match
  await git(d.dir, ['push', '-q', 'origin', 'HEAD:stable-2']);
  // one push, several refs: each refused ref says why, none moves (git's atomicity per hook)
  await assert.rejects(
    git(d.dir, ['push', 'origin', 'HEAD:1-stable', 'HEAD:topic']),
    /You are not allowed to push code to protected branches on this project\./,
  );
  assert.equal(
    bareGit(s.bare, ['for-each-ref', '--format=%(refname)', 'refs/heads/']).trim().split('\n').sort().join(' '),
    'refs/heads/1-stable refs/heads/main refs/heads/stable-2',
  );

  // a second rule that lets Developers push 1-stable: the most permissive wins
  assert.equal((await s.api('POST', '/protected_branches', { name: '1-stable', push_access_level: 30 })).status, 201);
  await git(d.dir, ['push', '-q', 'origin', '1-stable']);
  assert.equal(bareGit(s.bare, ['rev-parse', '1-stable']).trim(), d.git(['rev-parse', 'HEAD']));
  const evs = (await pushEvents(s.c)).filter((e: any) => e.event_name === 'push');
  assert.deepEqual(
    evs.slice(-1).map((e: any) => [e.ref, e.ref_protected]),
    [['refs/heads/1-stable', true]],
  );

  // force push: refused while no matching rule allows it, then allowed
  d.git(['commit', '-q', '--amend', '-m', 'rewritten']);
  await assert.rejects(git(d.dir, ['push', '--force', 'origin', '1-stable']), /You are not allowed to force push code to a protected branch on this project\./);
  assert.equal((await s.api('PATCH', '/protected_branches/1-stable', { allow_force_push: true })).status, 200);
  await git(d.dir, ['push', '-q', '--force', 'origin', '1-stable']);
  assert.equal(bareGit(s.bare, ['rev-parse', '1-stable']).trim(), d.git(['rev-parse', 'HEAD']));

  // deleting: a Developer is told only maintainers may, a Maintainer that it is done on the web; the default branch never
  await assert.rejects(
    git(d.dir, ['push', 'origin', ':1-stable']),
    /You are not allowed to delete protected branches from this project\. Only a project maintainer or owner can delete a protected branch\./,
  );
  await assert.rejects(git(m.dir, ['push', 'origin', ':1-stable']), /You can only delete protected branches using the web interface\./);
  await assert.rejects(git(m.dir, ['push', 'origin', ':main']), /The default branch of a project cannot be deleted\./);
  assert.match(bareGit(s.bare, ['for-each-ref', 'refs/heads/1-stable']), /1-stable/);

  // unprotected: the Developer deletes it
  assert.equal((await s.api('DELETE', '/protected_branches/1-stable')).status, 204);
  assert.equal((await s.api('DELETE', `/protected_branches/${encodeURIComponent('*-stable')}`)).status, 204);
  await git(d.dir, ['push', '-q', 'origin', ':1-stable']);
  assert.equal(bareGit(s.bare, ['for-each-ref', 'refs/heads/1-stable']), '');
});

test('protected tags over git: creation needs create access, updates and deletions are refused with GitLab messages', async (t) => {
  const s = await setup(t);
  const m = await s.clone(s.maintainer, 'pass-maint-1');
  m.git(['checkout', '-q', '-b', 'main']);
  m.write('a', '1').commit('one');
  await git(m.dir, ['push', '-q', 'origin', 'main']);
  assert.equal((await s.api('POST', '/protected_tags', { name: 'v*', create_access_level: 40 })).status, 201);

  const d = await s.clone(s.developer, 'pass-dev-1');
  d.git(['tag', 'v1.0']);
  await assert.rejects(git(d.dir, ['push', 'origin', 'v1.0']), /remote: You are not allowed to create this tag as it is protected\./);
  assert.equal(bareGit(s.bare, ['tag']), '');
  // an unprotected tag
  d.git(['tag', 'rc1']);
  await git(d.dir, ['push', '-q', 'origin', 'rc1']);

  m.git(['tag', 'v1.0']);
  await git(m.dir, ['push', '-q', 'origin', 'v1.0']);
  const tagPush = (await pushEvents(s.c)).filter((e: any) => e.event_name === 'tag_push').map((e: any) => [e.ref, e.ref_protected]);
  assert.deepEqual(tagPush, [
    ['refs/tags/rc1', false],
    ['refs/tags/v1.0', true],
  ]);
  m.write('b', '2').commit('two');
  m.git(['tag', '-f', 'v1.0']);
  await assert.rejects(git(m.dir, ['push', '--force', 'origin', 'v1.0']), /Protected tags cannot be updated\./);
  await assert.rejects(
    git(d.dir, ['push', 'origin', ':v1.0']),
    /You are not allowed to delete protected tags from this project\. Only a project maintainer or owner can delete a protected tag\./,
  );
  await assert.rejects(git(m.dir, ['push', 'origin', ':v1.0']), /You can only delete protected tags using the web interface\./);
  assert.equal(bareGit(s.bare, ['tag']).trim().split('\n').sort().join(' '), 'rc1 v1.0');
});
