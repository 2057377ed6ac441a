// The closing pattern at work: a merge request's description names the issues it closes ("Closes #1",
// a sibling project's issue, a link), kept when it is opened and edited, read by closes_issues and
// closed_by; a mention that is not a closing statement, or an issue that does not exist, closes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';

test('a merge request closes the issues its description names with the closing pattern', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
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
