// References in the markdown of pages: a merge request's description and its notes link issues, merge
// requests and labels, redacted for the viewer (a confidential issue for a stranger) as the API does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nowIso } from '../../src/lib/time.ts';
import { buildTestApp } from '../helpers/build-app.ts';
import { workTree } from '../helpers/git.ts';
import { webGet, webSignIn } from '../helpers/web.ts';

test('a merge request page links the references of its description and notes, redacted for the viewer', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const dev = await seed.user({ username: 'devon' });
  const stranger = await seed.user({ username: 'stranger' });
  const group = await seed.group({ path: 'grp', visibility: 'public' });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'public', path: 'app' });
  await seed.member({ project }, dev, 30);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\n').commit('Initial');
  wt.checkout('feature', true);
  wt.write('f.txt', 'feature\n').commit('Feature work');
  wt.checkout('main');
  wt.push();
  const now = nowIso();
  const open = await c.db.kysely
    .insertInto('issues')
    .values({ project_id: project.id, iid: 1, title: 'Crash on <start>', state: 'opened', author_id: null, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  await c.db.kysely
    .insertInto('issues')
    .values({ project_id: project.id, iid: 2, title: 'Embargoed flaw', confidential: 1, state: 'opened', author_id: null, created_at: now, updated_at: now })
    .execute();
  const headers = (await seed.token(dev)).headers;
  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Fix the crash', description: 'Fixes #1 and #2, follows `#3`.' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = created.json() as { iid: number; id: number };
  const note = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/notes`,
    headers,
    payload: { body: 'Same as !1, cc @devon' },
  });
  assert.equal(note.statusCode, 201, note.body);

  const url = `/grp/app/-/merge_requests/${mr.iid}`;
  const issueLink = `<a href="http://hearth.test/grp/app/-/issues/1" data-reference-type="issue" data-original="#1" data-link="false" data-link-reference="false" data-project="${project.id}" data-issue="${open.id}" data-project-path="grp/app" data-iid="1" data-issue-type="issue" data-container="body" data-placement="top" title="Crash on &lt;start&gt;" class="gfm gfm-issue">#1</a>`;
  for (const [who, sees] of [
    [dev, true],
    [stranger, false],
    [null, false],
  ] as const) {
    const page = await webGet(app, url, who ? await webSignIn(app, who.username) : null);
    assert.equal(page.statusCode, 200, page.body.slice(0, 300));
    assert.ok(page.body.includes(`<p>Fixes ${issueLink} and `), who?.username ?? 'anonymous');
    assert.equal(page.body.includes('Embargoed flaw'), sees, who?.username ?? 'anonymous');
    assert.equal(/ and <a href="[^"]+\/issues\/2" /.test(page.body), sees);
    if (!sees) assert.ok(page.body.includes(' and #2, follows <code>#3</code>.</p>'));
    assert.match(
      page.body,
      new RegExp(
        `Same as <a href="http://hearth.test/grp/app/-/merge_requests/${mr.iid}" data-reference-type="merge_request" [^>]*title="Fix the crash" class="gfm gfm-merge_request">!1</a>, cc <a href="http://hearth.test/devon" data-reference-type="user"`,
      ),
    );
  }
});
