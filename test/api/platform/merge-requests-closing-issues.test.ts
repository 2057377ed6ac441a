// The closing pattern at work: a merge request's description names the issues it closes ("Closes #1",
// a sibling project's issue, a link), kept when it is opened and edited, read by closes_issues and
// closed_by; a mention that is not a closing statement, or an issue that does not exist, closes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';

test('a merge request closes the issues its description names with the closing pattern', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp', visibility: 'public' });
  const { project, dir } = await seed.repoProject({ namespace: group, path: 'app', visibility: 'public' });
  const other = await seed.project({ namespace: group, path: 'other', visibility: 'public' });
  const wt = workTree(t, dir);
  wt.write('a.txt', 'a\n').commit('Initial');
  wt.checkout('feature', true);
  wt.write('b.txt', 'b\n').commit('Feature');
  wt.checkout('main');
  wt.push();
  const issue = async (projectId: number, title: string) => {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${projectId}/issues`, headers: root, payload: { title } });
    assert.equal(r.statusCode, 201, r.body);
    return r.json() as { id: number; iid: number };
  };
  const one = await issue(project.id, 'One');
  const two = await issue(project.id, 'Two');
  const three = await issue(project.id, 'Three');
  const elsewhere = await issue(other.id, 'Elsewhere');

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: root,
    payload: {
      source_branch: 'feature',
      target_branch: 'main',
      title: 'Feature',
      description: `Closes #${one.iid} and other#${elsewhere.iid}; related to #${two.iid}; fixes #99.`,
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = created.json() as { iid: number; id: number };
  const closes = async () =>
    (
      (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/closes_issues`, headers: root })).json() as {
        id: number;
      }[]
    )
      .map((i) => i.id)
      .sort((a, b) => a - b);
  assert.deepEqual(
    await closes(),
    [one.id, elsewhere.id].sort((a, b) => a - b),
  );
  // merge_requests_count: the closing merge requests the reader may read (the entity and the lists)
  const counts = async (headers: Record<string, string>) => [
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${one.iid}`, headers })).json().merge_requests_count,
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/issues?iids[]=${elsewhere.iid}`, headers })).json()[0].merge_requests_count,
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${two.iid}`, headers })).json().merge_requests_count,
  ];
  assert.deepEqual(await counts(root), [1, 1, 0]);
  // merge requests visible to project members only: an outsider reads the issues of the public project, not the count
  const put = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: root, payload: { merge_requests_access_level: 'private' } });
  assert.equal(put.statusCode, 200, put.body);
  const outsider = await seed.user({ username: 'outsider' });
  assert.deepEqual(await counts((await seed.token(outsider)).headers), [0, 0, 0]);
  await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: root, payload: { merge_requests_access_level: 'enabled' } });
  assert.deepEqual(await counts((await seed.token(outsider)).headers), [1, 1, 0]);
  const closedBy = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${one.iid}/closed_by`, headers: root });
  assert.deepEqual(
    (closedBy.json() as { id: number }[]).map((m) => m.id),
    [mr.id],
  );

  // edited: the description's statements are read again (a link to an issue of this instance counts)
  const edited = await app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}`,
    headers: root,
    payload: { description: `Resolves ${EXTERNAL_URL}/grp/app/-/issues/${three.iid}` },
  });
  assert.equal(edited.statusCode, 200, edited.body);
  assert.deepEqual(await closes(), [three.id]);
});

test('merged into the default branch, a merge request closes its issues as the merging user, with the system note and the issue hook; a push to the default branch closes what its commits name', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const { project, dir } = await seed.repoProject({ namespace: group, path: 'app', visibility: 'private' });
  const dev = await seed.user({ username: 'dev' });
  const guest = await seed.user({ username: 'guest' });
  // a Maintainer merges into the protected default branch
  await seed.member({ project }, dev, 40);
  await seed.member({ project }, guest, 10);
  const H = (await seed.token(dev)).headers;
  const wt = workTree(t, dir);
  wt.write('a.txt', 'a\n').commit('Initial');
  wt.checkout('feature', true);
  wt.write('b.txt', 'b\n').commit('Feature');
  wt.checkout('topic', true);
  wt.write('c.txt', 'c\n').commit('Topic');
  wt.checkout('main');
  wt.push();
  const issue = async (title: string, extra: Record<string, unknown> = {}) =>
    (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, headers: root, payload: { title, ...extra } })).json() as {
      id: number;
      iid: number;
    };
  const one = await issue('One');
  const two = await issue('Two');
  const byPush = await issue('Three');
  // a merge request into another branch closes nothing
  const sideways = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: H,
    payload: { source_branch: 'topic', target_branch: 'feature', title: 'Sideways', description: `Closes #${two.iid}` },
  });
  assert.equal(sideways.statusCode, 201, sideways.body);
  const mr = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: H,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Feature', description: `Closes #${one.iid}` },
  });
  assert.equal(mr.statusCode, 201, mr.body);
  const jobBefore = Number(
    (
      await c.db.kysely
        .selectFrom('jobs')
        .select((eb) => eb.fn.max('id').as('m'))
        .executeTakeFirst()
    )?.m ?? 0,
  );
  const merged = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/merge_requests/${mr.json().iid}/merge`, headers: H });
  assert.equal(merged.statusCode, 200, merged.body);
  await c.issueClosing.idle();
  const state = async (id: number) => await c.db.kysely.selectFrom('issues').select(['state', 'closed_by_id']).where('id', '=', id).executeTakeFirstOrThrow();
  assert.deepEqual(await state(one.id), { state: 'closed', closed_by_id: dev.id });
  assert.deepEqual((await state(two.id)).state, 'opened');
  const notes = await c.db.kysely
    .selectFrom('notes')
    .select(['body', 'author_id'])
    .where('noteable_type', '=', 'Issue')
    .where('noteable_id', '=', one.id)
    .orderBy('id')
    .execute();
  // the description's "Closes #1" is a mention too (written when the merge request was opened)
  assert.deepEqual(notes, [
    { body: `mentioned in merge request !${mr.json().iid}`, author_id: dev.id },
    { body: `closed via merge request !${mr.json().iid}`, author_id: dev.id },
  ]);
  const hooks = await c.db.kysely.selectFrom('jobs').select('payload').where('id', '>', jobBefore).where('kind', '=', 'system_event').execute();
  const issueHooks = hooks.map((h) => JSON.parse(h.payload)).filter((p) => p.object_kind === 'issue');
  assert.deepEqual(
    issueHooks.map((p) => [p.object_attributes.iid, p.object_attributes.action, p.user.username]),
    [[one.iid, 'close', 'dev']],
  );

  // a commit to main (the API's commits go through the one write path, as a push) saying "Fixes #3" closes it as its author
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers: H,
    payload: { branch: 'main', commit_message: `Fix the thing\n\nFixes #${byPush.iid}`, actions: [{ action: 'create', file_path: 'd.txt', content: 'd' }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  await c.issueClosing.idle();
  const pushed = await state(byPush.id);
  assert.equal(pushed.state, 'closed');
  const pushNote = await c.db.kysely
    .selectFrom('notes')
    .select('body')
    .where('noteable_type', '=', 'Issue')
    .where('noteable_id', '=', byPush.id)
    .executeTakeFirstOrThrow();
  assert.match(pushNote.body, /^closed via commit [0-9a-f]{8}$/);
  // the merge request is the one that closed it: closed_by
  const closedBy = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${one.iid}/closed_by`, headers: H });
  assert.deepEqual(
    closedBy.json().map((m: { iid: number; state: string }) => [m.iid, m.state]),
    [[mr.json().iid, 'merged']],
  );
});
