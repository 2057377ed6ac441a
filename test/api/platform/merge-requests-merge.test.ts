// Merging merge requests for real (lib/api/merge_requests.rb merge, rebase, merge_ref,
// cancel_merge_when_pipeline_succeeds): the target branch moves to a real merge or squash commit made
// without a working copy, checked with git; permissions, sha mismatch, conflicts found by the
// background check, rebase, the merge ref, auto-merge, fast-forward merges, the refresh after pushes,
// and the events written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { bareGit, runGit, tmpDir, workTree } from '../../helpers/git.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { REBASE_ERROR } from '../../../src/domain/merge-requests/merge.service.ts';
import { detailedMergeStatus } from '../../../src/domain/merge-requests/merge-status.ts';
import { gitCommands } from '../../../src/metrics/registry.ts';

const T0 = 1_700_000_000;

/**
 * main: c1; feature: c1 → f1 (new file, README line 1); clash: c1 → x1 (README line 3, as main does differently);
 * behind: c1 → b1 (b.txt); main then moves: c1 → m1 (README line 3).
 */
async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const tag = Math.random().toString(36).slice(2, 7);
  const dev = await seed.user({ name: 'Dee Developer', username: `dee${tag}` });
  const maintainer = await seed.user({ name: 'Mae Maintainer', username: `mae${tag}` });
  const reporter = await seed.user({ name: 'Rey Reporter', username: `rey${tag}` });
  const stranger = await seed.user({ name: 'Stan Stranger', username: `stan${tag}` });
  const group = await seed.group({ visibility: 'private', path: `grp-${tag}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, reporter, 20);
  const wt = workTree(t, dir);
  const c1 = wt.write('README.md', 'one\ntwo\nthree\n').commit('Initial', { time: T0 });
  wt.checkout('feature', true);
  const f1 = wt
    .write('f.txt', 'f\n')
    .write('README.md', 'ONE\ntwo\nthree\n')
    .commit('Feature work', { time: T0 + 100, author: { name: 'Dee Developer', email: 'dee@example.com' } });
  wt.checkout('main').checkout('clash', true);
  const x1 = wt.write('README.md', 'one\ntwo\ntres\n').commit('Clashing work', { time: T0 + 200 });
  wt.checkout('main').checkout('behind', true);
  const b1 = wt.write('b.txt', 'b\n').commit('Behind work', { time: T0 + 300, author: { name: 'Grace Hopper', email: 'grace@example.com' } });
  wt.checkout('main');
  const m1 = wt.write('README.md', 'one\ntwo\nTHREE\n').commit('Main moves', { time: T0 + 400 });
  wt.push();
  const tokens = {
    dev: (await seed.token(dev)).headers,
    maintainer: (await seed.token(maintainer)).headers,
    reporter: (await seed.token(reporter)).headers,
    stranger: (await seed.token(stranger)).headers,
  };
  const base = `/api/v4/projects/${project.id}/merge_requests`;
  const create = async (source: string, title = `Merge ${source}`, extra: Record<string, unknown> = {}) => {
    const r = await ta.app.inject({
      method: 'POST',
      url: base,
      headers: tokens.dev,
      payload: { source_branch: source, target_branch: 'main', title, ...extra },
    });
    assert.equal(r.statusCode, 201, r.body);
    return r.json() as { id: number; iid: number; sha: string };
  };
  const head = (ref: string) => bareGit(dir, ['rev-parse', ref]).trim();
  return { ...ta, project, group, dir, wt, dev, maintainer, reporter, stranger, tokens, base, create, head, shas: { c1, f1, x1, b1, m1 } };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function setSettings(s: Setup, values: Record<string, unknown>) {
  const row = await s.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', s.project.id).executeTakeFirstOrThrow();
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), ...values }) })
    .where('id', '=', s.project.id)
    .execute();
}

const project = (s: Setup) => s.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', s.project.id).executeTakeFirstOrThrow();

const row = (s: Setup, id: number) => s.c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function events(s: Setup): Promise<any[]> {
  const rows = await s.c.db.kysely.selectFrom('jobs').select(['payload']).where('kind', '=', 'system_event').orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.payload));
}

test('a Maintainer merges: a real two-parent merge commit on main with GitLab’s message, merged state, events; a second merge is refused', async (t) => {
  const s = await setup(t);
  const mr = await s.create('feature', 'Add feature');
  const before = (await events(s)).length;
  const r = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(r.statusCode, 200, r.body);
  const body = r.json();
  const main = s.head('refs/heads/main');
  assert.notEqual(main, s.shas.m1);
  assert.equal(bareGit(s.dir, ['rev-parse', `${main}^1`]).trim(), s.shas.m1);
  assert.equal(bareGit(s.dir, ['rev-parse', `${main}^2`]).trim(), s.shas.f1);
  assert.equal(
    bareGit(s.dir, ['show', '-s', '--format=%an <%ae>|%cn|%B', main]).trim(),
    `Mae Maintainer <${s.maintainer.email}>|Mae Maintainer|Merge branch 'feature' into 'main'\n\nAdd feature\n\nSee merge request ${s.group.full_path}/app!${mr.iid}`,
  );
  assert.equal(bareGit(s.dir, ['show', `${main}:README.md`]), 'ONE\ntwo\nTHREE\n');
  assert.equal(bareGit(s.dir, ['show', `${main}:f.txt`]), 'f\n');
  assert.equal(body.state, 'merged');
  assert.equal(body.merge_commit_sha, main);
  assert.equal(body.squash_commit_sha, null);
  assert.equal(body.merge_user.id, s.maintainer.id);
  assert.equal(body.merged_by.id, s.maintainer.id);
  assert.match(body.merged_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(body.detailed_merge_status, 'not_open');
  assert.equal(body.sha, s.shas.f1);
  // the source branch stays unless asked
  assert.equal(s.head('refs/heads/feature'), s.shas.f1);
  const stored = await row(s, mr.id);
  assert.equal(stored.state, 'merged');
  assert.equal(stored.merge_commit_sha, main);
  assert.equal(stored.merge_user_id, s.maintainer.id);
  const states = await s.c.db.kysely.selectFrom('resource_state_events').select(['state', 'user_id']).where('merge_request_id', '=', mr.id).execute();
  assert.deepEqual(states.at(-1), { state: 'merged', user_id: s.maintainer.id });
  const after = (await events(s)).slice(before);
  const push = after.find((e) => e.event_name === 'push');
  assert.equal(push.ref, 'refs/heads/main');
  assert.equal(push.before, s.shas.m1);
  assert.equal(push.after, main);
  assert.equal(push.user_id, s.maintainer.id);
  assert.deepEqual(after.find((e) => e.event_name === 'repository_update').changes, [{ before: s.shas.m1, after: main, ref: 'refs/heads/main' }]);
  const merged = after.filter((e) => e.object_kind === 'merge_request');
  assert.equal(merged.length, 1);
  assert.equal(merged[0].object_attributes.action, 'merge');
  assert.equal(merged[0].object_attributes.state, 'merged');
  assert.equal(merged[0].object_attributes.merge_commit_sha, main);
  assert.equal(merged[0].user.id, s.maintainer.id);

  const again = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(again.statusCode, 405);
  assert.deepEqual(again.json(), { message: '405 Method Not Allowed' });
  await s.c.merges.idle();
});

test('who may merge: 401 for a Developer into a protected branch, a Reporter and anonymous, 404 for a stranger; a Developer merges into an unprotected branch', async (t) => {
  const s = await setup(t);
  const mr = await s.create('feature');
  const put = (headers: Record<string, string>, payload?: object) => s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers, payload });
  for (const who of [s.tokens.dev, s.tokens.reporter]) {
    const r = await put(who);
    assert.equal(r.statusCode, 401);
    assert.deepEqual(r.json(), { message: '401 Unauthorized' });
  }
  assert.equal((await put({})).statusCode, 401);
  const stranger = await put(s.tokens.stranger);
  assert.equal(stranger.statusCode, 404);
  assert.deepEqual(stranger.json(), { message: '404 Project Not Found' });
  const missing = await s.app.inject({ method: 'PUT', url: `${s.base}/999/merge`, headers: s.tokens.maintainer });
  assert.equal(missing.statusCode, 404);
  // bad input
  const bad = await put(s.tokens.maintainer, { squash: 'perhaps' });
  assert.equal(bad.statusCode, 400);
  assert.equal((await row(s, mr.id)).state, 'opened');
  assert.equal(s.head('refs/heads/main'), s.shas.m1);

  // into an unprotected branch a Developer may merge
  const r = await s.app.inject({
    method: 'POST',
    url: s.base,
    headers: s.tokens.dev,
    payload: { source_branch: 'behind', target_branch: 'clash', title: 'Into clash' },
  });
  assert.equal(r.statusCode, 201, r.body);
  const ok = await s.app.inject({ method: 'PUT', url: `${s.base}/${r.json().iid}/merge`, headers: s.tokens.dev });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(bareGit(s.dir, ['rev-parse', 'refs/heads/clash^2']).trim(), s.shas.b1);
  await s.c.merges.idle();
});

test('sha must be the source head (409), then merges; squash with a merge commit and the source branch removed', async (t) => {
  const s = await setup(t);
  const mr = await s.create('feature', 'Squash me');
  const wrong = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer, payload: { sha: s.shas.c1 } });
  assert.equal(wrong.statusCode, 409);
  assert.deepEqual(wrong.json(), { message: `SHA does not match HEAD of source branch: ${s.shas.f1}` });
  assert.equal((await row(s, mr.id)).state, 'opened');
  assert.equal(s.head('refs/heads/main'), s.shas.m1);

  const r = await s.app.inject({
    method: 'PUT',
    url: `${s.base}/${mr.iid}/merge`,
    headers: s.tokens.maintainer,
    payload: { sha: s.shas.f1, squash: true, should_remove_source_branch: true, merge_commit_message: 'Custom merge message' },
  });
  assert.equal(r.statusCode, 200, r.body);
  const body = r.json();
  const main = s.head('refs/heads/main');
  const squash = bareGit(s.dir, ['rev-parse', `${main}^2`]).trim();
  assert.equal(body.merge_commit_sha, main);
  assert.equal(body.squash_commit_sha, squash);
  assert.equal(body.squash, true);
  assert.equal(bareGit(s.dir, ['rev-parse', `${main}^1`]).trim(), s.shas.m1);
  // the squash commit: one commit on the old target, by the merge request's author, titled by the merge request
  assert.equal(bareGit(s.dir, ['show', '-s', '--format=%P|%an|%cn|%B', squash]).trim(), `${s.shas.m1}|Dee Developer|Mae Maintainer|Squash me`);
  assert.equal(bareGit(s.dir, ['show', '-s', '--format=%B', main]).trim(), 'Custom merge message');
  assert.equal(bareGit(s.dir, ['rev-parse', `${squash}^{tree}`]).trim(), bareGit(s.dir, ['rev-parse', `${main}^{tree}`]).trim());
  // the source branch is gone
  assert.equal(bareGit(s.dir, ['branch', '--list', 'feature']).trim(), '');
  const stored = await row(s, mr.id);
  assert.equal(JSON.parse(stored.merge_params).should_remove_source_branch, true);
  await s.c.merges.idle();
});

test('a conflicting merge request shows conflict after the background check; merging is refused (422), and merge_ref answers 400', async (t) => {
  const s = await setup(t);
  const mr = await s.create('clash');
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  const stored = await row(s, mr.id);
  assert.equal(stored.merge_status, 'cannot_be_merged');
  const got = await s.app.inject({ method: 'GET', url: `${s.base}/${mr.iid}`, headers: s.tokens.dev });
  assert.equal(got.json().detailed_merge_status, 'conflict');
  assert.equal(got.json().merge_status, 'cannot_be_merged');
  assert.equal(got.json().has_conflicts, true);
  const r = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(r.statusCode, 422);
  assert.deepEqual(r.json(), { message: 'Branch cannot be merged' });
  assert.equal((await row(s, mr.id)).state, 'opened');
  const ref = await s.app.inject({ method: 'GET', url: `${s.base}/${mr.iid}/merge_ref`, headers: s.tokens.dev });
  assert.equal(ref.statusCode, 400);
  assert.deepEqual(ref.json(), { message: 'Merge request is not mergeable' });
  // the head ref GitLab keeps for every merge request
  assert.equal(s.head(`refs/merge-requests/${mr.iid}/head`), s.shas.x1);

  // a clean one becomes mergeable; merge_ref is the merge commit git would make
  const clean = await s.create('feature');
  s.c.merges.queueRecheck([clean.id]);
  await s.c.merges.idle();
  assert.equal((await row(s, clean.id)).merge_status, 'can_be_merged');
  const ok = await s.app.inject({ method: 'GET', url: `${s.base}/${clean.iid}/merge_ref`, headers: s.tokens.dev });
  assert.equal(ok.statusCode, 200);
  const commit = ok.json().commit_id;
  assert.deepEqual(ok.json(), { commit_id: s.head(`refs/merge-requests/${clean.iid}/merge`) });
  assert.equal(bareGit(s.dir, ['show', '-s', '--format=%P', commit]).trim(), `${s.shas.m1} ${s.shas.f1}`);
  assert.equal(s.head('refs/heads/main'), s.shas.m1);
  const detail = await s.app.inject({ method: 'GET', url: `${s.base}/${clean.iid}`, headers: s.tokens.dev });
  assert.equal(detail.json().detailed_merge_status, 'mergeable');
});

test('not mergeable states answer 405: draft, closed, unresolved discussions when required; approvals required', async (t) => {
  const s = await setup(t);
  const draft = await s.create('feature', 'Draft: not yet');
  const r = await s.app.inject({ method: 'PUT', url: `${s.base}/${draft.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(r.statusCode, 405);
  assert.deepEqual(r.json(), { message: '405 Method Not Allowed' });
  const closed = await s.create('behind', 'Closed one');
  const close = await s.app.inject({ method: 'PUT', url: `${s.base}/${closed.iid}`, headers: s.tokens.dev, payload: { state_event: 'close' } });
  assert.equal(close.statusCode, 200);
  assert.equal((await s.app.inject({ method: 'PUT', url: `${s.base}/${closed.iid}/merge`, headers: s.tokens.maintainer })).statusCode, 405);
  await setSettings(s, { approvals_before_merge: 1 });
  const other = await s.create('clash', 'Needs approval');
  assert.equal((await s.app.inject({ method: 'PUT', url: `${s.base}/${other.iid}/merge`, headers: s.tokens.maintainer })).statusCode, 405);
  assert.equal(s.head('refs/heads/main'), s.shas.m1);
  await s.c.merges.idle();
});

test('rebase: 202 and the source branch replayed onto main in the background (authors kept); refused without push access; a conflict leaves merge_error', async (t) => {
  const s = await setup(t);
  const mr = await s.create('behind');
  const denied = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/rebase`, headers: s.tokens.reporter });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { message: '403 Forbidden - Cannot push to source branch' });
  const r = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/rebase`, headers: s.tokens.dev, payload: { skip_ci: true } });
  assert.equal(r.statusCode, 202);
  assert.deepEqual(r.json(), { rebase_in_progress: true });
  await s.c.merges.idle();
  const headSha = s.head('refs/heads/behind');
  assert.notEqual(headSha, s.shas.b1);
  assert.equal(bareGit(s.dir, ['rev-parse', `${headSha}^`]).trim(), s.shas.m1);
  assert.equal(bareGit(s.dir, ['show', '-s', '--format=%an|%at|%cn|%s', headSha]).trim(), `Grace Hopper|${T0 + 300}|Dee Developer|Behind work`);
  const stored = await row(s, mr.id);
  assert.equal(stored.sha, headSha);
  assert.equal(stored.rebase_in_progress, 0);
  assert.equal(stored.merge_error, null);
  const got = await s.app.inject({ method: 'GET', url: `${s.base}/${mr.iid}?include_rebase_in_progress=true`, headers: s.tokens.dev });
  assert.equal(got.json().sha, headSha);

  const clash = await s.create('clash');
  const c2 = await s.app.inject({ method: 'PUT', url: `${s.base}/${clash.iid}/rebase`, headers: s.tokens.dev });
  assert.equal(c2.statusCode, 202);
  await s.c.merges.idle();
  assert.equal(s.head('refs/heads/clash'), s.shas.x1);
  assert.equal((await row(s, clash.id)).merge_error, REBASE_ERROR);
  assert.equal((await row(s, clash.id)).rebase_in_progress, 0);
});

test('fast-forward merge method: need_rebase until rebased, then main moves to the source head without a merge commit', async (t) => {
  const s = await setup(t);
  await setSettings(s, { merge_method: 'ff' });
  const mr = await s.create('behind');
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  const got = await s.app.inject({ method: 'GET', url: `${s.base}/${mr.iid}`, headers: s.tokens.dev });
  assert.equal(got.json().detailed_merge_status, 'need_rebase');
  const checked = await row(s, mr.id);
  assert.equal(checked.merge_status, 'can_be_merged');
  assert.equal(checked.fast_forward_possible, 0);
  assert.equal(detailedMergeStatus(checked, await s.c.merges.facts(checked, await project(s))), 'need_rebase');
  const refused = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(refused.statusCode, 422);
  assert.deepEqual(refused.json(), { message: 'Branch cannot be merged' });
  assert.equal((await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/rebase`, headers: s.tokens.dev })).statusCode, 202);
  await s.c.merges.idle();
  const rebased = s.head('refs/heads/behind');
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  const again = await row(s, mr.id);
  assert.equal(again.fast_forward_possible, 1);
  assert.equal(detailedMergeStatus(again, await s.c.merges.facts(again, await project(s))), 'mergeable');
  const gotAgain = await s.app.inject({ method: 'GET', url: `${s.base}/${mr.iid}`, headers: s.tokens.dev });
  assert.equal(gotAgain.json().detailed_merge_status, 'mergeable');
  const r = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(s.head('refs/heads/main'), rebased);
  assert.equal(r.json().merge_commit_sha, null);
  assert.equal(r.json().state, 'merged');
  await s.c.merges.idle();
});

test('merge_when_pipeline_succeeds: a draft keeps auto-merge set (cancel → 201, again → 406); a mergeable one merges at once', async (t) => {
  const s = await setup(t);
  const draft = await s.create('feature', 'Draft: later');
  const r = await s.app.inject({
    method: 'PUT',
    url: `${s.base}/${draft.iid}/merge`,
    headers: s.tokens.maintainer,
    payload: { merge_when_pipeline_succeeds: true },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().merge_when_pipeline_succeeds, true);
  assert.equal(r.json().state, 'opened');
  assert.equal(r.json().merge_user.id, s.maintainer.id);
  const dev = await s.app.inject({ method: 'POST', url: `${s.base}/${draft.iid}/cancel_merge_when_pipeline_succeeds`, headers: s.tokens.reporter });
  assert.equal(dev.statusCode, 401);
  const cancel = await s.app.inject({ method: 'POST', url: `${s.base}/${draft.iid}/cancel_merge_when_pipeline_succeeds`, headers: s.tokens.maintainer });
  assert.equal(cancel.statusCode, 201, cancel.body);
  assert.equal(cancel.json().merge_when_pipeline_succeeds, false);
  assert.equal(cancel.json().merge_user, null);
  const again = await s.app.inject({ method: 'POST', url: `${s.base}/${draft.iid}/cancel_merge_when_pipeline_succeeds`, headers: s.tokens.maintainer });
  assert.equal(again.statusCode, 406);
  assert.deepEqual(again.json(), { message: '406 Not Acceptable' });

  const ready = await s.create('behind', 'Ready');
  const now = await s.app.inject({ method: 'PUT', url: `${s.base}/${ready.iid}/merge`, headers: s.tokens.maintainer, payload: { auto_merge: true } });
  assert.equal(now.statusCode, 200, now.body);
  assert.equal(now.json().state, 'merged');
  assert.equal(s.head('refs/heads/main^2'), s.shas.b1);
  await s.c.merges.idle();

  // auto-merge set on a draft merges once a check finds it ready, as the user who set it
  const waiting = await s.app.inject({
    method: 'PUT',
    url: `${s.base}/${draft.iid}/merge`,
    headers: s.tokens.maintainer,
    payload: { merge_when_pipeline_succeeds: true },
  });
  assert.equal(waiting.json().merge_when_pipeline_succeeds, true);
  const ready2 = await s.app.inject({ method: 'PUT', url: `${s.base}/${draft.iid}`, headers: s.tokens.dev, payload: { title: 'Later' } });
  assert.equal(ready2.statusCode, 200);
  s.c.merges.queueRecheck([draft.id]);
  await s.c.merges.idle();
  const done = await row(s, draft.id);
  assert.equal(done.state, 'merged');
  assert.equal(done.merge_user_id, s.maintainer.id);
  assert.equal(s.head('refs/heads/main^2'), s.shas.f1);
});

/**
 * `behind` merged into main by hand in the work tree and pushed straight to the bare repository, then the
 * refresh the push path runs after a change of refs (by the Maintainer).
 */
async function mergeBehindByHand(s: Awaited<ReturnType<typeof setup>>): Promise<void> {
  s.wt.git(['fetch', '-q', 'origin']);
  s.wt.checkout('main').git(['reset', '-q', '--hard', 'origin/main']);
  s.wt.git(['merge', '-q', '--no-edit', 'origin/behind'], { GIT_AUTHOR_DATE: `@${T0 + 900} +0000`, GIT_COMMITTER_DATE: `@${T0 + 900} +0000` });
  const manual = s.wt.git(['rev-parse', 'HEAD']);
  s.wt.push('main');
  await s.c.merges.refreshAfterPush(s.project, s.maintainer, s.c.repos.repository(s.project), [{ before: s.shas.m1, after: manual, ref: 'refs/heads/main' }]);
}

test('after pushes: a moved source branch updates sha and unchecks; a push of the source into main marks the merge request merged', async (t) => {
  const s = await setup(t);
  const mr = await s.create('feature');
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  assert.equal((await row(s, mr.id)).merge_status, 'can_be_merged');
  s.wt.checkout('feature');
  const f2 = s.wt.write('g.txt', 'g\n').commit('More feature work');
  // a push through the repository service (the API's branch write path) refreshes: create a file on the branch
  const put = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.project.id}/repository/files/h.txt`,
    headers: s.tokens.dev,
    payload: { branch: 'feature', content: 'h\n', commit_message: 'Add h' },
  });
  assert.equal(put.statusCode, 201, put.body);
  const tip = s.head('refs/heads/feature');
  await s.c.merges.idle();
  const stored = await row(s, mr.id);
  assert.equal(stored.sha, tip);
  assert.equal(stored.merge_status, 'can_be_merged');
  assert.notEqual(f2, tip);
  // the source head reaches main through a branch write (a Maintainer creates nothing: the merge is manual)
  const other = await s.create('behind', 'Merged by hand');
  await mergeBehindByHand(s);
  await s.c.merges.idle();
  const merged = await row(s, other.id);
  assert.equal(merged.state, 'merged');
  assert.equal(merged.merge_user_id, s.maintainer.id);
  // the other one, into the moved main, was rechecked
  assert.equal((await row(s, mr.id)).state, 'opened');
  assert.equal((await row(s, mr.id)).merge_status, 'can_be_merged');
});

test('after pushes: merge requests into the branch already unchecked are left as they are, and one the push merged is still marked merged', async (t) => {
  const s = await setup(t);
  const other = await s.create('behind', 'Merged by hand');
  await s.c.merges.idle();
  await s.c.db.kysely.updateTable('merge_requests').set({ merge_status: 'unchecked', fast_forward_possible: null }).execute();
  const before = await s.c.db.kysely.selectFrom('merge_requests').selectAll().orderBy('id').execute();
  await mergeBehindByHand(s);
  // in the push's own statements nothing changed (the rows were unchecked already); the job is queued
  assert.deepEqual(await s.c.db.kysely.selectFrom('merge_requests').selectAll().orderBy('id').execute(), before);
  assert.equal((await s.c.db.kysely.selectFrom('jobs').select('id').where('kind', '=', 'merge_request_refresh').execute()).length, 1);
  await s.c.merges.idle();
  const merged = await row(s, other.id);
  assert.equal(merged.state, 'merged');
  assert.equal(merged.merge_user_id, s.maintainer.id);
});

/** git processes started so far in this process */
const gitStarted = async () => (await gitCommands.get()).values.reduce((n, v) => n + v.value, 0);

test('a commit into a branch with many open merge requests: the same git work as with two, the most recently updated checked, the rest left unchecked', async (t) => {
  const s = await setup(t);
  s.c.merges.checksPerRefresh = 3;
  const feature = await s.create('feature');
  const behind = await s.create('behind');
  await s.c.merges.idle();
  const commit = async (file: string) => {
    const before = await gitStarted();
    const r = await s.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${s.project.id}/repository/commits`,
      headers: s.tokens.maintainer,
      payload: { branch: 'main', commit_message: `Add ${file}`, actions: [{ action: 'create', file_path: file, content: 'x\n' }] },
    });
    assert.equal(r.statusCode, 201, r.body);
    await s.c.merges.idle();
    return (await gitStarted()) - before;
  };
  const withTwo = await commit('two.txt');
  // 30 more open merge requests into main, updated long ago (the last one most recently)
  const template = await row(s, feature.id);
  const { id: _id, ...copy } = template;
  for (let i = 1; i <= 30; i++) {
    await s.c.db.kysely
      .insertInto('merge_requests')
      .values({ ...copy, iid: 100 + i, title: `Copy ${i}`, updated_at: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString() })
      .execute();
  }
  const withThirtyTwo = await commit('thirty-two.txt');
  assert.ok(withThirtyTwo <= withTwo + 10, `git processes of a commit: ${withTwo} with 2 open merge requests, ${withThirtyTwo} with 32`);
  const open = await s.c.db.kysely.selectFrom('merge_requests').select(['iid', 'merge_status']).where('project_id', '=', s.project.id).orderBy('iid').execute();
  const checked = (iid: number) => ({ iid, merge_status: 'can_be_merged' });
  assert.deepEqual(open, [
    checked(feature.iid),
    checked(behind.iid),
    ...Array.from({ length: 30 }, (_, i) => (i === 29 ? checked(130) : { iid: 101 + i, merge_status: 'unchecked' })),
  ]);
  // asking for one checks it
  const got = await s.app.inject({ method: 'GET', url: `${s.base}/101`, headers: s.tokens.dev });
  assert.equal(got.statusCode, 200, got.body);
  assert.equal(got.json().detailed_merge_status, 'unchecked');
  await s.c.merges.idle();
  assert.equal(
    (
      await s.c.db.kysely
        .selectFrom('merge_requests')
        .select('merge_status')
        .where('project_id', '=', s.project.id)
        .where('iid', '=', 101)
        .executeTakeFirstOrThrow()
    ).merge_status,
    'can_be_merged',
  );
  // one refresh job per commit, each done
  const refreshes = await s.c.db.kysely.selectFrom('jobs').select(['state', 'payload']).where('kind', '=', 'merge_request_refresh').orderBy('id').execute();
  assert.deepEqual(
    refreshes.map((j) => ({ state: j.state, changes: JSON.parse(j.payload).changes.map((c: { ref: string }) => c.ref) })),
    [
      { state: 'done', changes: ['refs/heads/main'] },
      { state: 'done', changes: ['refs/heads/main'] },
    ],
  );
});

test('from a fork: the source branch is fetched into the target as refs/merge-requests/<iid>/head, rebased in the fork, then merged', async (t) => {
  const s = await setup(t);
  const fork = await s.app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/fork`, headers: s.tokens.dev, payload: {} });
  assert.equal(fork.statusCode, 201, fork.body);
  const forkRow = await s.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', fork.json().id).executeTakeFirstOrThrow();
  const forkDir = s.c.repos.pathOf(forkRow);
  const fwt = workTree(t, forkDir);
  fwt.git(['checkout', '-q', '-b', 'forked', s.shas.c1]);
  const fk = fwt.write('fork.txt', 'from the fork\n').commit('Fork work', { author: { name: 'Dee Developer', email: 'dee@example.com' } });
  fwt.push('forked');
  const created = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${forkRow.id}/merge_requests`,
    headers: s.tokens.dev,
    payload: { source_branch: 'forked', target_branch: 'main', target_project_id: s.project.id, title: 'From the fork' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = created.json();
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  assert.equal(s.head(`refs/merge-requests/${mr.iid}/head`), fk);
  assert.equal((await row(s, mr.id)).merge_status, 'can_be_merged');

  const rebase = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/rebase`, headers: s.tokens.dev });
  assert.equal(rebase.statusCode, 202, rebase.body);
  await s.c.merges.idle();
  const rebased = bareGit(forkDir, ['rev-parse', 'refs/heads/forked']).trim();
  assert.equal(bareGit(forkDir, ['rev-parse', `${rebased}^`]).trim(), s.shas.m1);
  assert.equal((await row(s, mr.id)).merge_error, null);
  assert.equal((await row(s, mr.id)).sha, rebased);

  const merged = await s.app.inject({ method: 'PUT', url: `${s.base}/${mr.iid}/merge`, headers: s.tokens.maintainer, payload: { sha: rebased } });
  assert.equal(merged.statusCode, 200, merged.body);
  assert.equal(s.head('refs/heads/main^2'), rebased);
  assert.equal(s.head(`refs/merge-requests/${mr.iid}/head`), rebased);
  assert.equal(bareGit(s.dir, ['show', 'refs/heads/main:fork.txt']), 'from the fork\n');
  await s.c.merges.idle();
});

test('a merge request locked without a merge in flight (imported so, or by an earlier version) is opened by the journal replay; a rebase flagged for long is cleared', async (t) => {
  const s = await setup(t);
  const stale = await s.create('feature', 'Locked long ago');
  const recent = await s.create('behind', 'Locked just now');
  const old = new Date(Date.now() - 3_600_000).toISOString();
  await s.c.db.kysely.updateTable('merge_requests').set({ state: 'locked', rebase_in_progress: 1, updated_at: old }).where('id', '=', stale.id).execute();
  await s.c.db.kysely.updateTable('merge_requests').set({ state: 'locked', updated_at: new Date().toISOString() }).where('id', '=', recent.id).execute();
  assert.equal(await s.c.merges.clearStuckRebases(), 1);
  assert.equal((await row(s, stale.id)).rebase_in_progress, 0);
  const report = await s.c.pushes.recover();
  assert.equal(report.unlocked, 1);
  assert.equal((await row(s, stale.id)).state, 'opened');
  assert.equal((await row(s, recent.id)).state, 'locked');
  assert.equal((await s.c.pushes.recover()).unlocked, 0);
  await s.c.merges.idle();
});

test('pushes over HTTP refresh merge requests: a moved source branch gives a new sha, main pushed with the source merged marks it merged by the pusher', async (t) => {
  const s = await startTestServer(t);
  const user = await s.seed.user({ name: 'Pat Pusher', username: `pat${Math.random().toString(36).slice(2, 6)}` });
  const ns = await s.seed.namespaceOf(user);
  const { project, dir } = await s.seed.repoProject({ namespace: ns, owner: user, path: 'pushed' });
  const token = await s.seed.token(user);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\n').commit('Initial');
  wt.checkout('topic', true).write('t.txt', 't\n').commit('Topic');
  wt.checkout('main').push();
  const base = `/api/v4/projects/${project.id}/merge_requests`;
  const created = await s.app.inject({
    method: 'POST',
    url: base,
    headers: token.headers,
    payload: { source_branch: 'topic', target_branch: 'main', title: 'Topic' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = created.json();
  await s.c.merges.idle();
  const clone = tmpDir(t);
  await runGit(clone, ['clone', '-q', cloneUrl(s.base, `${ns.full_path}/pushed`, user.username, token.token), '.']);
  await runGit(clone, ['checkout', '-q', 'topic']);
  await runGit(clone, ['commit', '-q', '--allow-empty', '-m', 'More topic']);
  await runGit(clone, ['push', '-q', 'origin', 'topic']);
  const tip = bareGit(dir, ['rev-parse', 'refs/heads/topic']).trim();
  await s.c.merges.idle();
  const moved = await s.c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.equal(moved.sha, tip);
  assert.equal(moved.merge_status, 'can_be_merged');
  await runGit(clone, ['checkout', '-q', 'main']);
  await runGit(clone, ['merge', '-q', '--no-ff', '--no-edit', 'topic']);
  await runGit(clone, ['push', '-q', 'origin', 'main']);
  await s.c.merges.idle();
  const merged = await s.c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.equal(merged.state, 'merged');
  assert.equal(merged.merge_user_id, user.id);
  const got = await s.app.inject({ method: 'GET', url: `${base}/${mr.iid}`, headers: token.headers });
  assert.equal(got.json().state, 'merged');
  assert.equal(got.json().merged_by.id, user.id);
});
