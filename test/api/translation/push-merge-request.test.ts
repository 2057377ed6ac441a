// A component with vcs=gitlab (Weblate's "GitLab merge request") on a project of this server: a push
// goes to push_branch (or weblate-<project>-<component>) and opens a merge request from it into the
// component's branch, as the pushing user; the next push updates the branch and keeps that merge request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../../helpers/build-app.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { bareGit } from '../../helpers/git.ts';
import { AS_ROOT, poComponent } from '../../helpers/translation.ts';

const REPO = '/api/components/hello/po/repository/';

async function component(ctx: TestApp) {
  return ctx.c.db.kysely.selectFrom('components').selectAll().where('slug', '=', 'po').executeTakeFirstOrThrow();
}

async function edit(ctx: TestApp, lang: string, source: string, target: string) {
  const u = await ctx.c.db.kysely
    .selectFrom('units')
    .innerJoin('languages', 'languages.id', 'units.language_id')
    .select('units.id')
    .where('languages.code', '=', lang)
    .where('units.source', '=', source)
    .executeTakeFirstOrThrow();
  const res = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${u.id}/`, headers: AS_ROOT, payload: { target: [target], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
}

async function mergeRequests(ctx: TestApp, projectId: number) {
  return (
    await ctx.c.db.kysely
      .selectFrom('merge_requests')
      .select(['iid', 'title', 'source_branch', 'target_branch', 'state', 'author_id', 'source_project_id'])
      .where('project_id', '=', projectId)
      .orderBy('id')
      .execute()
  ).map((m) => ({ ...m }));
}

test('vcs=gitlab: the component API accepts it; a push goes to the merge request branch and opens one merge request, kept on the next push', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const bare = fixture.wt.git(['config', 'remote.origin.url']);
  const mainBefore = bareGit(bare, ['rev-parse', 'main']).trim();

  const bad = await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { vcs: 'svn' } });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { vcs: ['"svn" is not a valid choice.'] }]);
  const ok = await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { vcs: 'gitlab' } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().vcs, 'gitlab');

  await edit(ctx, 'cs', 'Apple', 'Jablko');
  let res = await ctx.app.inject({ method: 'POST', url: REPO, headers: AS_ROOT, payload: { operation: 'push' } });
  assert.deepEqual([res.statusCode, res.json()], [200, { result: true }]);
  const c = await component(ctx);
  const head = bareGit(ctx.c.translation.vcs.mirrorDir(c.id), ['rev-parse', 'refs/heads/main']).trim();
  // main is untouched; the branch has the commit
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), mainBefore);
  assert.equal(bareGit(bare, ['rev-parse', 'weblate-hello-po']).trim(), head);
  assert.match(bareGit(bare, ['show', 'weblate-hello-po:po/cs.po']), /msgid "Apple"\nmsgstr "Jablko"/);
  const projectId = c.platform_project_id!;
  const expected = {
    iid: 1,
    title: 'Translations update from ' + ctx.config.externalUrl.replace(/\/+$/, '').replace(/^https?:\/\//, ''),
    source_branch: 'weblate-hello-po',
    target_branch: 'main',
    state: 'opened',
    author_id: 1,
    source_project_id: projectId,
  };
  assert.deepEqual(await mergeRequests(ctx, projectId), [expected]);
  // the status compares with the branch pushed to
  const status = (await ctx.app.inject({ method: 'GET', url: REPO, headers: AS_ROOT })).json();
  assert.deepEqual([status.needs_push, status.outgoing_commits], [false, 0]);

  // the next push moves the branch; the merge request stays the one
  await edit(ctx, 'de', 'Apple', 'Der Apfel');
  res = await ctx.app.inject({ method: 'POST', url: REPO, headers: AS_ROOT, payload: { operation: 'push' } });
  assert.deepEqual([res.statusCode, res.json()], [200, { result: true }]);
  const head2 = bareGit(ctx.c.translation.vcs.mirrorDir(c.id), ['rev-parse', 'refs/heads/main']).trim();
  assert.notEqual(head2, head);
  assert.equal(bareGit(bare, ['rev-parse', 'weblate-hello-po']).trim(), head2);
  assert.deepEqual(await mergeRequests(ctx, projectId), [expected]);

  // push_branch names the branch
  await ctx.c.db.kysely.updateTable('components').set({ push_branch: 'translations' }).where('id', '=', c.id).execute();
  await edit(ctx, 'cs', 'Hello, world!', 'Nazdar');
  res = await ctx.app.inject({ method: 'POST', url: REPO, headers: AS_ROOT, payload: { operation: 'push' } });
  assert.deepEqual([res.statusCode, res.json()], [200, { result: true }]);
  assert.deepEqual(await mergeRequests(ctx, projectId), [expected, { ...expected, iid: 2, source_branch: 'translations' }]);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), mainBefore);
});

test('vcs=git keeps pushing to the branch with no merge request', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const bare = fixture.wt.git(['config', 'remote.origin.url']);
  await edit(ctx, 'cs', 'Apple', 'Jablko');
  const res = await ctx.app.inject({ method: 'POST', url: REPO, headers: AS_ROOT, payload: { operation: 'push' } });
  assert.deepEqual(res.json(), { result: true });
  const c = await component(ctx);
  assert.match(bareGit(bare, ['show', 'main:po/cs.po']), /msgid "Apple"\nmsgstr "Jablko"/);
  assert.deepEqual(await mergeRequests(ctx, c.platform_project_id!), []);
});

test("vcs=gitlab: the merge request is the pushing Maintainer's; a project whose merge requests are off makes the push fail (28)", async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const bare = fixture.wt.git(['config', 'remote.origin.url']);
  const c = await component(ctx);
  await ctx.c.db.kysely.updateTable('components').set({ vcs: 'gitlab', push_branch: 'l10n' }).where('id', '=', c.id).execute();
  const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', c.platform_project_id!).executeTakeFirstOrThrow();
  const maintainer = await ctx.seed.user({ username: 'maint' });
  await ctx.seed.member({ project }, maintainer, 40);
  const { headers } = await ctx.seed.token(maintainer);
  const as = { host: 'weblate.test', authorization: `Token ${headers['private-token']}` };
  await edit(ctx, 'cs', 'Apple', 'Jablko');
  let res = await ctx.app.inject({ method: 'POST', url: REPO, headers: as, payload: { operation: 'push' } });
  assert.deepEqual([res.statusCode, res.json()], [200, { result: true }]);
  assert.deepEqual(
    (await mergeRequests(ctx, project.id)).map((m) => [m.iid, m.source_branch, m.target_branch, m.author_id]),
    [[1, 'l10n', 'main', maintainer.id]],
  );

  // merge requests off: the branch is pushed, the merge request can not be opened → result false, 28
  await ctx.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ merge_requests_access_level: 'disabled' }) })
    .where('id', '=', project.id)
    .execute();
  await ctx.c.db.kysely.updateTable('merge_requests').set({ state: 'closed' }).where('project_id', '=', project.id).execute();
  await edit(ctx, 'de', 'Apple', 'Der Apfel');
  res = await ctx.app.inject({ method: 'POST', url: REPO, headers: as, payload: { operation: 'push' } });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(body, { result: false, detail: 'Could not open the merge request: 403 Forbidden' });
  const head = bareGit(ctx.c.translation.vcs.mirrorDir(c.id), ['rev-parse', 'refs/heads/main']).trim();
  assert.equal(bareGit(bare, ['rev-parse', 'l10n']).trim(), head);
  const failed = await ctx.c.db.kysely.selectFrom('translation_changes').select(['action', 'target', 'user_id']).where('action', '=', 28).execute();
  assert.deepEqual(failed, [{ action: 28, target: body.detail, user_id: maintainer.id }]);
});
